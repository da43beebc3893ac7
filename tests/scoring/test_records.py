"""The scoring records are typed all the way in: prompts are chat messages, metrics are classes."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from helpers.sample_records import sample
from recworld.chat import Message
from recworld.scoring import SampleRecord, score_samples
from recworld.scoring.records import GroupMetrics, MeasureMetrics, PositionCounts


def test_a_prompt_is_chat_messages_written_as_before() -> None:
    prompt = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Which one?", "images": ["/suite/dataset/i1.png"]},
    ]
    record = SampleRecord.model_validate(sample("kg_movie_genre", 0, 1, 1, prompt=prompt))
    assert record.prompt == (
        Message(role="system", content="Be brief."),
        Message(role="user", content="Which one?", images=("/suite/dataset/i1.png",)),
    )
    # On disk a message without images has no "images" key, exactly as samples.jsonl always had.
    assert record.to_json()["prompt"] == prompt
    assert SampleRecord.model_validate(record.to_json()) == record


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"role": "robot", "content": "x"}, "prompt.0.role"),
        ({"role": "user", "content": "x", "x": 1}, "prompt.0.x"),
    ],
)
def test_a_malformed_prompt_message_is_refused(message: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        SampleRecord.model_validate(sample("kg_movie_genre", 0, 1, 1, prompt=[message]))
    assert field in {".".join(str(p) for p in e["loc"]) for e in info.value.errors()}


def test_score_samples_builds_the_record_classes() -> None:
    metrics = score_samples([sample("kg_movie_genre", i, i % 4, 0) for i in range(8)])
    genre = metrics.measures["kg_movie_genre"]
    assert isinstance(genre, MeasureMetrics) and isinstance(genre.positions, PositionCounts)
    assert genre.positions.gold == [2, 2, 2, 2] and genre.positions.parsed == [8, 0, 0, 0]
    assert genre.position_bias.top_label == "A" and genre.position_bias.tv_distance == pytest.approx(0.75)
    factor = metrics.factors["entity attribute"]
    assert isinstance(factor, GroupMetrics) and factor.scale == "knowledgeability"
    assert metrics.scales["knowledgeability"].scale is None
