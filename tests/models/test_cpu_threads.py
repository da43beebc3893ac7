"""How many threads a CPU engine starts: the configured number, else OMP_NUM_THREADS, else every core."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recworld.models._common import cpu_threads

CORES = len(os.sched_getaffinity(0))

# What a shell may hold in OMP_NUM_THREADS: counts, padded counts, zero, signs, lists, words.
ENV_VALUES = st.one_of(
    st.integers(-5, 64).map(str),
    st.integers(1, 64).map(lambda n: f" {n} "),
    st.sampled_from(["", "0", "00", "1,2", "4.0", "auto", "+3", "-1", "١"]),
    st.text(max_size=6),
)


def expected(requested: int | None, env: str | None) -> int:
    """The rule, written out on its own: a positive request wins, then a plain positive count, then cores."""
    if requested is not None and requested > 0:
        return requested
    if env is not None:
        stripped = env.strip()
        if stripped and all(c in "0123456789" for c in stripped) and int(stripped) > 0:
            return int(stripped)
    return CORES


@given(requested=st.one_of(st.none(), st.integers(-3, 32)), env=st.one_of(st.none(), ENV_VALUES))
def test_threads_follow_the_request_then_omp_num_threads_then_the_cores(
    requested: int | None, env: str | None
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        if env is None or "\x00" in env:
            patch.delenv("OMP_NUM_THREADS", raising=False)
            env = None
        else:
            patch.setenv("OMP_NUM_THREADS", env)
        assert cpu_threads(requested) == expected(requested, env)
