"""The NeuMF t-SNE: the suite's own space, items and users apart, cosine clusters, 5 by default."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from helpers.runner_fakes import write_suite
from helpers.synthetic_runs import skilled, write_run
from recworld.data.dataset import Dataset
from recworld.lrworld.embeddings import SavedSpace, save_space
from recworld.report.analyses_suite import tsne_section
from recworld.report.analysis import AnalysisOptions
from recworld.report.embedding_view import spherical_clusters
from recworld.report.runs import label_runs, load_run


def test_clusters_follow_direction_not_length() -> None:
    rng = np.random.default_rng(0)
    directions = np.eye(3)
    x = np.vstack([d * s for d in directions for s in rng.uniform(0.1, 50.0, size=40)])
    x += rng.normal(scale=0.01, size=x.shape)
    labels = spherical_clusters(x, 3, seed=0)
    truth = np.repeat(np.arange(3), 40)
    # Each true direction is one cluster, whatever the vectors' norms (Euclidean k-means splits by norm).
    assert all(len(set(labels[truth == k])) == 1 for k in range(3))
    assert len(set(labels)) == 3


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
