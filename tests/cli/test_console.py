"""The shared helpers: did-you-mean, option errors, logging to a run folder, tables."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from recworld.console import LOG_FILE, configure_logging, did_you_mean, log_to_file, suggestion
from recworld.console.output import natural_width, plain_table
from recworld.errors import ConfigError
from recworld.models.registry import BACKENDS, ModelSpec


def test_did_you_mean_ignores_dashes_and_case() -> None:
    assert did_you_mean("ml100k", ["ml-100k", "ml-1m", "ml-25m"])[0] == "ml-100k"
    assert did_you_mean("ML_1M", ["ml-100k", "ml-1m"])[0] == "ml-1m"
    assert did_you_mean("zzz", ["ml-100k"]) == []
    assert suggestion("popularty", BACKENDS) == " (did you mean 'popularity'?)"
    assert suggestion("zzz", BACKENDS) == ""


@pytest.mark.parametrize(
    ("spec", "hint"),
    [
        ("popularty", "(did you mean 'popularity'?)"),
        ("openia:gpt-4o-mini", "(did you mean 'openai:gpt-4o-mini'?)"),
        ("gpt-4o-mini", "(did you mean 'openai:gpt-4o-mini'?)"),
        ("Qwen/Qwen2-0.5B-Instruct", "(did you mean 'hf:Qwen/Qwen2-0.5B-Instruct'?)"),
    ],
)
def test_model_specs_get_did_you_mean(spec: str, hint: str) -> None:
    with pytest.raises(ConfigError, match="unknown model backend") as caught:
        ModelSpec.parse(spec)
    assert hint in str(caught.value)


def test_known_specs_still_parse() -> None:
    assert str(ModelSpec.parse("popularity")) == "popularity"
    assert str(ModelSpec.parse("openai:gpt-4o-mini")) == "openai:gpt-4o-mini"


def test_log_to_file_keeps_info_while_stderr_shows_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_logging("warning")
    log = logging.getLogger("recworld.evaluation.run")
    with log_to_file(tmp_path / "run") as path:
        log.info("sent %d requests", 45)
        log.warning("3 samples failed")
    log.warning("after the run")
    assert path == tmp_path / "run" / LOG_FILE
    text = path.read_text(encoding="utf-8")
    assert "INFO recworld.evaluation.run: sent 45 requests" in text
    assert "3 samples failed" in text and "after the run" not in text
    err = capsys.readouterr().err
    assert "recworld: warning: 3 samples failed" in err and "sent 45" not in err


def test_plain_table_is_tab_separated_and_whole() -> None:
    rows = [["neu_user2items", "personalization"], ["a\tb", "x"]]
    assert plain_table(["measure", "scale"], rows) == (
        "measure\tscale\nneu_user2items\tpersonalization\na b\tx\n"
    )
    assert natural_width(["measure", "scale"], rows) == len("│ neu_user2items │ personalization │")


def test_stage_progress_is_off_without_a_terminal_and_resets_the_step() -> None:
    import io

    from rich.console import Console

    from recworld.console.progress import StageProgress

    assert not StageProgress(enabled=True).enabled  # pytest's stderr is not a TTY
    assert not StageProgress(enabled=False, console=Console(file=io.StringIO())).enabled
    screen = io.StringIO()
    with StageProgress(enabled=True, console=Console(file=screen, force_terminal=True, width=200)) as bar:
        bar.overall("measures", 0, 2)
        bar.step("training NeuMF (epoch 3)", 3, 30)
        assert bar.lines() == [("measures", 2, 0), ("training NeuMF (epoch 3)", 30, 3)]
        bar.step("writing questions")  # a step of unknown length: no leftover "3/30"
        assert bar.lines() == [("measures", 2, 0), ("writing questions", None, 0)]
    shown = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", screen.getvalue()).replace("\r", "\n")
    assert "training NeuMF" in shown and all(len(line) <= 80 for line in shown.splitlines())


def test_progress_lines_count_from_the_resumed_and_estimate_what_is_left(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from recworld.console.progress import ProgressLines, clock

    assert [clock(s) for s in (4.4, 59.6, 61, 3599, 3600 * 2 + 185)] == [
        "4s",
        "1m00s",
        "1m01s",
        "59m59s",
        "2h03m",
    ]
    configure_logging("warning")
    with ProgressLines("m (generate, zero-shot)", 100, done=60, every_s=3600, every_n=20) as lines:
        for i in range(40):
            lines.advance(error=i == 0)
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("recworld: progress: ")]
    assert len(err) == 2 and lines.lines_written == 2  # every 20 items; the last item's line is not repeated
    assert err[0].startswith(
        "recworld: progress: m (generate, zero-shot): 80/100 answered (80.0%), 1 errors, "
    )
    assert "about 0s left" in err[0] and err[1].startswith(
        "recworld: progress: m (generate, zero-shot): 100/100"
    )


def test_a_notice_is_shown_once_whatever_the_log_level(capsys: pytest.CaptureFixture[str]) -> None:
    from recworld.console.progress import notice

    configure_logging("warning")
    notice("estimate: 5 more requests")
    configure_logging("info")
    notice("estimate: 6 more requests")
    configure_logging("warning")
    err = capsys.readouterr().err.splitlines()
    assert err == ["recworld: estimate: 5 more requests", "recworld: info: estimate: 6 more requests"]


def test_a_capture_handler_at_notset_does_not_hide_info_from_the_run_log(tmp_path: Path) -> None:
    logger = logging.getLogger("recworld")
    catch_all = logging.NullHandler()  # level NOTSET, as pytest's capture handlers are
    logger.addHandler(catch_all)
    try:
        configure_logging("warning")
        with log_to_file(tmp_path) as path:
            logging.getLogger("recworld.evaluation.run").info("sent %d requests", 3)
        assert "sent 3 requests" in path.read_text(encoding="utf-8")
    finally:
        logger.removeHandler(catch_all)
