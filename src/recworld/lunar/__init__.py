"""lunar package."""
