"""Answering every query under each context setting and judging it; the evidence ablations; dry-run plans."""
