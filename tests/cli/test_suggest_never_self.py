"""'Did you mean' never suggests the input itself (review U12), and a known dataset not yet
fetched says the exact fetch command."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recworld.console.suggest import did_you_mean, suggestion
from recworld.data.fetch import FETCHABLE, resolve_dataset
from recworld.errors import DataError

NAMES = st.text(alphabet="abcML-_01", min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(word=NAMES, choices=st.lists(NAMES, max_size=6), include=st.booleans())
def test_the_input_is_never_its_own_suggestion(word: str, choices: list[str], include: bool) -> None:
    options = [*choices, word] if include else choices
    assert word not in did_you_mean(word, options)
    said = suggestion(word, options)
    assert f"mean {word!r}" not in said and f"or {word!r}" not in said


@pytest.mark.parametrize("name", sorted(FETCHABLE))
def test_every_fetchable_name_on_a_fresh_home_names_its_fetch_command(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECWORLD_HOME", str(tmp_path / "fresh"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DataError) as caught:
        resolve_dataset(name)
    text = str(caught.value)
    assert f"`recworld data fetch {name}`" in text and "did you mean" not in text, text
