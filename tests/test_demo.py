"""`make demo`'s script: the closing reading says what the numbers say, thread choice, resume checks."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from recworld.io import atomic_write_jsonl
from recworld.scoring import SampleRecord, score_samples

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "demo.py"
GENRES = ("Drama", "Comedy", "Horror", "Western")
N = 40


@pytest.fixture(scope="module")
def demo() -> ModuleType:
    spec = importlib.util.spec_from_file_location("recworld_demo_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def gold(i: int) -> int:
    return (i * 7) % 4  # every position holds the answer sometimes


def write_run(directory: Path, model: str, picks: Callable[[int], int | None], *, errors: int = 0) -> Path:
    """A real run folder (samples.jsonl + metrics.json) for N kg_movie_genre questions."""
    samples = []
    for i in range(N):
        picked = picks(i)
        failed = i < errors
        samples.append(
            SampleRecord(
                question_id=f"ml-100k/kg_movie_genre/{i:05d}",
                measure="kg_movie_genre",
                dataset="ml-100k",
                format="mcq",
                model=model,
                mode="rank",
                variant="zero-shot",
                labels=("A", "B", "C", "D"),
                answer_index=gold(i),
                parsed_index=None if failed else picked,
                error="timeout" if failed else None,
                correct=None if failed else picked == gold(i),
                missed=None if failed else picked is None,
                option_ids=GENRES,
            )
        )
    directory.mkdir(parents=True)
    atomic_write_jsonl(directory / "samples.jsonl", [s.to_json() for s in samples])
    score_samples(samples).write(directory / "metrics.json")
    return directory


def popularity(i: int) -> int:
    """Right on the first 24 of 40 (0.600), otherwise the next option."""
    return gold(i) if i < 24 else (gold(i) + 1) % 4


@pytest.fixture
def baselines(tmp_path: Path) -> dict[str, Path]:
    return {
        "random": write_run(tmp_path / "random", "random", lambda i: (i * 3 + i // 4) % 4),
        "popularity": write_run(tmp_path / "popularity", "popularity", popularity),
        "oracle": write_run(tmp_path / "oracle", "oracle", gold),
    }


def test_a_model_that_copies_popularity_knows_what_popularity_knows(
    demo: ModuleType, tmp_path: Path, baselines: dict[str, Path]
) -> None:
    text = demo.reading("Tiny", write_run(tmp_path / "llm", "llm", popularity), baselines)
    assert "answers 24 of 40 KG (movie, genre) questions right: 0.600" in text
    assert "above chance (0.25)" in text
    assert "random 0.300, popularity 0.600, oracle 1.000" in text
    assert "on a par with popularity (+0.000" in text
    assert "It picks what popularity picks on 100% of them" in text
    assert "it is what popularity knows" in text
    assert "\n" not in text  # one paragraph


def test_an_always_a_model_is_flagged_and_called_guessing(
    demo: ModuleType, tmp_path: Path, baselines: dict[str, Path]
) -> None:
    text = demo.reading("Tiny", write_run(tmp_path / "llm", "llm", lambda i: 0), baselines)
    assert "100% of its answers are option A: it barely reads the question" in text
    assert "not clearly above chance" in text
    assert "cannot be told apart from guessing" in text
    assert "below popularity" in text


def test_a_model_that_beats_popularity_is_said_to(
    demo: ModuleType, tmp_path: Path, baselines: dict[str, Path]
) -> None:
    text = demo.reading("Tiny", write_run(tmp_path / "llm", "llm", gold), baselines)
    assert "above popularity (+0.400" in text
    assert "It beats popularity" in text
    assert "at most 25% on one" in text  # gold positions: 10 of 40 each


def test_above_chance_but_below_popularity(
    demo: ModuleType, tmp_path: Path, baselines: dict[str, Path]
) -> None:
    strong = write_run(
        tmp_path / "strong-pop", "popularity", lambda i: gold(i) if i < 38 else (gold(i) + 1) % 4
    )
    half = write_run(tmp_path / "llm", "llm", lambda i: gold(i) if i % 2 == 0 else (gold(i) + 2) % 4)
    text = demo.reading("Tiny", half, {**baselines, "popularity": strong})
    assert "0.500" in text and "above chance" in text and "below popularity" in text
    assert "less than popularity alone gives" in text


def test_errored_samples_are_left_out_and_unreadable_answers_counted(
    demo: ModuleType, tmp_path: Path, baselines: dict[str, Path]
) -> None:
    run = write_run(tmp_path / "llm", "llm", lambda i: None if i % 2 else gold(i), errors=4)
    text = demo.reading("Tiny", run, baselines)
    assert "answers 18 of 36" in text and "On the same 36 questions" in text
    assert demo.answered(run, ("kg_movie_genre",)) == 36
    assert demo.answered(tmp_path / "nothing-yet", ("kg_movie_genre",)) == 0


@pytest.mark.parametrize(
    ("cores", "one", "every", "expected"),
    [(2, 1.2, 4.2, 1), (2, 2.1, 1.1, 2), (2, 1.0, 0.9, 1), (1, 9.9, 9.9, 1), (4, 2.0, 0.7, 4)],
)
def test_threads_follow_the_faster_probe(
    demo: ModuleType,
    monkeypatch: pytest.MonkeyPatch,
    cores: int,
    one: float,
    every: float,
    expected: int,
) -> None:
    probed: list[int] = []

    def probe(spec: str, threads: int) -> float:
        probed.append(threads)
        return one if threads == 1 else every

    monkeypatch.setattr(demo, "usable_cores", lambda: cores)
    monkeypatch.setattr(demo, "probe_seconds", probe)
    threads, why = demo.pick_threads("llamacpp:x")
    assert threads == expected
    assert probed == ([] if cores == 1 else [1, cores])  # a single core is not probed
    assert why == "1 core" or f"{one:.2f} s on 1" in why


def test_the_timings_table_sums_its_steps(demo: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    timings = demo.Timings()
    timings.add("Build", 20.25)
    timings.add("Evaluate an LLM", 141.5, "1 thread")
    assert "(141.5 s, 1 thread)" in capsys.readouterr().out
    table = timings.table().splitlines()
    assert table[-1].split()[:3] == ["total", "161.8", "s"] and "(2m41.8s)" in table[-1]
