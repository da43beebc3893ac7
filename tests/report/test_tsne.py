"""The NeuMF t-SNE: the suite's own space, items and users apart, cosine clusters, 5 by default."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from helpers.runner_fakes import write_suite
from helpers.synthetic_runs import skilled, write_run
from recworld.data.dataset import Dataset
from recworld.lrworld.embeddings import SavedSpace, save_space
from recworld.mining import kmeans_pick, spherical_kmeans
from recworld.report.analyses_suite import tsne_section
from recworld.report.analysis import AnalysisOptions
from recworld.report.embedding_view import embedding_panel
from recworld.report.runs import label_runs, load_run


def test_clusters_follow_direction_not_length() -> None:
    rng = np.random.default_rng(0)
    directions = np.eye(3)
    x = np.vstack([d * s for d in directions for s in rng.uniform(0.1, 50.0, size=40)])
    x += rng.normal(scale=0.01, size=x.shape)
    labels = spherical_kmeans(x, 3, seed=0).labels
    truth = np.repeat(np.arange(3), 40)
    # Each true direction is one cluster, whatever the vectors' norms (Euclidean k-means splits by norm).
    assert all(len(set(labels[truth == k])) == 1 for k in range(3))
    assert len(set(labels)) == 3


_SMALL = st.integers(2, 4).flatmap(
    lambda d: hnp.arrays(np.float64, st.tuples(st.integers(2, 30), st.just(d)), elements=st.integers(-5, 5))
)


@settings(max_examples=12, deadline=None)
@given(
    x=_SMALL,
    k=st.integers(1, 5),
    seed=st.integers(0, 2**40),
)
def test_the_reports_clusters_are_the_builds_for_one_seed(x: np.ndarray, k: int, seed: int) -> None:
    """The figure's clusters and the build's targets' clusters are one clustering for one seed.

    The build's first picks are one prototype per cluster; marked as the figure's targets,
    each of the figure's clusters must hold exactly one, and the cluster sizes must agree.
    """
    sizes = np.bincount(spherical_kmeans(x, k, seed).labels)
    present = int((sizes > 0).sum())
    prototypes = kmeans_pick(x, k, present, seed)
    ids = np.array([f"r{i}" for i in range(len(x))])
    panel = embedding_panel(x, ids, {f"r{i}" for i in prototypes.tolist()}, k, seed)
    assert panel.k == present
    assert sorted(members for _, members, _, _ in panel.counts) == sorted(sizes[sizes > 0].tolist())
    assert [targets for *_, targets in panel.counts] == [1] * present


def test_a_side_of_identical_vectors_is_drawn_without_tsne() -> None:
    """All alike (a collapsed space): one cluster at one point, not a crash in t-SNE's PCA start."""
    panel = embedding_panel(np.ones((8, 3)), np.array([f"r{i}" for i in range(8)]), {"r2"}, 5, seed=1)
    assert panel.k == 1 and panel.counts == [(0, 8, 8, 1)]
    ((_, xs, ys),) = panel.groups
    assert xs.tolist() == [0.0] * 8 and ys.tolist() == [0.0] * 8


@pytest.fixture
def neural_suite(tmp_path: Path) -> Path:
    suite = write_suite(tmp_path / "suite", {"neu_item2users": 6, "neu_user2items": 4})
    rows = [{"user_id": f"u{u}", "item_id": f"t{i}", "timestamp": u * 10 + i, "rating": 1.0}
            for u in range(8) for i in range(12)]  # fmt: skip
    Dataset.from_frames("fake", "movie", pd.DataFrame(rows)).save(suite / "dataset")
    rng = np.random.default_rng(1)
    save_space(
        suite / "neumf",
        SavedSpace(
            user=rng.normal(size=(50, 8)).astype(np.float32),
            item=rng.normal(size=(80, 8)).astype(np.float32),
            user_ids=np.array([f"u{i}" for i in range(50)]),
            item_ids=np.array([f"t{i}" for i in range(80)]),
        ),
    )
    write_run(suite / "runs" / "m", model="m", dataset="fake", measures=("neu_item2users", "neu_user2items"),
              policy=skilled(0.5), n=4)  # fmt: skip
    return suite


def test_the_figure_reads_the_suites_space_with_five_clusters(neural_suite: Path) -> None:
    runs = [load_run(neural_suite / "runs" / "m")]
    label_runs(runs)
    section = tsne_section(runs, AnalysisOptions())
    assert section is not None and not section.empty
    (table,) = section.tables
    by_side: dict[str, list[list[str]]] = {}
    for row in table.rows:
        by_side.setdefault(row[0].text, []).append([c.text for c in row[1:]])
    assert {side: len(rows) for side, rows in by_side.items()} == {"items": 5, "users": 5}
    assert sum(int(r[1]) for r in by_side["items"]) == 80 and sum(int(r[1]) for r in by_side["users"]) == 50
    # The fake suite's neural targets are items t0..t3 (both measures' first 4 questions): all drawn.
    assert sum(int(r[3]) for r in by_side["items"]) == 4
    assert len(section.figures) == 2 and "question targets" in section.figures[0].svg
    assert "5 k-means clusters" in table.caption and "cosine" in table.caption
    wider = tsne_section(runs, AnalysisOptions(tsne_clusters=3))
    assert wider is not None and len(wider.tables[0].rows) == 6
