"""One regular expression that reads an answer label as :func:`recworld.scoring.extract.extract_choice` does.

Harnesses (lm-eval's ``regex`` filter, inspect_ai's ``pattern`` scorer) take a
single pattern, so the extractor's tiers are folded into alternatives and a
greedy ``(?s:.*)`` prefix makes the LAST answer in the reply win, as ours does.
The one capture group that matched holds the label. What a regex cannot do, and
so differs from our extractor (docs/export.md lists it too):

* no tier precedence: the last answer-like label wins whatever its form, where
  ours prefers a stated answer ("Answer: B") over a bare letter later on;
* no option-text matching ("Heat" for the option "B. Heat") and no 1-based
  numbers ("Answer: 2");
* no echo detection (a reply that repeats "(A) ... (B) ... (C)" reads as C);
* a bare label counts unless a lower-case word follows it ("A movie", "I think"),
  so "A because ..." is missed where ours reads A;
* ``<think>`` blocks are not removed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["answer_pattern"]


def answer_pattern(labels: Sequence[str]) -> str:
    """The pattern for one label set (letters "A".."D" or "A".."J"); group 1..6 holds the label."""
    if not labels or not all(len(label) == 1 and label.isalpha() for label in labels):
        raise ValueError(f"labels must be single letters, got {list(labels)!r}")
    upper = "[" + "".join(re.escape(label.upper()) for label in labels) + "]"
    either = "[" + "".join(re.escape(label.upper() + label.lower()) for label in labels) + "]"
    end = r"(?![A-Za-z0-9])"
    cue = (
        r"(?i:answer|choose|pick|select|option|choice|candidate)"
        r"(?i:\s*(?:is|would\s+be|will\s+be|should\s+be))?"
        r"[\s:=*`\"'(\[-]*"
        rf"({either}){end}"
    )
    boxed = rf"\\boxed\{{\s*({either})\s*\}}"
    bold = rf"\*\*\s*({either})\s*[.):]?\s*\*\*"
    paren = rf"[(\[]\s*({upper})\s*[)\]]"
    alone = rf"(?:^|\n)[ \t>*_`\"'#]*({upper})[.):]?[ \t.!*_`\"']*(?=\n|$)"
    bare = rf"(?<![\w$\\(\[*])({upper})(?![\w])(?!\s+[a-z])"
    return rf"(?s:.*)(?:{cue}|{boxed}|{bold}|{paren}|{alone}|{bare})"
