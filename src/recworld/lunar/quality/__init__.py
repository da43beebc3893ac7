"""Data quality: statistics (no LLM), LLM ratings, the blind human sheet and rater agreement."""
