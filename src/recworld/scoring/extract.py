"""Read a model's choice out of free text.

LRWorld asks for one option label; models answer "B", "(B)", "**B**",
"The answer is B.", "B. Heat", or just the option's text. :func:`extract_choice`
maps such replies to an option index, or ``None`` when no choice can be read
(a *miss*, scored as wrong).

First, an echoed option list is taken out of the reply: labels written as
list items ("A.", "A)", "(A)", "[A]", "A,", "A:"; numbers too) with three or
more distinct labels in a non-decreasing run ("A. B. C. D.",
"A. A. B. C. D. E. G. J.", "(A) (B) (C)", "A, B, C, D", one option per line,
letters with their texts) are the model repeating what it was shown, and so
are three or more lines that each hold only an option's text. Each echoed item
runs to the next item, the end of its line or an answer cue, whichever comes
first, so "A. x B. y C. z. The answer is B." still reads as B. A reply that is
nothing but an echo is a miss, never option A.

Then the precedence (first tier that yields an answer wins; inside a tier the
answer stated LAST in the text wins, so "Answer: A ... on reflection, the
answer is C" reads as C):

1. **Statements** - an answer cue followed by a label ("Answer: B", "The answer
   is (B)", "I choose B", "option B", ``<answer>B</answer>``), ``\\boxed{B}``,
   ``**B**``, ``$B$``, ``(B)`` / ``[B]``, or a line that holds only a label
   ("B", "B.", "Option B"). A run of three or more decorated labels in
   ascending order ("(A) ... (B) ... (C) ...") is an echo of the option list,
   not an answer, and is ignored.
2. **Enumeration** - a line starting "B. ", "B) " or "B: " ("B. Heat"); used
   only when every such line names the same label (several distinct ones are
   an echoed option list), and never when the text after the label is another
   option's ("A. Romance" where Romance is option B: a miss, not A).
3. **Option text** - the reply equals one option's text (case- and
   space-insensitive), or mentions exactly one option's text (an option whose
   text lies inside another mentioned option's text does not count), or is a
   fragment of at least four characters found in exactly one option's text.
4. **Bare label** - an upper-case label standing alone as a word ("I think
   it's C."), used only when all such words name the same label.

Labels that are also English words ("A", "I") never count when followed by a
lower-case word, unless that word is a usual continuation of an answer
("A because ...", "I, since ..."): "The answer is A movie about ..." and
"I think ..." are not answers. Lower-case labels ("answer: b") are read only
after an answer cue, inside ``\\boxed``/bold, or alone on a line.

When the labels are letters, the 1-based number of an option ("7" for the
seventh candidate, "Answer: 7", "Candidate #7") also counts, but only in tier-1
statements other than parentheses, so "(1995)" or "(3) ..." in prose never do.
A ``<think>...</think>`` block is dropped before parsing; a reply cut off inside
an unclosed ``<think>`` is a miss, since whatever it says is unfinished reasoning,
not an answer (:func:`strip_reasoning`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["extract_choice", "strip_reasoning"]

# Words that often follow an answer label; "A because" is an answer, "A movie" is not.
_CONTINUATIONS = frozenset(
    [
        "because",
        "since",
        "as",
        "which",
        "that",
        "for",
        "with",
        "and",
        "is",
        "it",
        "its",
        "it's",
        "or",
        "but",
        "based",
        "given",
        "due",
        "from",
        "according",
        "here",
        "this",
        "seems",
        "would",
        "should",
        "matches",
        "fits",
        "corresponds",
        "best",
    ]
)
_WORD_LABELS = frozenset({"A", "I", "a", "i"})

_CUE = (
    r"(?:"
    r"(?:final|correct|best|right|my|the)?\s*answer\s*(?:is|would\s+be|will\s+be|should\s+be|=|:|-)?"
    r"|(?:correct|best|right|final)\s+(?:option|choice|candidate)\s*(?:is|would\s+be|:)?"
    r"|(?:i|we)\s*(?:would|will|'d|'ll)?\s*(?:choose|pick|select|go\s+with|recommend)"
    r"|my\s+(?:choice|pick|selection)\s*(?:is|:)?"
    r"|<answer>"
    r")"
)
_LEADIN = r"[\s:=\-*`\"'“”‘’]*(?:(?:option|choice|candidate|letter|number|item|no\.)\s*#?\s*)?"
_OPEN = r"[\s(\[{*$`\"'“”‘’]*"
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_SPACE = re.compile(r"\s+")
_EDGE_PUNCT = re.compile(r"^[\W_]+|[\W_]+$")


@dataclass(frozen=True)
class _Hit:
    pos: int
    index: int
    decorated: bool  # a decorated label (bold, parentheses...) rather than an answer cue


class _Parser:
    """Regexes built once per label set."""

    def __init__(self, labels: Sequence[str]) -> None:
        self.labels = list(labels)
        self.lookup: dict[str, int] = {}
        for i, label in enumerate(labels):
            self.lookup.setdefault(label, i)
            self.lookup.setdefault(label.upper(), i)
            self.lookup.setdefault(label.lower(), i)
        alternatives = sorted({re.escape(label) for label in labels}, key=len, reverse=True)
        label_re = "|".join(alternatives) or r"(?!)"
        self.numbers = all(label.isalpha() for label in labels) and bool(labels)
        n = len(labels)
        number_re = "|".join(str(k) for k in range(n, 0, -1)) if self.numbers else r"(?!)"
        # The token group is named ``tok``; a number is accepted where noted.
        ci_token = rf"(?P<tok>(?i:{label_re})|{number_re})"
        cs_token = rf"(?P<tok>{label_re})"
        end = r"(?![\w])"
        flags = re.IGNORECASE
        self.cue = re.compile(rf"(?<![\w])(?:{_CUE}){_LEADIN}{_OPEN}{ci_token}{end}", flags)
        self.boxed = re.compile(rf"\\boxed\{{\s*(?:\\text\{{)?\s*{ci_token}\s*\}}")
        self.bold = re.compile(rf"\*\*\s*{ci_token}\s*[.):]?\s*\*\*")
        self.dollar = re.compile(rf"\$\s*{cs_token}\s*\$")
        self.paren = re.compile(rf"[(\[]\s*{cs_token}\s*[)\]]")
        self.alone = re.compile(
            rf"^[\s>*_`\"'“”‘’#]*(?:(?:option|choice|candidate|answer)\s*[:#]?\s*)?"
            rf"[(\[]?{ci_token}[)\]]?[\s.!:;*_`\"'“”‘’]*$",
            re.IGNORECASE | re.MULTILINE,
        )
        self.enum = re.compile(rf"^[\s>*_`#-]*{cs_token}\s*[.):]\s+\S", re.MULTILINE)
        self.bare = re.compile(rf"(?<![\w$\\(\[*]){cs_token}(?![\w])")
        # A label written as a list item: "(A)", "[A]", or "A." / "A)" / "A," / "A:" / "A;" before a space.
        item = rf"(?:{label_re}|{number_re})"
        self.listed = re.compile(
            rf"(?<![\w$\\])(?:\(\s*(?P<p>{item})\s*\)|\[\s*(?P<s>{item})\s*\]"
            rf"|(?P<d>{item})\s*[.):,;](?=[\s*_`\"'”’]|$))"
        )

    def index_of(self, token: str) -> int | None:
        if token in self.lookup:
            return self.lookup[token]
        if self.numbers and token.isdigit():
            k = int(token)
            return k - 1 if 1 <= k <= len(self.labels) else None
        return None

    @staticmethod
    def word_label_ok(text: str, match: re.Match[str]) -> bool:
        """False when an "A"/"I" label is really the article or the pronoun."""
        token = match.group("tok")
        if token not in _WORD_LABELS:
            return True
        follow = re.match(r"\s+([a-z][\w']*)", text[match.end("tok") :])
        return follow is None or follow.group(1) in _CONTINUATIONS

    def hits(self, text: str, pattern: re.Pattern[str], *, decorated: bool, numbers: bool) -> list[_Hit]:
        found: list[_Hit] = []
        for match in pattern.finditer(text):
            token = match.group("tok")
            if token.isdigit() and not numbers:
                continue
            index = self.index_of(token)
            if index is None or not self.word_label_ok(text, match):
                continue
            found.append(_Hit(match.start("tok"), index, decorated))
        return found


@functools.lru_cache(maxsize=64)
def _parser(labels: tuple[str, ...]) -> _Parser:
    """Label sets repeat across a run (A-D, A-J): compile their regexes once."""
    return _Parser(labels)


def _drop_echoes(hits: list[_Hit]) -> list[_Hit]:
    """Remove ascending runs of 3+ decorated labels: the model repeating the option list."""
    decorated = sorted((h for h in hits if h.decorated), key=lambda h: h.pos)
    echo: set[int] = set()
    run: list[_Hit] = []
    for hit in [*decorated, None]:
        if hit is not None and (not run or hit.index > run[-1].index):
            run.append(hit)
            continue
        if len(run) >= 3:
            echo.update(h.pos for h in run)
        run = [hit] if hit is not None else []
    return [h for h in hits if not (h.decorated and h.pos in echo)]


_CUE_ONLY = re.compile(rf"(?<![\w])(?:{_CUE})", re.IGNORECASE)
_ECHO_RUN = 3  # distinct labels in one non-decreasing run of list items: an echoed option list


def _echo_runs(body: str, parser: _Parser) -> list[list[tuple[int, int]]]:
    """Runs of list-item labels in text order, ``(position, index)``, that read as an echoed list."""
    items: list[tuple[int, int]] = []
    for match in parser.listed.finditer(body):
        token = match.group("p") or match.group("s") or match.group("d")
        index = parser.index_of(token)
        if index is not None:
            items.append((match.start(), index))
    runs: list[list[tuple[int, int]]] = []
    run: list[tuple[int, int]] = []
    for item in [*items, None]:
        if item is not None and (not run or item[1] >= run[-1][1]):
            run.append(item)
            continue
        if len({i for _, i in run}) >= _ECHO_RUN:
            runs.append(run)
        run = [item] if item is not None else []
    return runs


def _item_end(body: str, start: int, next_start: int) -> int:
    """Where an echoed item that starts at ``start`` ends: next item, end of line, or an answer cue."""
    end = min(next_start, len(body))
    newline = body.find("\n", start, end)
    if newline != -1:
        end = newline
    cue = _CUE_ONLY.search(body, start + 1, end)
    return cue.start() if cue is not None else end


def _without_echo(body: str, parser: _Parser, option_texts: Sequence[str]) -> tuple[str, bool]:
    """``body`` with echoed option lists taken out, and whether there was one."""
    spans: list[tuple[int, int]] = []
    for run in _echo_runs(body, parser):
        starts = [pos for pos, _ in run]
        for k, start in enumerate(starts):
            spans.append((start, _item_end(body, start, starts[k + 1] if k + 1 < len(starts) else len(body))))
    options = {n: i for i, o in enumerate(option_texts) if (n := _normalise(o))}
    lines, offset, echoed_lines = [], 0, set()
    for line in body.split("\n"):
        index = options.get(_normalise(line))
        if index is not None:
            lines.append((offset, offset + len(line), index))
            echoed_lines.add(index)
        offset += len(line) + 1
    if len(echoed_lines) >= _ECHO_RUN:
        spans += [(a, b) for a, b, _ in lines]
    if not spans:
        return body, False
    kept, cursor = [], 0
    for start, end in sorted(spans):
        if start > cursor:
            kept.append(body[cursor:start])
        cursor = max(cursor, end)
    kept.append(body[cursor:])
    return " ".join(kept), True


def _normalise(text: str) -> str:
    return _EDGE_PUNCT.sub("", _SPACE.sub(" ", text.casefold()).strip())


def _contains_phrase(haystack: str, needle: str) -> bool:
    """``needle`` in ``haystack`` as whole words; a plain substring test first, so a
    megabyte reply is never compiled into a pattern to look for inside a short option."""
    if needle not in haystack:
        return False
    return re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", haystack) is not None


def _by_option_text(text: str, option_texts: Sequence[str]) -> int | None:
    reply = _normalise(text)
    options = [_normalise(o) for o in option_texts]
    if not reply:
        return None
    exact = [i for i, o in enumerate(options) if o and o == reply]
    if len(exact) == 1:
        return exact[0]
    mentioned = [i for i, o in enumerate(options) if o and _contains_phrase(reply, o)]
    # "Heat 2" mentions both "Heat" and "Heat 2"; only the longer one is meant.
    maximal = [i for i in mentioned if not any(j != i and options[i] in options[j] for j in mentioned)]
    if len(maximal) == 1:
        return maximal[0]
    if not mentioned and len(reply) >= 4:
        inside = [i for i, o in enumerate(options) if _contains_phrase(o, reply)]
        if len(inside) == 1:
            return inside[0]
    return None


def _text_names_other(body: str, hit: _Hit, option_texts: Sequence[str]) -> bool:
    """Whether the text after an enumerated label ("B. Heat") names another option than that label's."""
    end = body.find("\n", hit.pos)
    rest = _ENUM_LEAD.sub("", body[hit.pos : len(body) if end < 0 else end], count=1)
    named = _by_option_text(rest, option_texts) if rest.strip() else None
    return named is not None and named != hit.index


_ENUM_LEAD = re.compile(r"^\S+?\s*[.):]\s*")


def strip_reasoning(text: str) -> str | None:
    """``text`` without its reasoning blocks, or ``None`` when a block never closes.

    Templates that open ``<think>`` in the prompt leave only the closing tag in
    the reply: what follows the last one is the answer. A reply that opens a
    block and stops before closing it (``max_tokens`` ran out mid-thought) has
    no answer at all; reading "Option A is" out of it would score a guess.
    """
    body = _THINK.sub(" ", text)
    lowered = body.lower()
    if "</think>" in lowered:
        body = body[lowered.rindex("</think>") + len("</think>") :]
    return None if "<think>" in body.lower() else body.strip()


def extract_choice(text: str, labels: Sequence[str], option_texts: Sequence[str]) -> int | None:
    """The 0-based index of the option ``text`` chooses, or ``None`` for a miss.

    ``labels`` are the option labels in candidate order ("A".."D" or "A".."J");
    ``option_texts`` the texts shown for them. See the module docstring for the
    precedence rules.
    """
    if not text or not labels:
        return None
    body = strip_reasoning(text)
    if body is None:
        return None
    parser = _parser(tuple(labels))
    body, echoed = _without_echo(body, parser, option_texts)
    if echoed and not _EDGE_PUNCT.sub("", body.strip()):
        return None  # nothing but the option list: a miss, not an answer

    statements = [
        *parser.hits(body, parser.cue, decorated=False, numbers=True),
        *parser.hits(body, parser.boxed, decorated=False, numbers=True),
        *parser.hits(body, parser.alone, decorated=False, numbers=True),
        *parser.hits(body, parser.bold, decorated=True, numbers=True),
        *parser.hits(body, parser.dollar, decorated=True, numbers=False),
        *parser.hits(body, parser.paren, decorated=True, numbers=False),
    ]
    statements = _drop_echoes(statements)
    if statements:
        return max(statements, key=lambda h: h.pos).index

    enum_hits = parser.hits(body, parser.enum, decorated=False, numbers=False)
    enumerated = {h.index for h in enum_hits}
    if len(enumerated) == 1:
        index = enumerated.pop()
        # "A. Romance" where Romance is option B: label and text disagree, so neither is the answer.
        return None if any(_text_names_other(body, h, option_texts) for h in enum_hits) else index

    by_text = _by_option_text(body, option_texts)
    if by_text is not None:
        return by_text

    bare = {h.index for h in parser.hits(body, parser.bare, decorated=False, numbers=False)}
    if len(bare) == 1:
        return bare.pop()
    return None
