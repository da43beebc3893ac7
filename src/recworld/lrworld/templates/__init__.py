"""Prompt templates, one folder per variant, one ``<measure>.txt`` per measure (see prompts.py)."""
