"""scoring package."""
