"""Shell completion: ``--show-completion SHELL`` prints a script, and the completion protocol answers.

Completion runs through the real entry point (``recworld.cli.main``) with the
environment a shell's completion function sets, so it sees the generated options
of every command (``eval --mo`` completes to ``--model``, ``--mode``, ...).
"""

from __future__ import annotations

import pytest

from recworld.cli import main


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_show_completion_prints_a_script(shell: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--show-completion", shell]) == 0
    script = capsys.readouterr().out
    assert "_RECWORLD_COMPLETE" in script and "recworld" in script


def _complete(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], words: str) -> list[str]:
    monkeypatch.setenv("_RECWORLD_COMPLETE", "complete_bash")
    monkeypatch.setenv("COMP_WORDS", words)
    monkeypatch.setenv("COMP_CWORD", str(len(words.split()) - 1))
    assert main([]) == 0
    return capsys.readouterr().out.split()


def test_commands_and_generated_options_complete(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _complete(monkeypatch, capsys, "recworld ev") == ["eval"]
    assert "init" in _complete(monkeypatch, capsys, "recworld in")
    options = set(_complete(monkeypatch, capsys, "recworld eval --mo"))
    assert {"--model", "--mode", "--model-option"} <= options
    assert "synth" in _complete(monkeypatch, capsys, "recworld lunar sy")
