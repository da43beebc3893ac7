"""Options a reader can tell apart: one rule, used by every builder.

Two options of one question must never read the same to a model. Ids are not
enough: MovieLens has distinct movies with one title, Amazon lists a product
under several ASINs with one title, and metadata spells one colour "Black" and
"black". :func:`fold` is the comparison every builder uses (case-folded,
whitespace runs collapsed), and :class:`OptionGuard` tracks the folded texts a
question already shows so a negative that reads like one of them is rejected.

Items are also compared by *identity*, their folded title (with the year for
movies; :func:`recworld.lrworld.views.item_identity`): two ASINs of one
product differ in brand or leaf category, so their texts differ, yet a reader
sees one product twice. No two options, and no option and the target or a
shown history item, may share an identity; :func:`distinct_keys` is the check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable


def fold(text: str) -> str:
    """The form two option texts are compared in: case-folded, blanks collapsed, ends trimmed."""
    return " ".join(str(text).casefold().split())


class OptionGuard:
    """The folded texts one question already shows; admits a value only if it reads differently.

    ``text_of`` maps a pool value (an item or user index, an attribute value id)
    to the text the model will see. ``taken`` are texts that no negative may
    repeat: the positive, the target when it is of the options' kind (so a
    same-title variant of the target is never a negative), and hidden positives.
    """

    def __init__(
        self,
        text_of: Callable[[int], str],
        taken: Iterable[str] = (),
        *,
        identity_of: Callable[[int], str] | None = None,
        taken_identities: Iterable[str] = (),
    ) -> None:
        self._text_of = text_of
        self._taken = {fold(t) for t in taken}
        self._identity_of = identity_of
        self._taken_ids = set(taken_identities)

    def key(self, value: int) -> str:
        return fold(self._text_of(value))

    def admit(self, value: int) -> bool:
        """True (and the value's text and identity now taken) when ``value`` reads unlike every option."""
        key = self.key(value)
        if key in self._taken:
            return False
        if self._identity_of is not None:
            identity = self._identity_of(value)
            if identity in self._taken_ids:
                return False
            self._taken_ids.add(identity)
        self._taken.add(key)
        return True


def distinct_texts(texts: Iterable[str]) -> bool:
    """True when no two of ``texts`` read the same under :func:`fold` (the check tests and audits run)."""
    seen: set[str] = set()
    for text in texts:
        key = fold(text)
        if key in seen:
            return False
        seen.add(key)
    return True


def distinct_keys(keys: Iterable[str]) -> bool:
    """True when no key repeats (keys already folded, e.g. item identities)."""
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            return False
        seen.add(key)
    return True
