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
:mod:`recworld.lunar.report.ablation`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from recworld.lunar.answering.run import Judges, context_env, evaluate_setting
from recworld.lunar.config import AblateConfig, LunarEvalConfig
from recworld.lunar.contexts import CuratedContext
from recworld.lunar.llm.policy import check_failures
from recworld.lunar.llm.session import open_llm
from recworld.lunar.schemas import BehaviourRecord, EvalInputs, Query, Rubric
from recworld.lunar.store import dataset as store
from recworld.lunar.store.outputs import EvalRun
from recworld.seeding import rng

ABLATE_DIR = "ablate"
SINGLE_DOMAIN, MULTI_FULL, MULTI_SINGLE = "single-domain", "multi-full", "multi-single"


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
    asked = sum(r.counts.asked for r in runs.values())
    check_failures("ablate", asked, [f for r in runs.values() for f in r.failures], config.fail_on_error)
    return runs
