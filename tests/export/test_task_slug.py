"""Export task ids: the one slug (recworld.paths.slug) plus one transform, an identifier part."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from recworld.export.common import task_slug
from recworld.paths import slug

TEXT = st.text(st.sampled_from('Ab9.-_ /:é"\n'), max_size=80)


@settings(max_examples=200)
@given(text=TEXT, other=TEXT)
def test_task_slug_is_an_identifier_part_built_on_the_slug(text: str, other: str) -> None:
    ident = task_slug(text)
    assert f"recworld_{ident}".isidentifier() and ident.isascii() and ident == ident.lower()
    assert 1 <= len(ident) <= 64 and not ident.startswith("_") and not ident.endswith("_")
    if slug(text, empty="dataset").lower() == slug(other, empty="dataset").lower():  # one slug, one task id
        assert ident == task_slug(other)
    # what survives of the slug: its letters and digits, in order (the rest is "_")
    kept = [c for c in slug(text, empty="dataset").lower() if c.isalnum()]
    if not kept:
        assert ident == "dataset"
        return
    assert "".join(c for c in ident if c != "_") == "".join(kept)[: len(ident.replace("_", ""))]


def test_known_names() -> None:
    assert task_slug("ml-100k") == "ml_100k"
    assert task_slug("Amazon.Books 2018") == "amazon_books_2018"
    assert task_slug('"""') == "dataset"
