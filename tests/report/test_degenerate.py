"""Degenerate answering is flagged where it is seen: the eval table, metrics.json and the report."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from helpers.synthetic_runs import MOVIE_MEASURES, always_first, make_suite, skilled, write_run
from recworld.evaluation.eval_output import print_scores, run_summary
from recworld.report import write_report
from recworld.scoring import load_samples, score_samples
from recworld.scoring.thresholds import DEGENERATE_TV


def test_an_always_a_model_is_flagged_in_the_eval_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "smol"
    write_run(run, model="llamacpp:smollm2-135m", dataset="ml-100k", measures=MOVIE_MEASURES,
              policy=always_first(), n=20)  # fmt: skip
    summary = run_summary(run)
    flags = {m: row["flag"] for m, row in summary["measures"].items()}
    assert all(flag in ("A 100%", "") for flag in flags.values())
    assert sum(flag == "A 100%" for flag in flags.values()) >= len(MOVIE_MEASURES) - 1
    assert sorted(line.split(":")[0] for line in summary["degenerate"]) == ["hit@1", "mcq"]
    print_scores(summary)
    out = capsys.readouterr().out
    assert "A 100%" in out and "degenerate answering (mcq: A 100% of 80 parsed answers" in out


def test_five_questions_per_measure_are_flagged_pooled(tmp_path: Path) -> None:
    run = tmp_path / "smol"
    write_run(run, model="m", dataset="ml-100k", measures=MOVIE_MEASURES, policy=always_first(), n=5)
    summary = run_summary(run)
    assert any(line.startswith("hit@1: A 100% of 25") for line in summary["degenerate"])


@pytest.mark.parametrize("seed", range(6))
def test_a_model_that_follows_the_key_is_never_flagged(tmp_path: Path, seed: int) -> None:
    for name, policy in (("good", skilled(0.9)), ("guess", skilled(0.0))):
        run = tmp_path / f"{name}{seed}"
        write_run(run, model=name, dataset="ml-100k", measures=MOVIE_MEASURES, policy=policy, n=20, seed=seed)
        summary = run_summary(run)
        assert not summary["degenerate"] and not any(row["flag"] for row in summary["measures"].values())


def test_the_flag_follows_its_documented_rule(tmp_path: Path) -> None:
    """TV above the threshold and a significant excess at the top position; each alone is not enough."""
    run = tmp_path / "r"
    write_run(run, model="m", dataset="ml-100k", measures=("kg_movie_genre",), policy=always_first(), n=40)
    bias = score_samples(load_samples(run / "samples.jsonl")).measures["kg_movie_genre"].position_bias
    gold = np.array(bias.gold) / sum(bias.gold)
    assert bias.tv_distance == pytest.approx(1 - gold[0]) and bias.tv_distance > DEGENERATE_TV
    assert bias.degenerate
    # Two answers, both A: TV is 0.75 or more, but two picks are no evidence of a habit.
    tiny = tmp_path / "tiny"
    write_run(tiny, model="m", dataset="ml-100k", measures=("kg_movie_genre",), policy=always_first(), n=2)
    assert (
        not score_samples(load_samples(tiny / "samples.jsonl"))
        .measures["kg_movie_genre"]
        .position_bias.degenerate
    )


def test_the_report_marks_the_cells_and_explains(tmp_path: Path) -> None:
    suite = make_suite(tmp_path)
    write_run(suite / "runs" / "smol", model="llamacpp:smollm2-135m", dataset="ml-100k",
              measures=MOVIE_MEASURES, policy=always_first(), n=20)  # fmt: skip
    write_run(suite / "runs" / "good", model="good", dataset="ml-100k", measures=MOVIE_MEASURES,
              policy=skilled(0.6), n=20, seed=1)  # fmt: skip
    md = write_report([suite], tmp_path / "out")["markdown"].read_text(encoding="utf-8")
    row = next(line for line in md.splitlines() if line.startswith("| llamacpp:smollm2-135m |"))
    assert row.count("†") >= len(MOVIE_MEASURES) - 1 and "**" not in row  # a flagged cell is never bold
    note = next(line for line in md.splitlines() if line.startswith("> Degenerate answering (†):"))
    assert "llamacpp:smollm2-135m answers A on 100% of its 80 parsed mcq answers" in note
    assert "llamacpp:smollm2-135m answers A on 100% of its 100 parsed hit@1 answers" in note
    assert "good answers" not in note
    positions = md.split("### Position bias: 4-option MCQ questions")[1].split("###")[0]
    assert "† degenerate" in positions
