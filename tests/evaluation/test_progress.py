"""Progress and cost before the wait: plain progress lines off a terminal, and a measured estimate up front.

pytest's stderr is not a terminal, which is the case under test: a run in a
pipe, a CI log or a notebook. The interval is a setting (``--progress-every``,
30 s by default), set small here.
"""

from __future__ import annotations

import itertools
import re
import time
from datetime import datetime
from pathlib import Path

import pytest

from helpers.runner_fakes import write_suite
from recworld.chat import Request
from recworld.console import LOG_FILE
from recworld.evaluation import EvalConfig, evaluate_config
from recworld.evaluation.estimate import prompt_tokens, work_tokens
from recworld.models.scripted import ScriptedModel

STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) INFO recworld.progress: (progress: .*)$")


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return write_suite(tmp_path / "suite", {"kg_movie_genre": 3, "mem_item_item": 3})


def _config(suite: Path, **kwargs: object) -> EvalConfig:
    return EvalConfig.model_validate({"suite_dir": suite, "model": "scripted", **kwargs})


@pytest.mark.timing
def test_a_slow_run_off_a_terminal_prints_progress_at_the_interval(
    suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    every = 0.2
    slow = ScriptedModel(lambda r: "A", delay_s=0.5)  # slower per answer than the interval
    started = time.monotonic()
    result = evaluate_config(
        _config(suite, limit=1, progress_every=every, runner={"concurrency": 1}), model=slow
    )
    elapsed = time.monotonic() - started
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("recworld: progress: ")]
    assert err[0].startswith("recworld: progress: scripted (generate, zero-shot): 0/2 answered (0.0%)")
    assert err[-1].startswith("recworld: progress: scripted (generate, zero-shot): 2/2 answered (100.0%)")
    assert len(err) >= int(elapsed / every) - 1  # a line per interval, while nothing finished too
    logged = [STAMP.match(line) for line in (result.run_dir / LOG_FILE).read_text().splitlines()]
    times = [datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f") for m in logged if m]
    assert [m.group(2) for m in logged if m] == [line.removeprefix("recworld: ") for line in err]
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(times)]
    assert gaps and max(gaps) <= every + 0.25  # never silent for longer than the interval


def test_progress_lines_every_n_items_and_none_with_no_progress(
    suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evaluate_config(_config(suite), model=ScriptedModel(lambda r: "A"))  # 6 answers, a line per ceil(6/10)=1
    lines = [line for line in capsys.readouterr().err.splitlines() if "progress: " in line]
    assert [re.search(r": (\d)/6 answered", line).group(1) for line in lines] == list("123456")  # type: ignore[union-attr]
    evaluate_config(_config(suite, seed=1, runner={"progress": False}), model=ScriptedModel(lambda r: "A"))
    assert "progress: " not in capsys.readouterr().err


class SlowLocal(ScriptedModel):
    """A local model (one request at a time): slow on its first request, as a cold model is."""

    def __init__(self) -> None:
        super().__init__(lambda r: "A")

    @property
    def max_concurrency(self) -> int:
        return 1

    async def complete(self, request: Request):  # type: ignore[no-untyped-def]
        if not self.calls:
            time.sleep(0.3)
        return await super().complete(request)


def test_a_local_model_measures_its_speed_and_says_how_long_before_the_wait(
    suite: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("recworld.evaluation.estimate.SAY_ABOVE_S", 1.0)  # a minute, scaled to the test
    model = SlowLocal()
    result = evaluate_config(_config(suite, runner={"progress": False}), model=model)
    first, rest = model.calls[0], model.calls[1:]
    assert work_tokens(first) == min(work_tokens(r) for r in model.calls)  # the cheapest one is the warm-up
    err = capsys.readouterr().err
    expected = (
        f"recworld: estimate: 5 more requests, ~{sum(prompt_tokens(r) for r in rest):,} prompt tokens, about "
    )
    assert expected in err and "tokens/s (measured on one request); Ctrl-C stops and a rerun resumes" in err
    assert result.header.counts.questions == 6  # the warm-up answer is kept, not asked twice
    assert len(model.calls) == 6


def test_no_estimate_for_a_model_that_is_not_local_or_a_short_wait(
    suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evaluate_config(
        _config(suite, runner={"progress": False}), model=ScriptedModel(lambda r: "A", delay_s=0.05)
    )
    evaluate_config(
        _config(suite, seed=2, runner={"progress": False}), model=SlowLocal()
    )  # ~1 s: logged only
    assert "estimate:" not in capsys.readouterr().err
