"""Synthesis: profiles, week/day/slot plans with bidirectional validation, records, release."""
