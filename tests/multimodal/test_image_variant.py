"""The describe+image prompt variant (paper Table 4): descriptions plus the latest item's own image."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.multimodal import expected_description, make_dataset
from recworld.capped import is_remote
from recworld.data.image_refs import ImageRoots, local_references, resolve_local
from recworld.errors import ConfigError, DataError
from recworld.lrworld.image_variant import VARIANT, suite_images
from recworld.lrworld.prompts import VARIANTS, render_prompt
from recworld.lrworld.schema import Entry, Question, QuestionFormat, Target
from recworld.multimodal.describe import with_descriptions


def question(measure: str, domain: str = "movie") -> Question:
    return Question(
        id=f"toy/{measure}/00000",
        dataset="toy",
        domain=domain,
        measure=measure,
        scale="knowledgeability",
        format=QuestionFormat.MCQ,
        target=Target(kind="user", id="u1", text="user u1"),
        history=[Entry(id=f"h{i}", text=f"DESCRIPTION-{i}") for i in range(3)],
        candidates=[Entry(id=f"c{i}", text=f"OPTION-{i}") for i in range(4)],
        answer_index=1,
        seed=0,
    )


IMAGES = {"h0": "/img/h0.png", "h1": "/img/h1.png", "h2": "/img/h2.png"}


def test_the_variant_is_registered() -> None:
    assert VARIANT in VARIANTS


@pytest.mark.parametrize(
    ("measure", "domain", "noun"),
    [("mm_poster", "movie", "poster"), ("mm_image", "product", "product image")],
)
def test_mm_prompts_get_the_last_history_image(measure: str, domain: str, noun: str) -> None:
    plain = render_prompt(question(measure, domain))
    with_image = render_prompt(question(measure, domain), VARIANT, images=IMAGES)
    (message,) = with_image.messages
    assert message.images == ("/img/h2.png",)
    assert f"{noun} of item 3" in message.content
    # Same question text otherwise, and the answer instruction still comes last.
    assert (
        message.content.replace(message.content.split("\n\n")[-2] + "\n\n", "") == plain.messages[0].content
    )
    assert message.content.rstrip().endswith(plain.messages[0].content.rstrip().split("\n\n")[-1])
    assert with_image.labels == plain.labels and with_image.option_texts == plain.option_texts


def test_other_measures_render_as_zero_shot() -> None:
    q = question("kg_movie_genre")
    assert render_prompt(q, VARIANT, images=IMAGES) == render_prompt(q)


def test_missing_images_are_errors() -> None:
    with pytest.raises(ConfigError, match="needs the item images"):
        render_prompt(question("mm_poster"), VARIANT)
    with pytest.raises(DataError, match="'h2'"):
        render_prompt(question("mm_poster"), VARIANT, images={"h0": "/img/h0.png"})


def test_eval_with_the_variant_sends_the_image(tmp_path: Path) -> None:
    from recworld.evaluation import EvalConfig, evaluate_config
    from recworld.lrworld import BuildConfig, build_suite
    from recworld.runner import RunnerConfig

    dataset = make_dataset(tmp_path, n_items=30, n_users=20)
    described = with_descriptions(dataset, {f"m{i:02d}": expected_description(i) for i in range(30)})
    suite = tmp_path / "suite"
    roots = ImageRoots.of([tmp_path / "posters"])
    manifest = build_suite(
        described, BuildConfig(measures=("mm_poster",), per_measure=4), suite, image_roots=roots
    )
    assert manifest.images.to_json() == {
        "roots": roots.to_json(),
        "checked": 30,
        "refused": {},
        "warning": None,
    }
    images = suite_images(suite, roots)  # the roots as eval's --image-root gives them
    local = {i: ref for i, ref in local_references(dataset) if ref is not None and not is_remote(ref)}
    assert images == {i: str(resolve_local(ref, None)) for i, ref in local.items()}

    config = EvalConfig(
        suite_dir=suite, model="scripted", variant=VARIANT, runner=RunnerConfig(progress=False)
    )
    run_dir = evaluate_config(config.model_copy(update={"image_roots": (tmp_path / "posters",)})).run_dir
    samples = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert samples
    for sample in samples:
        (message,) = sample["prompt"]
        q = Question.model_validate_json(
            next(
                line
                for line in (suite / "questions" / "mm_poster.jsonl").read_text().splitlines()
                if json.loads(line)["id"] == sample["question_id"]
            )
        )
        assert message["images"] == [images[q.history[-1].id]]
