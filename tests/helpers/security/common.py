"""Helpers for the security cases: the review's fake key, a file scanner, an eval command line.

The cases run ``recworld`` in process through :func:`helpers.cli.run_recworld`.
"""

from __future__ import annotations

from pathlib import Path

KEY = "sk-SECAUDIT-7f3c9e1d2b4a6c8e0f1a3b5c7d9e"  # the review's fake key
WINDOW = 12  # no run of this many key characters may appear in any file


def key_windows(key: str = KEY, size: int = WINDOW) -> list[bytes]:
    return [key[i : i + size].encode() for i in range(len(key) - size + 1)]


def files_with_key(*roots: Path, key: str = KEY) -> list[str]:
    """Every file under ``roots`` holding any ``WINDOW``-character run of ``key`` (as ``path: window``)."""
    windows = key_windows(key)
    found = []
    for root in roots:
        for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
            data = path.read_bytes()
            hits = [w.decode() for w in windows if w in data]
            if hits:
                found.append(f"{path}: {hits[0]}")
    return found


def text_has_key(text: str, key: str = KEY) -> bool:
    return any(w.decode() in text for w in key_windows(key))


def eval_argv(suite: Path, url: str, out: Path, *extra: str, model: str = "openai:fake") -> list[str]:
    argv = ["eval", str(suite), "--model", model, "--base-url", url, "--out", str(out)]
    return [*argv, "--limit", "1", "--measures", "kg_movie_genre", "--no-progress", *extra]
