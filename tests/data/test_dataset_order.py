"""Dataset.from_frames orders interactions as a stable pandas sort by (user, time): ties keep file order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recworld.data.dataset import Dataset, _sorted_interactions


def _frame(seed: int, n: int, time_span: int) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    users = np.array(["u10", "u9", "u1", "é", "U", "u1 ", "10", "9"])
    items = np.array(["i2", "i10", "b", "B", "ü", "i2x"])
    return pd.DataFrame(
        {
            "user_id": users[gen.integers(0, len(users), n)],
            "item_id": items[gen.integers(0, len(items), n)],
            "timestamp": gen.integers(-time_span, time_span, n),  # small spans: many exact ties
            "rating": np.arange(n, dtype=np.float64),  # tells tied rows apart
        }
    )


@pytest.mark.parametrize("time_span", [3, 2**60])  # the second is too wide for one key unranked
def test_sorted_interactions_equals_stable_pandas_sort(time_span: int) -> None:
    frame = _frame(0, 500, time_span)
    frame["user_id"] = frame["user_id"].astype(str)
    frame["item_id"] = frame["item_id"].astype(str)
    expected = frame.sort_values(["user_id", "timestamp"], kind="stable").reset_index(drop=True)
    pd.testing.assert_frame_equal(_sorted_interactions(frame), expected)


def test_from_frames_orders_histories() -> None:
    frame = _frame(1, 300, 5)
    ds = Dataset.from_frames("t", "movie", frame)
    inter = ds.interactions
    keys = list(zip(inter["user_id"], inter["timestamp"], strict=True))
    assert keys == sorted(keys)
    # Equal (user, time) keys keep their input order, whatever their item ids.
    for _, group in inter.groupby(["user_id", "timestamp"]):
        assert group["rating"].is_monotonic_increasing
    assert any(not g["item_id"].is_monotonic_increasing for _, g in inter.groupby(["user_id", "timestamp"]))
