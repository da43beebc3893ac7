"""Analyses that join runs with their suite's data: dataset statistics, popularity, t-SNE, case study."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from statistics import mean

import numpy as np

from recworld.lrworld.catalogue import OptionKind, get_measure
from recworld.lrworld.measure import NeuralSpec
from recworld.report import figures
from recworld.report.analysis import AnalysisOptions
from recworld.report.coverage import main_runs
from recworld.report.embedding_view import TSNE_POINTS, build_settings, embedding_panel
from recworld.report.runs import RunData
from recworld.report.suite_data import SuiteData, candidate_scores, neumf_space, suite_of
from recworld.report.tables import fmt_pct, fmt_score, label
from recworld.reportkit import DASH, Cell, Figure, Section, Table
from recworld.reportkit.figures import bars
from recworld.seeding import child_seed

__all__ = ["case_section", "dataset_section", "popularity_section", "tsne_section"]

CASES_PER_MEASURE = 1


def _suites(runs: Sequence[RunData]) -> list[SuiteData]:
    seen: dict[str, SuiteData] = {}
    for run in runs:
        suite = suite_of(run)
        if suite is not None:
            seen.setdefault(str(suite.path), suite)
    return list(seen.values())


def dataset_section(runs: Sequence[RunData], options: AnalysisOptions) -> Section | None:
    suites = _suites(runs)
    if not suites:
        return None
    rows: list[list[Cell]] = []
    series: dict[str, list[float | None]] = {}
    edges = [1, 20, 50, 100, 200, 500, 10**9]
    bins = [f"{a}–{b - 1}" if b < 10**9 else f"{a}+" for a, b in itertools.pairwise(edges)]
    for suite in suites:
        data = suite.dataset
        lengths = data.interactions.groupby("user_id").size().to_numpy()
        rows.append(
            [
                Cell(suite.name),
                Cell(f"{data.interactions['user_id'].nunique():,}"),
                Cell(f"{data.interactions['item_id'].nunique():,}"),
                Cell(f"{len(data.interactions):,}"),
                Cell(f"{lengths.mean():.1f}"),
                Cell(f"{np.median(lengths):.0f}"),
                Cell(f"{lengths.max():,}"),
                Cell(_distinct(data.items, "genres")),
                Cell(_distinct(data.items, "categories")),
            ]
        )
        counts, _ = np.histogram(lengths, bins=edges)
        series[suite.name] = [float(c) / max(1, len(lengths)) for c in counts]
    table = Table(
        key="dataset-stats",
        title="Dataset statistics",
        caption="Users, items and interactions of each suite's dataset, sequence lengths (interactions "
        "per user), and distinct genres and categories (paper Fig. 4, Table 7).",
        columns=[
            "dataset",
            "users",
            "items",
            "interactions",
            "mean length",
            "median",
            "max",
            "genres",
            "categories",
        ],
        rows=rows,
    )
    svg = bars("fig-dataset", "Users by sequence length", bins, series, ylabel="share of users")
    return Section(
        key="dataset",
        title="Dataset statistics",
        intro="What the suites were built from.",
        tables=[table],
        figures=[Figure("dataset", svg)],
    )


def _distinct(items: object, column: str) -> str:
    frame = items  # a pandas DataFrame
    if column not in getattr(frame, "columns", ()):
        return DASH
    values: set[str] = set()
    for cell in frame[column]:  # type: ignore[index]
        if isinstance(cell, list | tuple | np.ndarray):
            values.update(str(v) for v in cell)
        elif cell is not None and not (isinstance(cell, float) and math.isnan(cell)):
            values.add(str(cell))
    return f"{len(values):,}"


POPULARITY_COLUMNS = (
    "model",
    "measure",
    "n",
    "acc POP",
    "acc NON-POP",
    "non-pop among correct",
    "non-pop among wrong",
)


def popularity_section(runs: Sequence[RunData], options: AnalysisOptions) -> Section | None:
    runs = main_runs(runs)
    rows: list[list[Cell]] = []
    correct_share: dict[str, list[float | None]] = {}
    wrong_share: dict[str, list[float | None]] = {}
    labels: list[str] = []
    for run in runs:
        suite = suite_of(run)
        if suite is None:
            continue
        scales = {kind: _log_scale(counts) for kind, counts in _option_counts(suite).items()}
        for measure, stats in _popularity(run, scales).items():
            rows.append(
                [
                    Cell(run.label),
                    Cell(label(measure)),
                    Cell(str(stats["n"])),
                    Cell(fmt_score(stats["acc_pop"])),
                    Cell(fmt_score(stats["acc_nonpop"])),
                    Cell(fmt_pct(stats["nonpop_correct"])),
                    Cell(fmt_pct(stats["nonpop_wrong"])),
                ]
            )
            labels.append(f"{run.label}: {label(measure)}")
            correct_share.setdefault("correct answers", []).append(stats["nonpop_correct"])
            wrong_share.setdefault("wrong answers", []).append(stats["nonpop_wrong"])
    if not rows:
        return None
    table = Table(
        key="popularity",
        title="Popularity bias",
        caption="An item is popular (POP) when its log-frequency is at least the catalogue's mean "
        "log-frequency (paper §A.9); a user option is popular when its log-activity (interactions) is at "
        "least the users' mean. Accuracy on questions whose answer is POP or NON-POP, and the share of "
        "non-popular options among the model's correct and wrong picks (Fig. 10). Item and user measures; "
        "attribute options have no popularity here.",
        columns=POPULARITY_COLUMNS,
        rows=rows,
        left=2,
    )
    svg = bars(
        "fig-popularity",
        "Share of non-popular items among picks",
        labels,
        {**correct_share, **wrong_share},
        ylabel="share non-popular",
    )
    return Section(
        key="popularity",
        title="Popularity bias",
        intro="Do models prefer what many people consumed?",
        tables=[table],
        figures=[Figure("popularity", svg)],
    )


def _option_counts(suite: SuiteData) -> dict[OptionKind, dict[str, int]]:
    return {OptionKind.ITEM: suite.item_counts(), OptionKind.USER: suite.user_counts()}


def _log_scale(counts: dict[str, int]) -> tuple[dict[str, float], float]:
    """Log-frequencies and their mean: the POP threshold of one kind of option."""
    logs = {i: math.log1p(c) for i, c in counts.items()}
    return logs, mean(logs.values()) if logs else 0.0


def _popularity(
    run: RunData, scales: dict[OptionKind, tuple[dict[str, float], float]]
) -> dict[str, dict[str, float | None]]:
    """Per measure with item or user options: POP/NON-POP accuracy, by that kind's own popularity."""
    buckets: dict[str, dict[str, list[bool]]] = {}
    for s in run.samples:
        scale = scales.get(get_measure(s.measure).options)
        if scale is None:
            continue
        logs, threshold = scale
        if not s.scored or s.option_ids is None or not all(i in logs for i in s.option_ids):
            continue
        b = buckets.setdefault(s.measure, {"pop": [], "nonpop": [], "correct": [], "wrong": []})
        b["pop" if logs[s.option_ids[s.answer_index]] >= threshold else "nonpop"].append(s.hit)
        if s.parsed_index is not None:
            b["correct" if s.hit else "wrong"].append(logs[s.option_ids[s.parsed_index]] < threshold)
    out: dict[str, dict[str, float | None]] = {}
    for measure, b in buckets.items():
        out[measure] = {
            "n": float(len(b["pop"]) + len(b["nonpop"])),
            "acc_pop": _share(b["pop"]),
            "acc_nonpop": _share(b["nonpop"]),
            "nonpop_correct": _share(b["correct"]),
            "nonpop_wrong": _share(b["wrong"]),
        }
        out[measure]["n"] = int(out[measure]["n"] or 0)
    return out


def _share(values: list[bool]) -> float | None:
    return sum(values) / len(values) if values else None


def tsne_section(runs: Sequence[RunData], options: AnalysisOptions) -> Section | None:
    suites = _suites(runs)
    if not suites:
        return None
    found = next(((s, space) for s in suites if (space := neumf_space(s.path)) is not None), None)
    if found is None:
        return Section(
            key="tsne",
            title="Embedding t-SNE",
            empty="No suite holds a saved NeuMF space (SUITE/neumf/): "
            "it is written by builds with neural measures; rebuild the suite to draw this figure.",
        )
    suite, space = found
    build = build_settings(suite.path)
    targets = _neural_targets(runs, suite)
    drawn: list[Figure] = []
    rows: list[list[Cell]] = []
    for side, vectors, ids in (("items", space.item, space.item_ids), ("users", space.user, space.user_ids)):
        panel = embedding_panel(
            vectors, ids, targets[side], options.tsne_clusters, child_seed(build.seed, "tsne", side)
        )
        svg = figures.scatter(
            f"fig-tsne-{side}",
            f"NeuMF {side} ({suite.name}), {panel.k} clusters",
            [(f"cluster {c}", xs, ys, "o") for c, xs, ys in panel.groups],
            [("question targets", panel.target_xy[0], panel.target_xy[1])] if panel.target_xy[0].size else [],
        )
        drawn.append(Figure(f"tsne-{side}", svg))
        rows += [
            [Cell(side), Cell(str(c)), Cell(str(members)), Cell(str(shown)), Cell(str(hit))]
            for c, members, shown, hit in panel.counts
        ]
    table = Table(
        key="tsne",
        title="NeuMF clusters",
        caption=f"t-SNE of the suite's saved NeuMF space (the one the neural measures' answers were "
        f"retrieved in), items and users apart as in the paper's Fig. 8, coloured by "
        f"{options.tsne_clusters} k-means clusters (the paper's figure uses 5 for readability; "
        f"--tsne-clusters changes it) in the geometry retrieval uses: cosine, so rows are scaled to unit "
        f"length first. The build spread its question targets over {build.clusters} clusters. 'members': "
        f"vectors of the whole side in the cluster; 'shown': points drawn (at most {TSNE_POINTS} per side, "
        f"every question target among them); crosses mark question targets.",
        columns=["side", "cluster", "members", "shown", "targets"],
        rows=rows,
    )
    return Section(
        key="tsne",
        title="Embedding t-SNE",
        intro="The space the neural measures' ground truth comes from.",
        tables=[table],
        figures=drawn,
    )


def _neural_targets(runs: Sequence[RunData], suite: SuiteData) -> dict[str, set[str]]:
    """The ids the runs' neural questions were about: items (neu_item2users) and users (neu_user2items)."""
    found: dict[str, set[str]] = {"items": set(), "users": set()}
    for run in runs:
        if suite_of(run) is not suite:
            continue
        for s in run.samples:
            if not isinstance(get_measure(s.measure).builder, NeuralSpec):
                continue
            q = suite.question(s.base_id)
            if q is not None:
                found["users" if q.target.kind == "user" else "items"].add(q.target.id)
    return found


def case_section(runs: Sequence[RunData], options: AnalysisOptions) -> Section | None:
    runs = main_runs(runs)
    rows: list[list[Cell]] = []
    series: dict[str, list[float | None]] = {}
    seen: set[str] = set()
    for run in runs:
        suite = suite_of(run)
        if suite is None:
            continue
        for s in run.samples:
            if s.measure in seen or s.order != 0:
                continue
            q = suite.question(s.base_id)
            if q is None:
                continue
            seen.add(s.measure)
            name, scores = candidate_scores(suite, q)
            picks = {r.label: _pick(r, s.question_id) for r in runs}
            for i, c in enumerate(q.candidates):
                chose = ", ".join(label for label, p in picks.items() if p == i)
                rows.append(
                    [
                        Cell(label(q.measure)),
                        Cell(q.target.text),
                        Cell(chr(65 + i)),
                        Cell(c.text),
                        Cell(name),
                        Cell(fmt_score(scores[i])),
                        Cell("✓" if i == q.answer_index else ""),
                        Cell(chose),
                    ]
                )
            top = max((x for x in scores if x is not None), default=0.0) or 1.0
            padded = [None if x is None else x / top for x in scores] + [None] * 10
            series[label(q.measure)] = padded[:10]
    if not rows:
        return None
    table = Table(
        key="case-study",
        title="Case study: every candidate with its ground-truth score",
        caption="One question per measure: each candidate's score under the measure's own definition (binary "
        "cosine, rule confidence, NeuMF cosine), the answer (✓), and which runs picked it (paper Table 26).",
        columns=["measure", "target", "option", "candidate", "score", "value", "answer", "picked by"],
        rows=rows,
        left=5,
    )
    svg = bars(
        "fig-case",
        "Candidate scores relative to the best, per measure",
        [chr(65 + i) for i in range(10)],
        series,
        ylabel="score / best score",
    )
    return Section(
        key="case-study",
        title="Case study",
        intro="Why the answer is the answer.",
        tables=[table],
        figures=[Figure("case-study", svg)],
    )


def _pick(run: RunData, question_id: str) -> int | None:
    return next((s.parsed_index for s in run.samples if s.question_id == question_id), None)
