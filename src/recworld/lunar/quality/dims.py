"""The rating dimensions of the quality evaluation, shared by the LLM rater and the human sheet.

Paper Tables 1, 2, 9 and 10: behaviour histories are rated on seven dimensions (three of
log plausibility, four of profile consistency), queries on two. Humans and the LLM see the
same wording, so their scores can be compared dimension by dimension. The wording is ours.
"""

from __future__ import annotations

PLAUSIBILITY = {
    "record_plausibility": "Each record on its own is realistic: its fields, amounts, places and time of "
    "day fit the behaviour type and the person.",
    "sequence_coherence": "Records follow each other sensibly within a day and from day to day (order, "
    "gaps, travel between places, no contradictions).",
    "trajectory_consistency": "Across the weeks the behaviour forms one believable life: week themes, "
    "rhythm and records agree, and changes between weeks have a reason.",
}
PROFILE = {
    "affinity_coherence": "The interest categories, their strengths and their preference examples fit "
    "together as one person's tastes.",
    "domain_consistency": "The domains the person is active in match the profile's interests; strong "
    "interests show up, weak ones stay rare.",
    "demographic_compatibility": "Profile and weekly behaviour are compatible with the demographic record "
    "(age, occupation, location).",
    "trajectory_profile_fit": "The weekly summaries are what this profile would plausibly do.",
}
QUERY = {
    "scenario_realism": "The request describes a situation a real person could be in and would ask an "
    "assistant about.",
    "human_likeness": "The request reads as written by a person (wording, length, level of detail), "
    "not by a model.",
}
HISTORY = {**PLAUSIBILITY, **PROFILE}

SCALE_TEXT = (
    "1 = clearly unrealistic or wrong, 2 = mostly unrealistic, 3 = mixed, "
    "4 = realistic with minor flaws, 5 = fully realistic"
)


def describe(dimensions: dict[str, str]) -> str:
    return "\n".join(f"- {name}: {text}" for name, text in dimensions.items())
