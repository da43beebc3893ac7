"""The describe pipeline: images reach the model, descriptions land in the dataset, reruns resume."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

from helpers.multimodal import draw_poster, expected_description, looking_model, make_dataset
from recworld.chat import Request
from recworld.data.dataset import Dataset
from recworld.data.image_refs import ImageRoots
from recworld.models.scripted import ScriptedModel
from recworld.multimodal.describe import (
    DescribeConfig,
    DescribeResult,
    ImageKind,
    describe_dataset,
    instruction,
    write_described,
)
from recworld.multimodal.journal import DescriptionJournal
from recworld.runner import ResponseCache, Runner, RunnerConfig

QUIET = RunnerConfig(concurrency=4, progress=False, max_retries=0)


def run(
    dataset: Dataset,
    model: ScriptedModel,
    state: Path,
    config: DescribeConfig | None = None,
    *,
    cache: bool = True,
) -> DescribeResult:
    async def go() -> DescribeResult:
        store = ResponseCache(state / "cache.sqlite") if cache else None
        runner = Runner(model, QUIET, store)
        journal = DescriptionJournal(state / "journal.jsonl")
        try:
            return await describe_dataset(
                dataset,
                runner,
                journal,
                model="scripted:looker",
                roots=ImageRoots.of([state.parent]),
                config=config,
            )
        finally:
            await runner.aclose()
            journal.close()
            if store is not None:
                store.close()

    return asyncio.run(go())


def test_descriptions_land_in_the_field_from_the_pixels(tmp_path: Path) -> None:
    dataset = make_dataset(tmp_path, n_items=12, n_users=6)
    model = looking_model()
    result = run(dataset, model, tmp_path / "state")

    assert len(model.calls) == 12
    for request in model.calls:
        (message,) = request.messages
        assert message.content == instruction(ImageKind.POSTER)  # movie dataset -> poster instruction
        assert len(message.images) == 1 and Path(message.images[0]).is_file()
    items = result.dataset.items.set_index("item_id")
    for i in range(12):
        assert items.loc[f"m{i:02d}", "image_description"] == expected_description(i)
    assert result.report.described == 12 and result.report.sent == 12 and not result.report.failed

    out = write_described(result, tmp_path / "out")
    reloaded = Dataset.load(out)
    assert reloaded.has_item_field("image_description")
    rows = [json.loads(line) for line in (out / "descriptions.jsonl").read_text().splitlines()]
    assert [r["item_id"] for r in rows] == sorted(f"m{i:02d}" for i in range(12))
    for row in rows:
        digest = hashlib.sha256(Path(row["image"]).read_bytes()).hexdigest()
        assert row["sha256"] == digest
        assert row["model"] == "scripted:looker"
        assert (
            row["description"] == reloaded.items.set_index("item_id").loc[row["item_id"], "image_description"]
        )


def test_product_datasets_get_the_product_instruction(tmp_path: Path) -> None:
    movie = make_dataset(tmp_path, n_items=3, n_users=2)
    product = Dataset.from_frames("shop", "product", movie.interactions, movie.items)
    model = looking_model()
    run(product, model, tmp_path / "state")
    assert {r.messages[0].content for r in model.calls} == {instruction(ImageKind.PRODUCT)}
    assert instruction(ImageKind.PRODUCT) != instruction(ImageKind.POSTER)


def test_rerun_sends_nothing_new_even_without_the_cache(tmp_path: Path) -> None:
    dataset = make_dataset(tmp_path, n_items=10, n_users=5)
    first = run(dataset, looking_model(), tmp_path / "state")
    again = looking_model()
    second = run(dataset, again, tmp_path / "state", cache=False)  # the journal alone suffices
    assert again.calls == []
    assert second.report.resumed == 10 and second.report.sent == 0
    assert second.dataset.items.equals(first.dataset.items)


def test_a_run_killed_half_way_resumes_with_the_rest(tmp_path: Path) -> None:
    dataset = make_dataset(tmp_path, n_items=10, n_users=5)
    state = tmp_path / "state"
    run(dataset, looking_model(), state, DescribeConfig(limit=4))
    journal = state / "journal.jsonl"
    with journal.open("ab") as handle:
        handle.write(b'{"item_id": "m09", "descr')  # a line torn by a kill
    rest = looking_model()
    result = run(dataset, rest, state, cache=False)
    sent = sorted(Path(r.messages[0].images[0]).stem for r in rest.calls)
    assert sent == [f"m{i:02d}" for i in range(4, 10)]
    assert result.report.resumed == 4 and result.report.described == 10
    assert journal.read_bytes().endswith(b"\n")


def test_a_changed_image_is_described_again(tmp_path: Path) -> None:
    dataset = make_dataset(tmp_path, n_items=6, n_users=3)
    state = tmp_path / "state"
    run(dataset, looking_model(), state)
    draw_poster(tmp_path / "posters" / "m02.png", 7)  # new pixels (no other item's) under the same path
    model = looking_model()
    result = run(dataset, model, state)
    assert [Path(r.messages[0].images[0]).stem for r in model.calls] == ["m02"]
    described = result.dataset.items.set_index("item_id").loc["m02", "image_description"]
    assert described == expected_description(7)


def test_the_cache_knows_images_by_content_not_path(tmp_path: Path) -> None:
    dataset = make_dataset(tmp_path, n_items=6, n_users=3)
    state = tmp_path / "state"
    run(dataset, looking_model(), state)
    (state / "journal.jsonl").unlink()
    draw_poster(tmp_path / "posters" / "m02.png", 3)  # now byte-identical to m03's poster
    model = looking_model()
    result = run(dataset, model, state)
    assert model.calls == [] and result.report.cache_hits == 6
    assert result.dataset.items.set_index("item_id").loc["m02", "image_description"] == expected_description(
        3
    )


def test_a_broken_image_is_skipped_counted_and_named(tmp_path: Path) -> None:
    dataset = make_dataset(tmp_path, n_items=5, n_users=3)
    broken = tmp_path / "posters" / "m03.png"
    broken.write_bytes(broken.read_bytes()[:40])  # truncated PNG
    model = looking_model()
    result = run(dataset, model, tmp_path / "state")
    sent = sorted(Path(r.messages[0].images[0]).stem for r in model.calls)
    assert sent == ["m00", "m01", "m02", "m04"]  # checked before anything was sent
    assert result.report.refused == {"unreadable image": 1}
    assert result.report.warning is not None and "m03.png" in result.report.warning
    assert result.report.with_local_image == 4 and result.report.described == 4


def test_a_missing_image_file_is_skipped_and_named(tmp_path: Path) -> None:
    dataset = make_dataset(tmp_path, n_items=5, n_users=3)
    (tmp_path / "posters" / "m01.png").unlink()
    result = run(dataset, looking_model(), tmp_path / "state")
    assert result.report.refused == {"missing": 1}
    assert result.report.warning is not None and "m01.png" in result.report.warning
    assert "item 'm01'" in result.report.warning


def test_url_only_images_are_skipped_and_counted(tmp_path: Path) -> None:
    dataset = make_dataset(tmp_path, n_items=8, n_users=4, urls=3)
    model = looking_model()
    result = run(dataset, model, tmp_path / "state")
    assert len(model.calls) == 5
    assert result.report.skipped_remote == 3 and result.report.described == 5
    items = result.dataset.items.set_index("item_id")
    assert items.loc[["m05", "m06", "m07"], "image_description"].isna().all()


def test_empty_descriptions_fail_and_stay_out_of_the_dataset(tmp_path: Path) -> None:
    dataset = make_dataset(tmp_path, n_items=4, n_users=2)

    def blank_for_m01(request: Request) -> str:
        return "   " if request.messages[0].images[0].endswith("m01.png") else "A poster."

    result = run(dataset, ScriptedModel(blank_for_m01, name="looker"), tmp_path / "state")
    assert set(result.report.failed) == {"m01"}
    items = result.dataset.items.set_index("item_id")
    assert items.loc["m01", "image_description"] is None
    assert items.loc["m00", "image_description"] == "A poster."
    # The failure is not journaled, so a rerun (same model name, cache off) asks again for it only.
    retry = looking_model()
    run(dataset, retry, tmp_path / "state", cache=False)
    assert [Path(r.messages[0].images[0]).stem for r in retry.calls] == ["m01"]


def test_the_mm_poster_builder_shows_the_descriptions(tmp_path: Path) -> None:
    from recworld.lrworld import BuildConfig, build_suite
    from recworld.lrworld.schema import Question

    dataset = make_dataset(tmp_path, n_items=30, n_users=20)
    result = run(dataset, looking_model(), tmp_path / "state")
    config = BuildConfig(measures=("mm_poster",), per_measure=5)
    manifest = build_suite(result.dataset, config, tmp_path / "suite")
    assert manifest.counts["mm_poster"] > 0
    described = set(result.dataset.items["image_description"])
    lines = (tmp_path / "suite" / "questions" / "mm_poster.jsonl").read_text().splitlines()
    for line in lines:
        question = Question.model_validate_json(line)
        shown = [e.text for e in (*question.history, *question.candidates)]
        assert set(shown) <= described
