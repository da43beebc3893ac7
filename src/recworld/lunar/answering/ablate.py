"""Evidence ablations (LUNAR Table 5 and Fig. 3): how much each piece of evidence is worth to a model.

``recworld lunar ablate RUN --model M --judge J`` answers and judges the curated
context under modified evidence sets, through the same answering and judging
code as ``lunar eval`` (:func:`recworld.lunar.answering.run.evaluate_setting`). The
judge always sees the query's full rubric; only what the model is shown varies.

==============  =================================================================
variant         queries and evidence shown
==============  =================================================================
single-domain   queries whose evidence spans one domain, all of it (their Full-E)
multi-full      multi-domain queries, evidence from every relevant domain (Full-E)
multi-single    multi-domain queries, evidence of one relevant domain drawn at
                random (seeded per query) (Single-E)
k0 .. k4        multi-domain queries with exactly ``k_max`` evidence records (the
                paper's 58 with exactly 4): a seeded order of them, the first k
                shown (k=0: none)
==============  =================================================================

Each variant is written like an eval setting under
``RUN/ablate/<variant>/eval/<model>/curated/``; the report section is
:mod:`recworld.lunar.report.ablation`. A variant the queries cannot fill (no
multi-domain query, none with ``k_max`` evidence records) is not run; why is said
in ``RUN/ablate/ablate_run.json`` (:class:`AblateRun`), on the terminal and in the report.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import Field

from recworld.errors import DataError
from recworld.lunar.answering.run import Judges, context_env, evaluate_setting
from recworld.lunar.config import AblateConfig, LunarEvalConfig
from recworld.lunar.contexts import CuratedContext
from recworld.lunar.llm.policy import check_failures
from recworld.lunar.llm.session import open_llm
from recworld.lunar.schemas import BehaviourRecord, EvalInputs, Query, Rubric
from recworld.lunar.store import dataset as store
from recworld.lunar.store.outputs import EvalRun
from recworld.records import Record
from recworld.seeding import rng

_log = logging.getLogger(__name__)

ABLATE_DIR = "ablate"
ABLATE_RUN = "ablate_run.json"
SINGLE_DOMAIN, MULTI_FULL, MULTI_SINGLE = "single-domain", "multi-full", "multi-single"
K_SCALING = "k-scaling"  # the k0 .. k_max variants, skipped or run together
PARTS = (SINGLE_DOMAIN, MULTI_FULL, MULTI_SINGLE, K_SCALING)


Pairs = list[tuple[Query, Rubric]]


def _with_evidence(rubric: Rubric, ids: Sequence[str], index: dict[str, BehaviourRecord]) -> Rubric:
    domains = sorted({index[i].domain for i in ids if i in index})
    return rubric.model_copy(
        update={"evidence": rubric.evidence.model_copy(update={"record_ids": list(ids), "domains": domains})}
    )


def _is_multi(rubric: Rubric) -> bool:
    return len(set(rubric.evidence.domains)) > 1


def variants(
    pairs: Sequence[tuple[Query, Rubric]],
    records: Sequence[BehaviourRecord],
    *,
    k_max: int = 4,
    seed: int = 0,
) -> dict[str, Pairs]:
    """Every ablation variant's (query, rubric-with-modified-evidence) pairs."""
    index = {r.record_id: r for r in records}
    out: dict[str, Pairs] = {SINGLE_DOMAIN: [], MULTI_FULL: [], MULTI_SINGLE: []}
    out |= {f"k{k}": [] for k in range(k_max + 1)}
    for query, rubric in pairs:
        if not _is_multi(rubric):
            out[SINGLE_DOMAIN].append((query, rubric))
            continue
        out[MULTI_FULL].append((query, rubric))
        gen = rng(seed, "lunar", "ablate", query.query_id)
        domains = sorted(set(rubric.evidence.domains))
        kept = domains[int(gen.integers(0, len(domains)))]
        single = [i for i in rubric.evidence.record_ids if i in index and index[i].domain == kept]
        out[MULTI_SINGLE].append((query, _with_evidence(rubric, single, index)))
        ids = [i for i in rubric.evidence.record_ids if i in index]
        if len(ids) == k_max:
            order = [ids[int(j)] for j in gen.permutation(len(ids))]
            for k in range(k_max + 1):
                out[f"k{k}"].append((query, _with_evidence(rubric, order[:k], index)))
    return out


class AblateRun(Record):
    """``RUN/ablate/ablate_run.json``: what the last ``lunar ablate`` ran, what it could not run, and why."""

    schema_id: Literal["recworld.lunar.ablate_run/1"] = Field(
        default="recworld.lunar.ablate_run/1", alias="schema"
    )
    model: str
    judge: str
    k_max: int
    ran: dict[str, int]  # variant -> queries it was run on
    skipped: dict[str, str]  # single-domain, multi-full, multi-single or k-scaling -> why not

    def reasons(self) -> list[tuple[list[str], str]]:
        """(parts, why) of the parts not run, those with the same reason together, in :data:`PARTS` order."""
        order = sorted(self.skipped, key=lambda p: PARTS.index(p) if p in PARTS else len(PARTS))
        grouped: dict[str, list[str]] = {}
        for part in order:
            grouped.setdefault(self.skipped[part], []).append(part)
        return [(parts, why) for why, parts in grouped.items()]

    @classmethod
    def of(cls, root: Path) -> AblateRun | None:
        path = root / ABLATE_DIR / ABLATE_RUN
        return cls.read(path) if path.is_file() else None


MULTI_HINT = (
    "Full-E and Single-E need queries whose evidence spans two or more domains "
    "(lunar synth --min-domains 2 draws users active in several domains)"
)


def skipped_variants(
    table: Mapping[str, Pairs], pairs: Sequence[tuple[Query, Rubric]], k_max: int
) -> dict[str, str]:
    """Why each empty part of ``table`` (from :func:`variants`) could not run, by part name."""
    multi = [r for _, r in pairs if _is_multi(r)]
    out: dict[str, str] = {}
    if not pairs:
        reason = "no queries with rubrics (run lunar queries first)"
        return dict.fromkeys((SINGLE_DOMAIN, MULTI_FULL, MULTI_SINGLE, K_SCALING), reason)
    if not table[SINGLE_DOMAIN]:
        out[SINGLE_DOMAIN] = (
            f"no single-domain query: all {len(pairs)} queries' evidence spans several domains"
        )
    if not multi:
        why = f"no multi-domain query: all {len(pairs)} queries' evidence spans one domain; {MULTI_HINT}"
        out |= {MULTI_FULL: why, MULTI_SINGLE: why, K_SCALING: why}
    elif not any(table.get(f"k{k}") for k in range(k_max + 1)):
        counts = ", ".join(str(n) for n in sorted({len(r.evidence.record_ids) for r in multi}))
        out[K_SCALING] = (
            f"no multi-domain query has the {k_max} evidence records k = 0..{k_max} needs "
            f"(their evidence counts: {counts}); try a smaller --k-max"
        )
    return out


def variant_root(root: Path, variant: str) -> Path:
    return root / ABLATE_DIR / variant


def variant_config(config: AblateConfig, name: str) -> LunarEvalConfig:
    """The eval config one variant runs under: curated only, no privacy judge, in its own folder."""
    return LunarEvalConfig(
        root=variant_root(config.root, name),
        answer=config.answer,
        judge=config.judge,
        contexts=(CuratedContext.name,),
        answer_max_tokens=config.answer_max_tokens,
        seed=config.seed,
        fail_on_error=config.fail_on_error,
        privacy=False,
        timezone=config.timezone,
    )


async def ablate_async(config: AblateConfig) -> dict[str, EvalRun]:
    """Answer and judge every non-empty variant; returns each variant's run record."""
    inputs = store.load_eval_inputs(config.root, config.timezone)
    table = variants(inputs.pairs, store.records(config.root), k_max=config.k_max, seed=config.seed)
    skipped = skipped_variants(table, inputs.pairs, config.k_max)
    for part, why in skipped.items():
        _log.info("lunar ablate: not running %s: %s", part, why)
    runs: dict[str, EvalRun] = {}
    async with (
        open_llm(config.answer, config.root) as answer_llm,
        open_llm(config.judge, config.root) as judge_llm,
    ):
        judges = Judges.of(judge_llm, privacy=False)
        for name, pairs in table.items():
            if not pairs:
                continue
            eval_config = variant_config(config, name)
            env = context_env(
                eval_config, answer_llm, judge_llm, EvalInputs(pairs=pairs, users=inputs.users), None
            )
            curated = CuratedContext.from_options(eval_config.options_of(CuratedContext.name))
            runs[name] = await evaluate_setting(curated, env, judges, eval_config)
    AblateRun(
        model=config.answer.name,
        judge=config.judge.name,
        k_max=config.k_max,
        ran={name: len(table[name]) for name in runs},
        skipped=skipped,
    ).write(config.root / ABLATE_DIR / ABLATE_RUN)
    if not runs:
        why = "; ".join(f"{part}: {reason}" for part, reason in skipped.items())
        raise DataError(f"lunar ablate could not run any variant ({why})", path=config.root / "rubrics.jsonl")
    asked = sum(r.counts.asked for r in runs.values())
    check_failures("ablate", asked, [f for r in runs.values() for f in r.failures], config.fail_on_error)
    return runs
