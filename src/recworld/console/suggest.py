"""'Did you mean' for names a user types: model specs, dataset names, measure ids.

Click already suggests flags and commands; values (``--model popularty``,
``--dataset ml100k``) need the same help, and one helper keeps the wording alike.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def _squash(name: str) -> str:
    """Compare names without case, dashes or underscores: ``ml100k`` is close to ``ml-100k``."""
    return "".join(ch for ch in name.lower() if ch.isalnum())


def did_you_mean(word: str, choices: Iterable[str], *, n: int = 3, cutoff: float = 0.6) -> list[str]:
    """The known names closest to ``word``, best first (empty when none is close).

    Never ``word`` itself: a name that is a known choice but was refused for another reason
    (a dataset not fetched yet) must not be answered with "did you mean" that same name.
    """
    known = sorted(set(choices) - {word})
    exact = [c for c in known if _squash(c) == _squash(word)]
    by_key: dict[str, list[str]] = {}
    for choice in known:
        by_key.setdefault(_squash(choice), []).append(choice)
    close = difflib.get_close_matches(_squash(word), list(by_key), n=n, cutoff=cutoff)
    found = exact + [c for key in close for c in by_key[key] if c not in exact]
    return found[:n]


def suggestion(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` (or ``'x' or 'y'``) to append to a message, or ``""`` when none is close."""
    return phrase(did_you_mean(word, choices, n=2))


def phrase(candidates: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for candidates already chosen, or ``""`` when there are none."""
    names = list(candidates)
    return f" (did you mean {' or '.join(repr(c) for c in names)}?)" if names else ""
