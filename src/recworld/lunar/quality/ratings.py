"""LLM-rated data quality (paper Tables 1 and 9): log plausibility and profile consistency.

Per synthesised user, two structured calls through :class:`StructuredLLM` (cached in
``RUN/cache.sqlite``, so a rerun resumes; failures follow the failure policy):

* plausibility: record, sequence and trajectory level;
* profile consistency: affinity coherence, domain consistency, demographic compatibility
  and trajectory-profile fit.

Both calls see exactly what a human rater of the sheet sees for that history
(:func:`recworld.lunar.quality.annotate.history_content`): the profile, the weekly
summaries and the same evenly spread records (``max_records``, the annotation key's
count when a sheet was exported), so human-LLM agreement compares the same items on
the same inputs. With queries present, each query is also rated on scenario realism
and human-likeness from the same ``Request: ...`` text the sheet shows (Table 10).

``RUN/quality_ratings.jsonl`` holds one line per rated piece (scores, or the error);
``RUN/quality_ratings_run.json`` the model, counts and means (records in :mod:`.records`).
When an annotation sheet was exported, the LLM's scores on the sampled items are also
written in the long rating format to ``RUN/annotation_llm_ratings.csv`` (rater
``llm:MODEL``), next to the key, not in the sheet folder handed to raters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated

import numpy as np
from pydantic import Field

from recworld.errors import ConfigError
from recworld.io import atomic_write_jsonl, atomic_write_text
from recworld.lunar.config import HISTORY_RECORDS, RateConfig
from recworld.lunar.llm import StructuredLLM, gather_or_cancel
from recworld.lunar.llm.policy import check_failures
from recworld.lunar.llm.session import open_llm
from recworld.lunar.quality import annotate, dims
from recworld.lunar.quality.records import (
    RATINGS_FILE,
    RUN_FILE,
    Kind,
    QualityRating,
    QualityRatingsRun,
    RatingSummary,
)
from recworld.lunar.schemas import Query
from recworld.lunar.store import dataset as store
from recworld.lunar.store.outputs import StageCounts
from recworld.records import Draft

DIMENSIONS: dict[Kind, dict[str, str]] = {
    "plausibility": dims.PLAUSIBILITY,
    "profile": dims.PROFILE,
    "query": dims.QUERY,
}
Score = Annotated[int, Field(ge=1, le=5)]
LLM_SHEET_FILE = "annotation_llm_ratings.csv"


class PlausibilityScores(Draft):
    record_plausibility: Score
    sequence_coherence: Score
    trajectory_consistency: Score


class ProfileScores(Draft):
    affinity_coherence: Score
    domain_consistency: Score
    demographic_compatibility: Score
    trajectory_profile_fit: Score


class QueryScores(Draft):
    scenario_realism: Score
    human_likeness: Score


OUTPUT: dict[Kind, type[Draft]] = {
    "plausibility": PlausibilityScores,
    "profile": ProfileScores,
    "query": QueryScores,
}


def rating_prompt(kind: Kind, body: str) -> str:
    return "\n".join(
        [
            f"Rate the quality of this synthetic data on each dimension, 1 to 5 ({dims.SCALE_TEXT}).",
            dims.describe(DIMENSIONS[kind]),
            "",
            body,
            "",
            "Answer with one JSON object holding an integer score per dimension.",
        ]
    )


async def _rate(llm: StructuredLLM, kind: Kind, subject: str, body: str) -> QualityRating:
    value = await llm.structured(
        rating_prompt(kind, body), OUTPUT[kind], stage=f"rate-{kind}", key=subject, max_tokens=96
    )
    if value is None:
        return QualityRating(
            kind=kind, subject=subject, scores=None, error=llm.error_of(f"rate-{kind}", subject)
        )
    return QualityRating(kind=kind, subject=subject, scores=value.model_dump())


async def rate_all(
    llm: StructuredLLM, histories: Mapping[str, str], queries: Sequence[Query]
) -> list[QualityRating]:
    """Every history on plausibility and profile consistency (the same text), every query on realism."""
    jobs = []
    for user, text in sorted(histories.items()):
        jobs.append(_rate(llm, "plausibility", user, text))
        jobs.append(_rate(llm, "profile", user, text))
    jobs += [_rate(llm, "query", q.query_id, annotate.query_content(q.text)) for q in queries]
    return await gather_or_cancel(jobs)


def records_shown(config: RateConfig, key: annotate.AnnotationKey | None) -> int:
    """Records per history: the sheet's when one was exported, so humans and the LLM see the same."""
    sheet = key.max_records if key is not None else None
    if config.max_records is not None and sheet is not None and config.max_records != sheet:
        raise ConfigError(
            f"the annotation sheet showed {sheet} records per history; rate with --max-records {sheet} "
            "(or export the sheet again) so human and LLM raters see the same inputs"
        )
    return config.max_records or sheet or HISTORY_RECORDS


def summary(ratings: Sequence[QualityRating]) -> RatingSummary:
    """Means per dimension and the paper's two headline figures (mean of each group's dimensions)."""
    out = RatingSummary(dimensions={}, overall={}, rated={}, errors={})
    for kind, names in DIMENSIONS.items():
        done = [r.scores for r in ratings if r.kind == kind and r.scores is not None]
        out.rated[kind] = len(done)
        out.errors[kind] = sum(1 for r in ratings if r.kind == kind and r.scores is None)
        for dim in names:
            out.dimensions[dim] = float(np.mean([s[dim] for s in done])) if done else None
        per_piece = [float(np.mean([s[d] for d in names])) for s in done]
        out.overall[kind] = float(np.mean(per_piece)) if per_piece else None
    return out


async def rate_folder(config: RateConfig) -> QualityRatingsRun:
    """Rate a LUNAR folder with an LLM; write the ratings, their summary and the annotation CSV."""
    root = config.root
    queries = store.queries(root) if config.queries and (root / "queries.jsonl").exists() else []
    key = annotate.read_key(root) if (root / annotate.KEY_FILE).exists() else None
    shown = records_shown(config, key)
    timezone = config.timezone or (key.timezone if key is not None else None)
    histories = annotate.history_content(root, max_records=shown, timezone=timezone)
    async with open_llm(config.llm, root) as llm:
        ratings = await rate_all(llm, histories, queries)
    atomic_write_jsonl(root / RATINGS_FILE, [r.to_json() for r in ratings])
    run = QualityRatingsRun(
        model=config.llm.name,
        max_records=shown,
        counts=StageCounts(asked=llm.asked, failures=len(llm.failures), llm_calls=llm.calls),
        failures=list(llm.failures),
        summary=summary(ratings),
    )
    run.write(root / RUN_FILE)
    if key is not None:
        rows = annotate.llm_rating_rows(key, ratings, f"llm:{config.llm.name}")
        atomic_write_text(root / LLM_SHEET_FILE, annotate.rows_csv(rows))
    check_failures("rate", llm.asked, llm.failures, config.fail_on_error)
    return run
