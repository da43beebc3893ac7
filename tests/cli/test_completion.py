"""Shell completion: ``--show-completion SHELL`` prints a script, and the completion protocol answers.

Completion runs through the real entry point (``recworld.cli.main``) with the
environment a shell's completion function sets, so it sees the generated options
of every command (``eval --mo`` completes to ``--model``, ``--mode``, ...).
"""

from __future__ import annotations

import pytest

from helpers.cli import run_recworld


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_show_completion_prints_a_script(shell: str) -> None:
    ran = run_recworld("--show-completion", shell)
    assert ran.returncode == 0, ran.stderr
    script = ran.stdout
    assert "_RECWORLD_COMPLETE" in script and "recworld" in script


def _complete(monkeypatch: pytest.MonkeyPatch, words: str) -> list[str]:
    monkeypatch.setenv("_RECWORLD_COMPLETE", "complete_bash")
    monkeypatch.setenv("COMP_WORDS", words)
    monkeypatch.setenv("COMP_CWORD", str(len(words.split()) - 1))
    ran = run_recworld()
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.split()


def test_commands_and_generated_options_complete(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _complete(monkeypatch, "recworld ev") == ["eval"]
    assert "init" in _complete(monkeypatch, "recworld in")
    options = set(_complete(monkeypatch, "recworld eval --mo"))
    assert {"--model", "--mode", "--model-option"} <= options
    assert "synth" in _complete(monkeypatch, "recworld lunar sy")
