"""Prompt rendering: one template per measure and variant, labels and options in candidate order."""

from __future__ import annotations

import re

import pytest

from recworld.errors import ConfigError
from recworld.lrworld.catalogue import MEASURES, Measure
from recworld.lrworld.prompts import VARIANTS, load_template, render_prompt
from recworld.lrworld.schema import Entry, Question, QuestionFormat, Target

DOMAIN = {"movie": "movie", "product": "product", "music": "music"}


def question(measure: str, fmt: QuestionFormat, domain: str = "movie") -> Question:
    n = fmt.n_options
    return Question(
        id=f"d/{measure}/00000",
        dataset="d",
        domain=domain,
        measure=measure,
        scale="association",
        format=fmt,
        target=Target(kind="item", id="t", text="TARGET-TEXT"),
        history=[Entry(id=f"h{i}", text=f"HISTORY-{i}") for i in range(3)],
        candidates=[Entry(id=f"c{i}", text=f"OPTION-{i}") for i in range(n)],
        answer_index=n - 1,
        seed=0,
    )


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("measure", MEASURES, ids=lambda m: m.id)
def test_every_measure_renders_options_in_order(measure: Measure, variant: str) -> None:
    domain = sorted(d.value for d in measure.domains)[0]
    q = question(measure.id, measure.format, domain)
    rendered = render_prompt(q, variant, images={e.id: f"/img/{e.id}.png" for e in q.history})
    n = measure.format.n_options
    assert rendered.labels == tuple("ABCDEFGHIJKLMNOPQRST"[:n])
    assert rendered.option_texts == tuple(c.text for c in q.candidates)
    (message,) = rendered.messages
    assert message.role == "user"
    assert "$" not in message.content and "[HistoryHere]" not in message.content
    if rendered.answer_by == "name":  # LastFM as LLaRA: [CansHere] is the names, comma-separated
        assert ", ".join(rendered.option_texts) in message.content
        assert not re.search(r"\bA\. ", message.content)
    else:
        for label, text in zip(rendered.labels, rendered.option_texts, strict=True):
            assert re.search(rf"\b{label}\. {text}\b", message.content), (label, text)
    offsets = [message.content.index(t) for t in rendered.option_texts]
    assert offsets == sorted(offsets)
    assert ("TARGET-TEXT" in message.content) == measure.shows_target
    assert ("HISTORY-0" in message.content) == (not measure.shows_target)


def test_lastfm_prompt_is_the_papers_table_24() -> None:
    q = question("lastfm_next_artist", QuestionFormat.HIT_AT_1, "music")
    text = render_prompt(q).messages[0].content
    assert text.startswith("This user has listened to HISTORY-0, HISTORY-1, HISTORY-2 in the previous.")
    assert "Please predict the next music artist this user will listen to." in text
    assert text.endswith("Choose only one artist from the candidates. The answer is")
    names = ", ".join(f"OPTION-{i}" for i in range(10))
    assert f"The artist name candidates are {names}. Choose only one" in text


def test_lastfm_replies_are_read_by_name_as_llara_does() -> None:
    from recworld.lrworld.prompts import read_name_reply

    names = ["Artist 1", "Artist 12", "Muse", "The Beatles"]
    assert read_name_reply("Muse", names) == 2
    assert read_name_reply("  the beatles.\nBecause they are great", names) == 3
    assert read_name_reply("Artist 12", names) == 1  # the whole line is one name
    assert read_name_reply("I would say Artist 12 here", names) is None  # LLaRA: two names occur in it
    assert read_name_reply("Muse or The Beatles", names) is None  # two names: no answer
    assert read_name_reply("B", names) is None  # a letter is no name
    assert read_name_reply("Thinking...\nAnswer: Muse", names) == 2  # after the last answer cue
    genre = question("lastfm_artist_genre", QuestionFormat.MCQ, "music")
    rendered = render_prompt(genre)
    assert rendered.answer_by == "name" and "The genres candidates are OPTION-0, OPTION-1" in (
        rendered.messages[0].content
    )


def test_domain_words_follow_the_question() -> None:
    movie = render_prompt(question("assoc_rule", QuestionFormat.HIT_AT_1, "movie")).messages[0].content
    product = render_prompt(question("assoc_rule", QuestionFormat.HIT_AT_1, "product")).messages[0].content
    assert "watched" in movie and "bought" not in movie
    assert "bought" in product and "watched" not in product


def test_unknown_variant_and_measure_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="variant"):
        render_prompt(question("assoc_rule", QuestionFormat.HIT_AT_1), "five-shot")
    with pytest.raises(ConfigError, match="template"):
        load_template("zero-shot", "no_such_measure")
