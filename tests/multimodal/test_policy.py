"""``describe-images`` on the one failure policy and the one model road of ``recworld eval`` and LUNAR.

Failed images are judged with :func:`recworld.runner.judge` after the output is
written (exit 3 past ``--fail-on-error``, a warning below it), and a model object
handed to :func:`run_describe` is resolved as eval resolves one: used as it is,
never closed.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.cli import run_recworld
from helpers.multimodal import make_dataset
from recworld.chat import Request
from recworld.data.dataset import Dataset
from recworld.models.scripted import ScriptedModel
from recworld.multimodal.describe import DescribeFailedError, run_describe
from recworld.multimodal.job import DescribeJob
from recworld.runner import RunnerConfig

N_IMAGES = 6
QUIET = RunnerConfig(progress=False, max_retries=0)


class Kept(ScriptedModel):
    """A model object that notes whether anyone closed it (its caller owns it)."""

    closed = False

    async def aclose(self) -> None:
        self.closed = True


@pytest.fixture(scope="module")
def posters(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("posters")
    return Path(make_dataset(root, n_items=N_IMAGES, n_users=3).save(root / "toy"))


@settings(max_examples=12, deadline=None)
@given(failing=st.sets(st.integers(0, N_IMAGES - 1)), limit=st.sampled_from([0.0, 0.1, 0.2, 0.34, 0.5, 1.0]))
def test_too_many_failed_images_raise_after_writing_and_the_object_stays_open(
    posters: Path, failing: set[int], limit: float
) -> None:
    failing_ids = {f"m{i:02d}" for i in failing}

    def answer(request: Request) -> str:
        stem = Path(request.messages[0].images[0]).stem
        return "   " if stem in failing_ids else f"A poster for {stem}."

    model = Kept(answer, name="kept")
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "described"
        job = DescribeJob(
            dataset=str(posters), model="mine", out=out, fail_on_error=limit, runner=QUIET,
            image_roots=(posters.parent / "posters",),
        )  # fmt: skip
        too_many = len(failing) * 1.0 > limit * N_IMAGES  # k/n > limit, without a division
        if too_many:
            with pytest.raises(DescribeFailedError) as caught:
                run_describe(job, model=model)
            report = caught.value.report
            message = str(caught.value)
            assert message.startswith(f"mine: {len(failing)} of {N_IMAGES} images failed")
            assert f"more than --fail-on-error {limit:g} allows" in message
            assert f"first error: item {min(failing_ids)}: " in message and str(out) in message
        else:
            report = run_describe(job, model=model)
        described = Dataset.load(out).items.set_index("item_id")["image_description"]  # written either way
        assert set(report.failed) == failing_ids
        assert {i for i, text in described.items() if text is None} == failing_ids
        assert len(model.calls) == N_IMAGES and not model.closed  # the object was asked, never closed
        assert report.model == "mine"


def test_the_command_exits_3_in_one_line_past_the_limit_and_0_below_it(posters: Path, tmp_path: Path) -> None:
    script = tmp_path / "blank.json"
    script.write_text(json.dumps({"*": "   "}))
    argv = ["describe-images", "--dataset", str(posters), "--model", f"scripted:{script}", "--no-progress"]
    argv += ["--image-root", str(posters.parent / "posters"), "--out", str(tmp_path / "d")]
    ran = run_recworld(*argv)
    assert ran.returncode == 3  # RunError's code, as eval and every LUNAR stage
    (line,) = ran.stderr.strip().splitlines()
    assert line.startswith(f"recworld: error: scripted:{script}: {N_IMAGES} of {N_IMAGES} images failed")
    assert "first error: item m00: the model returned an empty description" in line
    assert f"{N_IMAGES} failed" in ran.stdout  # the summary still comes
    assert len(Dataset.load(tmp_path / "d").items) == N_IMAGES  # the output is written all the same

    ran = run_recworld(*argv, "--fail-on-error", "1")
    assert ran.returncode == 0, ran.stderr
    (warning,) = ran.stderr.strip().splitlines()
    assert warning.startswith("first failure: item m00: ")
