"""LLM judges of answers: personalisation, pairwise against the generic answer (:mod:`.personalization`),
and privacy, one answer at a time (:mod:`.privacy`)."""
