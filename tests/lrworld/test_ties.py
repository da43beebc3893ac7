"""Issue 24.3: no answer is decided by order (recworld.lrworld.ties).

The class attacked: logs where many items share a timestamp (second-granular
bursts, day-granular sources). Each generated log is built, then every window
question is checked by a loop that shares no code with the builders
(``checks.window_of``): the next event is every item at the next timestamp,
any of its values may be right, none is offered as wrong, and the history is
whole timestamps. Permuting the order of same-time rows changes nothing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.lrworld.checks import build, check_attribute, check_next_item, config, timed_sequences, window_of
from helpers.lrworld.datasets import GENRES
from recworld.data.dataset import Dataset
from recworld.lrworld.manifest import read_manifest
from recworld.lrworld.ties import event_end, event_starts, history_start, next_event_items


def tied_dataset(seed: int, n_users: int, granularity: int) -> Dataset:
    """Users whose items come in same-time bursts (``granularity`` distinct times per ~3 items)."""
    gen = np.random.default_rng(seed)
    n_items = 40
    rows = []
    for u in range(n_users):
        n = int(gen.integers(8, 18))
        own = gen.choice(n_items, size=n, replace=False)
        times = np.sort(gen.integers(0, max(2, n // granularity + 2), size=n)) * 86400
        rows += [
            {"user_id": f"u{u}", "item_id": f"i{it}", "timestamp": int(t)}
            for it, t in zip(own, times, strict=True)
        ]
    items = pd.DataFrame(
        {
            "item_id": [f"i{i}" for i in range(n_items)],
            "title": [f"Movie {i}" for i in range(n_items)],
            "year": [1990 + i % 20 for i in range(n_items)],
            "genres": [sorted({GENRES[i % 7], GENRES[(i * 3 + 1) % 7]}) for i in range(n_items)],
            "logline": [f"Story {i} of {GENRES[i % 7].lower()} things." for i in range(n_items)],
        }
    )
    return Dataset.from_frames("ties", "movie", pd.DataFrame(rows), items)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n_users=st.integers(12, 30), granularity=st.sampled_from([1, 2, 3]))
def test_tied_next_events_are_sets(seed: int, n_users: int, granularity: int) -> None:
    dataset = tied_dataset(seed, n_users, granularity)
    ctx, built = build(dataset, config(measures=("kg_movie_genre", "text_logline"), per_measure=40))
    genre, logline = built.get("kg_movie_genre", []), built.get("text_logline", [])
    check_attribute("genres")(ctx, genre)
    check_next_item("logline")(ctx, logline)
    merged = sum(f.merged.get("next_event_set", 0) for f in ctx.filters.values())
    sets = sum(len(q.evidence["next_event"]) > 1 for q in [*genre, *logline])
    assert merged == sets, "the manifest counts every question asked about a tied event"


def test_file_order_of_tied_rows_changes_nothing() -> None:
    dataset = tied_dataset(3, 25, 2)
    shuffled = dataset.interactions.sample(frac=1.0, random_state=1).sort_values(
        ["user_id", "timestamp"], kind="stable"
    )
    again = Dataset.from_frames("ties", "movie", shuffled.reset_index(drop=True), dataset.items)
    cfg = config(measures=("kg_movie_genre", "text_logline"), per_measure=40)
    _, first = build(dataset, cfg)
    _, second = build(again, cfg)
    assert {m: [q.to_json() for q in qs] for m, qs in first.items()} == {
        m: [q.to_json() for q in qs] for m, qs in second.items()
    }


def test_tie_functions_match_a_loop() -> None:
    times = np.array([1, 1, 2, 3, 3, 3, 4, 9, 9], dtype=np.int64)
    ptr = np.array([0, 6, 9], dtype=np.int64)
    starts = event_starts(ptr, times, np.arange(9))
    assert starts.tolist() == [True, False, True, True, False, False, True, True, False]
    assert event_end(6, times, 3) == 6 and event_end(9, times, 7) == 9
    assert history_start(0, times, 3, 2) == 2  # [1, 2] cut inside the time-1 pair: start at 2
    assert history_start(0, times, 3, 3) == 0
    assert history_start(0, times, 2, 1) == 2  # a history of one tied item is cut away
    assert next_event_items(["a", "b", "c", "d"], [5, 7, 7, 8], 1) == ["b", "c"]


def test_window_reference_cuts_histories_at_time_boundaries() -> None:
    rows = [(1, "a"), (1, "b"), (2, "c"), (3, "d"), (3, "e")]
    assert window_of(rows, 3, 2) == (["c"], ["d", "e"])
    assert window_of(rows, 3, 3) == (["a", "b", "c"], ["d", "e"])


# -- acceptance on ML-100K ----------------------------------------------------------------------


@pytest.mark.slow
def test_ml100k_no_wrong_option_belongs_to_a_tied_item(ml100k_fetched: Path, tmp_path: Path) -> None:
    """Issue 24: on ML-100K, no wrong option belongs to an item tied with the next one."""
    from recworld.lrworld.config import BuildConfig
    from recworld.lrworld.suite import build_suite

    dataset = Dataset.load(ml100k_fetched)
    manifest = build_suite(
        dataset, BuildConfig(measures=("kg_movie_genre",), per_measure=1000), tmp_path / "suite"
    )
    seqs = timed_sequences(dataset)
    genres = {str(i): set(g) for i, g in zip(dataset.items["item_id"], dataset.items["genres"], strict=True)}
    from recworld.io import iter_json_lines
    from recworld.lrworld.schema import Question

    bad = 0
    for _, row in iter_json_lines(tmp_path / "suite" / "questions" / "kg_movie_genre.jsonl"):
        q = Question.model_validate(row)
        rows = seqs[q.target.id]
        t = rows[q.evidence["position"]][0]
        tied = {it for when, it in rows if when == t}
        wrong = {c.text for i, c in enumerate(q.candidates) if i != q.answer_index}
        bad += any(wrong & genres[it] for it in tied)
    assert bad == 0
    assert manifest.filters["kg_movie_genre"].merged.get("next_event_set", 0) > 0
    assert read_manifest(tmp_path / "suite").filters["kg_movie_genre"].tied_windows > 0
