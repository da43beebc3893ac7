"""Queries and their rubrics: seeded few-shot requests, per-domain evidence, effects, facts and points."""
