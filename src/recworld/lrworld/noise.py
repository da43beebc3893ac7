"""The noisy-profile variant (paper §5.4, Fig. 6/11, Table 23): one shown item of the user swapped.

The paper takes a user's shown sequence ``(i1, ..., i5)``, picks one position
at random and puts an item from the pool there, ``(i1, i2, i-, i4, i5)``, on
every factor that reasons over the user's history: on Amazon, 8 of 11, which
include ``mem_user_user`` and ``neu_user2items`` (a user target is shown by
their items) besides the attribute, taxonomy and multimodal measures.

Here, for a question with a user:

* history-bearing questions (attributes, next items, LastFM): one history
  line is replaced;
* user-target questions (``mem_user_user``, ``neu_user2items``): one of the
  items the target user is shown by (``evidence["shown_items"]``) is
  replaced, and the target text rebuilt from the items.

The replacement is an item the user never had, that is none of the options
and none of the shown items, and that can be shown the way the measure shows
items (``evidence["view"]``: its full text, its title, its logline, its image
description): a logline-only history gets a logline, never a ``Title (Year)``
line, and never an item that reads like an option, a shown item or the
question's next item (same folded title: a variant would leak the answer).
Every draw is seeded by the question id. Questions without a user
(``assoc_rule``, ``mem_item_item``, ``neu_item2users``) are returned unchanged,
as the paper's Table 23 leaves those factors out: :func:`noisy_changes` says
which measures the variant can change, read from the catalogue, so an
analysis runs it only there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import assert_never

import numpy as np

from recworld.data.dataset import Dataset
from recworld.lrworld.measure import AttributeSpec, Measure, MemorySpec, NeuralSpec, NextItemSpec, RuleSpec
from recworld.lrworld.schema import Entry, Question
from recworld.lrworld.views import TEXT_VIEW, item_identity, render_item, render_user
from recworld.seeding import rng

__all__ = ["NoiseCatalogue", "noisy_changes", "noisy_question"]


def noisy_changes(measure: Measure) -> bool:
    """Whether the noisy variant can change ``measure``'s prompts: it shows a user's history or profile.

    Window measures (attributes, next items) show a history; memory and neural
    measures about a user show the target by their items. Rule questions and
    item-target questions show no user, so the variant leaves them as built.
    """
    match measure.builder:
        case AttributeSpec() | NextItemSpec():
            return True
        case MemorySpec(kind=kind) | NeuralSpec(kind=kind):
            return kind == "user"
        case RuleSpec():
            return False
        case _:
            assert_never(measure.builder)


# Views a built question may name (evidence["view"]); other item fields are rendered on demand.
_KNOWN_VIEWS = ("text", "title", "logline", "image_description")
_DRAWS = 64  # rejection draws before a full scan for a replacement


@dataclass(frozen=True)
class NoiseCatalogue:
    """Every item's text under each view, and each user's items: what a noisy profile draws from.

    ``texts`` is the default view (``text``, :func:`~recworld.lrworld.views.describe_item`);
    ``views`` maps another view name to the items that can be shown that way.
    """

    texts: dict[str, str]
    owned: dict[str, frozenset[str]]
    views: dict[str, dict[str, str]] = field(default_factory=dict)
    identities: dict[str, str] = field(default_factory=dict)  # item id -> folded title (its variants')
    _sorted: dict[int, list[str]] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of_dataset(cls, dataset: Dataset) -> NoiseCatalogue:
        rows = dataset.items.to_dict("records")
        views: dict[str, dict[str, str]] = {}
        for view in _KNOWN_VIEWS:
            if view not in ("text", "title") and view not in dataset.items.columns:
                continue
            shown = {str(row["item_id"]): render_item(row, dataset.domain, view) for row in rows}
            views[view] = {item: text for item, text in shown.items() if text is not None}
        frame = dataset.interactions
        owned = {
            str(user): frozenset(str(i) for i in items)
            for user, items in frame.groupby("user_id", sort=False)["item_id"]
        }
        identities = {str(row["item_id"]): item_identity(row, dataset.domain) for row in rows}
        return cls(texts=views[TEXT_VIEW], owned=owned, views=views, identities=identities)

    @classmethod
    def of_suite(cls, suite_dir: Path) -> NoiseCatalogue:
        return cls.of_dataset(Dataset.load(Path(suite_dir) / "dataset"))

    def sorted_ids(self, texts: dict[str, str]) -> list[str]:
        """The ids of ``texts`` in sorted order, computed once per view."""
        key = id(texts)
        cached = self._sorted.get(key)
        if cached is None:
            cached = self._sorted[key] = sorted(texts)
        return cached

    def view(self, name: str) -> dict[str, str]:
        """Item id -> text under ``name`` (``text`` when the catalogue has only the default)."""
        if name == TEXT_VIEW:
            return self.views.get(TEXT_VIEW, self.texts)
        return self.views.get(name, {})


def noisy_question(question: Question, catalogue: NoiseCatalogue, seed: int) -> Question:
    """``question`` with one of its user's shown items replaced by one the user never had.

    Unchanged when the question shows no user's items, when the user is not in
    the catalogue, or when no replacement can be shown the measure's way.
    """
    if question.target.kind != "user":
        return question
    owned = catalogue.owned.get(question.target.id)
    if owned is None:
        return question
    view = str(question.evidence.get("view", TEXT_VIEW))
    texts = catalogue.view(view)
    generator = rng(seed, "noisy", question.id)
    options = {c.id for c in question.candidates}
    next_item = question.evidence.get("next_item")
    options |= {str(next_item)} if next_item is not None else set()
    if question.history:
        shown = [e.id for e in question.history]
        position = int(generator.integers(len(shown)))
        item = _replacement(catalogue, texts, owned | options | set(shown), generator)
        if item is None:
            return question
        history = list(question.history)
        history[position] = Entry(id=item, text=texts[item])
        noise = {"position": position, "replaced": shown[position], "with": item, "in": "history"}
        return _with_noise(question, noise, history=history)
    shown = [str(i) for i in question.evidence.get("shown_items", [])]
    if not shown or any(i not in texts for i in shown):
        return question
    if render_user(texts[i] for i in shown) != question.target.text:
        return question  # the target was not rendered from these items: leave it as built
    position = int(generator.integers(len(shown)))
    item = _replacement(catalogue, texts, owned | options | set(shown), generator)
    if item is None:
        return question
    items = [*shown[:position], item, *shown[position + 1 :]]
    target = question.target.model_copy(update={"text": render_user(texts[i] for i in items)})
    noise = {"position": position, "replaced": shown[position], "with": item, "in": "target"}
    return _with_noise(question, noise, target=target, shown_items=items)


def _replacement(
    catalogue: NoiseCatalogue,
    texts: dict[str, str],
    banned: frozenset[str] | set[str],
    generator: np.random.Generator,
) -> str | None:
    """A seeded item showable under ``texts``, outside ``banned`` and unlike any of them by title.

    Rejection sampling over the sorted ids (the user owns few of them), then a full scan when
    the draws keep failing (tiny catalogues, a user who had nearly everything).
    """
    alike = {catalogue.identities[i] for i in banned if i in catalogue.identities}
    shown_texts = {texts[i] for i in banned if i in texts}

    def admissible(item: str) -> bool:
        return (
            item not in banned
            and catalogue.identities.get(item) not in alike
            and texts[item] not in shown_texts
        )

    ids = catalogue.sorted_ids(texts)
    if not ids:
        return None
    for _ in range(_DRAWS):
        item = ids[int(generator.integers(len(ids)))]
        if admissible(item):
            return item
    pool = [i for i in ids if admissible(i)]
    return pool[int(generator.integers(len(pool)))] if pool else None


def _with_noise(question: Question, noise: dict[str, object], **update: object) -> Question:
    evidence = {**question.evidence, "noise": noise}
    shown_items = update.pop("shown_items", None)
    if shown_items is not None:
        evidence["shown_items"] = shown_items
    return question.model_copy(update={**update, "evidence": evidence})
