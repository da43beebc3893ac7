"""The LRWorld builder tests' helpers: synthetic datasets with known structure, checks and references."""
