"""Suite directories: layout, manifest, determinism, skips, atomicity, and the ``build`` command."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from helpers import child_env
from helpers.cli import run_recworld
from helpers.lrworld.checks import FAST_NEUMF
from helpers.lrworld.datasets import make_movie_dataset
from recworld.data.dataset import Dataset
from recworld.errors import ConfigError, DataError
from recworld.io import OUTPUT_MARKER
from recworld.lrworld import catalogue
from recworld.lrworld import suite as suite_module
from recworld.lrworld.config import BuildConfig
from recworld.lrworld.manifest import SuiteManifest, read_manifest
from recworld.lrworld.schema import Question
from recworld.lrworld.suite import MANIFEST_SCHEMA, build_suite


def cfg(**kw: Any) -> BuildConfig:
    base: dict[str, Any] = {"per_measure": 15, "neumf": FAST_NEUMF}
    base.update(kw)
    return BuildConfig.model_validate(base)


def files(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / "questions").glob("*.jsonl"))}


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SuiteManifest]:
    out = tmp_path_factory.mktemp("suites") / "toy"
    return out, build_suite(make_movie_dataset(), cfg(), out)


def test_layout_and_manifest(suite: tuple[Path, SuiteManifest]) -> None:
    out, manifest = suite
    on_disk = json.loads((out / "manifest.json").read_text())
    assert on_disk == manifest.to_json()
    assert read_manifest(out) == manifest  # read back typed, config included
    assert on_disk["schema"] == manifest.schema_id == MANIFEST_SCHEMA
    data = Dataset.load(out / "dataset")
    assert manifest.fingerprint == data.fingerprint() == make_movie_dataset().fingerprint()
    assert manifest.config == cfg()
    assert set(manifest.counts) == {p.stem for p in (out / "questions").glob("*.jsonl")}
    assert manifest.skipped == {}
    assert "neumf" in manifest.timings and "total" in manifest.timings
    for name, count in manifest.counts.items():
        lines = (out / "questions" / f"{name}.jsonl").read_text().splitlines()
        assert len(lines) == count == 15
        for n, line in enumerate(lines):
            q = Question.model_validate(json.loads(line))
            assert q.id == f"toy/{name}/{n:05d}"
            assert q.seed == 0
            assert json.dumps(q.to_json(), sort_keys=True, ensure_ascii=False, separators=(",", ":")) == line


def test_same_seed_gives_byte_identical_questions(suite: tuple[Path, SuiteManifest], tmp_path: Path) -> None:
    out, manifest = suite
    again = build_suite(make_movie_dataset(), cfg(), tmp_path / "again")
    assert files(tmp_path / "again") == files(out)
    assert again.questions_sha256 == manifest.questions_sha256


def test_different_seed_moves_positions(suite: tuple[Path, SuiteManifest], tmp_path: Path) -> None:
    out, _ = suite
    build_suite(
        make_movie_dataset(), cfg(seed=1, measures=("mem_item_item", "kg_movie_genre")), tmp_path / "s1"
    )

    def positions(root: Path, name: str) -> list[int]:
        lines = (root / "questions" / f"{name}.jsonl").read_text().splitlines()
        return [json.loads(line)["answer_index"] for line in lines]

    for name in ("mem_item_item", "kg_movie_genre"):
        assert positions(out, name) != positions(tmp_path / "s1", name)


def test_missing_fields_and_wrong_domain_are_reported(tmp_path: Path) -> None:
    bare = make_movie_dataset(full_fields=False)
    manifest = build_suite(
        bare, cfg(measures=("kg_movie_genre", "kg_movie_cast", "mm_poster", "taxo_leaf")), tmp_path / "s"
    )
    assert set(manifest.counts) == {"kg_movie_genre"}
    assert "cast" in manifest.skipped["kg_movie_cast"]
    assert "image_description" in manifest.skipped["mm_poster"]
    assert "product" in manifest.skipped["taxo_leaf"]
    everything = build_suite(bare, cfg(measures=None, per_measure=3), tmp_path / "all")
    assert set(everything.skipped) == {"kg_movie_cast", "kg_movie_director", "text_logline", "mm_poster"}


def test_short_histories_are_counted(tmp_path: Path) -> None:
    base = make_movie_dataset()
    extra = pd.DataFrame(
        {"user_id": ["s1", "s1", "s2"], "item_id": ["i1", "i2", "i3"], "timestamp": [1, 2, 3]}
    )
    data = Dataset.from_frames("toy", "movie", pd.concat([base.interactions, extra]), base.items)
    manifest = build_suite(data, cfg(measures=("kg_movie_genre",)), tmp_path / "s")
    assert manifest.users_skipped.too_short_history == 2
    assert "6 interactions" in manifest.users_skipped.rule


def test_failure_mid_build_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Boom:
        def unavailable(self, ctx: object) -> None:
            return None

        def build(self, *args: object) -> list[Question]:
            raise RuntimeError("boom")

    real = suite_module.builder_for
    genre = catalogue.MEASURES_BY_ID["kg_movie_genre"].builder
    monkeypatch.setattr(suite_module, "builder_for", lambda spec: Boom() if spec == genre else real(spec))
    out = tmp_path / "suite"
    with pytest.raises(RuntimeError):
        build_suite(make_movie_dataset(), cfg(measures=("assoc_rule", "kg_movie_genre")), out)
    assert list(tmp_path.iterdir()) == []


def test_failed_rebuild_keeps_the_old_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "suite"
    build_suite(make_movie_dataset(), cfg(measures=("assoc_rule",)), out)
    before = files(out)

    def explode(*args: object, **kw: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(Dataset, "save", explode)
    with pytest.raises(OSError):
        build_suite(make_movie_dataset(), cfg(measures=("assoc_rule",), seed=5), out)
    assert files(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["suite"]


def test_refuses_to_replace_a_foreign_directory(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="not written by recworld"):
        build_suite(make_movie_dataset(), cfg(measures=("assoc_rule",)), tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def add_runs_and_report(out: Path) -> dict[str, bytes]:
    """What a user adds beside a suite: eval runs, a report, their own notes."""
    (out / "runs" / "scripted").mkdir(parents=True)
    (out / "runs" / "scripted" / "samples.jsonl").write_bytes(b'{"question_id": "q"}\n')
    (out / "report").mkdir()
    (out / "report" / "report.md").write_text("# results\n")
    (out / "NOTES.md").write_text("why this suite exists\n")
    return {k: v for k, v in tree(out).items() if k.startswith(("runs", "report", "NOTES"))}


def test_rebuild_keeps_runs_and_report_byte_identical(tmp_path: Path) -> None:
    out = tmp_path / "suite"
    build_suite(make_movie_dataset(), cfg(measures=("assoc_rule",)), out)
    kept = add_runs_and_report(out)
    manifest = build_suite(make_movie_dataset(), cfg(measures=("kg_movie_genre",), seed=4), out)
    after = tree(out)
    assert {k: after[k] for k in kept} == kept
    assert sorted(p.name for p in (out / "questions").iterdir()) == ["kg_movie_genre.jsonl"]
    assert read_manifest(out) == manifest
    assert sorted(p.name for p in tmp_path.iterdir()) == ["suite"]


def test_a_suite_built_before_markers_needs_force_and_keeps_its_runs(tmp_path: Path) -> None:
    out = tmp_path / "suite"
    build_suite(make_movie_dataset(), cfg(measures=("assoc_rule",)), out)
    (out / OUTPUT_MARKER).unlink()
    kept = add_runs_and_report(out)
    with pytest.raises(ConfigError, match=r"not written by recworld.*--force"):  # no recognition by name
        build_suite(make_movie_dataset(), cfg(measures=("assoc_rule",)), out)
    build_suite(make_movie_dataset(), cfg(measures=("assoc_rule",)), out, force=True)
    assert {k: tree(out)[k] for k in kept} == kept


def test_force_writes_into_a_foreign_directory_keeping_its_files(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    build_suite(make_movie_dataset(), cfg(measures=("assoc_rule",)), tmp_path, force=True)
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert (tmp_path / "questions" / "assoc_rule.jsonl").is_file()


KILL_MID_BUILD = """
import os, signal, sys
from pathlib import Path
from helpers.lrworld.datasets import make_movie_dataset
from recworld.data.dataset import Dataset
from recworld.lrworld.config import BuildConfig
from recworld.lrworld.suite import build_suite

def killed(self, directory):
    (Path(directory)).mkdir(parents=True, exist_ok=True)
    (Path(directory) / "half.parquet").write_bytes(b"x")
    os.kill(os.getpid(), signal.SIGKILL)

Dataset.save = killed
build_suite(make_movie_dataset(), BuildConfig(measures=("kg_movie_genre",), seed=9), Path(sys.argv[1]))
"""


def test_a_kill_mid_build_leaves_the_old_suite_intact(tmp_path: Path) -> None:
    out = tmp_path / "suite"
    build_suite(make_movie_dataset(), cfg(measures=("assoc_rule",)), out)
    add_runs_and_report(out)
    before = tree(out)
    script = tmp_path / "kill.py"
    script.write_text(KILL_MID_BUILD)
    done = subprocess.run([sys.executable, str(script), str(out)], env=child_env(), check=False)
    assert done.returncode == -signal.SIGKILL
    assert tree(out) == before
    assert read_manifest(out).counts == {"assoc_rule": 15}


def test_manifest_reader_validates_and_reads_version_1(
    suite: tuple[Path, SuiteManifest], tmp_path: Path
) -> None:
    out, built = suite
    record = read_manifest(out)
    manifest = built.to_json()
    assert record.schema_id == MANIFEST_SCHEMA and record.to_json() == manifest
    old = {k: v for k, v in manifest.items() if k != "images"} | {"schema": "recworld.manifest/1"}
    (tmp_path / "manifest.json").write_text(json.dumps(old))
    assert read_manifest(tmp_path).images.roots == []
    (tmp_path / "manifest.json").write_text(json.dumps(manifest | {"counts": {"assoc_rule": "many"}}))
    with pytest.raises(DataError, match=r"manifest\.json: field 'counts\.assoc_rule'"):
        read_manifest(tmp_path)


def test_build_config_round_trips_through_the_manifest(tmp_path: Path) -> None:
    """A config with every kind of field off its default is read back from manifest.json equal, typed."""
    config = BuildConfig(
        seed=7,
        per_measure=4,
        measures=("assoc_rule", "kg_movie_genre"),
        min_support=0.02,
        negatives="popularity",
        distractors="popularity",
        taxo_level=2,
        rules="lift",
        lastfm_history=8,
        neumf=FAST_NEUMF,
    )
    build_suite(make_movie_dataset(), config, tmp_path / "s")
    back = read_manifest(tmp_path / "s").config
    assert isinstance(back, BuildConfig) and back == config
    assert back.measures == ("assoc_rule", "kg_movie_genre") and back.neumf == FAST_NEUMF
    # A suite built before a knob existed reads with the knob's default (the old behaviour) ...
    on_disk = json.loads((tmp_path / "s" / "manifest.json").read_text())
    older = {k: v for k, v in on_disk["config"].items() if k not in ("rules", "lastfm_history")}
    (tmp_path / "manifest.json").write_text(json.dumps(on_disk | {"config": older}))
    assert read_manifest(tmp_path).config == config.model_copy(
        update={"rules": "confidence", "lastfm_history": 10}
    )
    # ... and a key the config does not know is an error naming it, never dropped.
    typo = on_disk | {"config": on_disk["config"] | {"negativez": "uniform"}}
    (tmp_path / "manifest.json").write_text(json.dumps(typo))
    with pytest.raises(DataError, match=r"field 'config\.negativez'"):
        read_manifest(tmp_path)


def test_nothing_buildable_is_a_data_error(tmp_path: Path) -> None:
    with pytest.raises(DataError):
        build_suite(make_movie_dataset(full_fields=False), cfg(measures=("kg_movie_cast",)), tmp_path / "s")
    assert not (tmp_path / "s").exists()


def test_config_rejects_typos_and_unknown_measures() -> None:
    with pytest.raises(ValueError, match="extra"):
        BuildConfig.model_validate({"per_measur": 3})
    with pytest.raises(ValueError, match="unknown measure"):
        BuildConfig(measures=("assoc_rules",))


# --- CLI ---------------------------------------------------------------------------------------------------


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return make_movie_dataset().save(tmp_path / "toy-cache")


def test_cli_builds_a_suite(cache_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "cli-suite"
    ran = run_recworld(
        "build", "--dataset", cache_dir, "--out", out, "--per-measure", "4", "--seed", "3",
        "--measures", "kg_movie_genre,assoc_rule,taxo_leaf",
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"] == {"kg_movie_genre": 4, "assoc_rule": 4} and manifest["seed"] == 3
    printed = ran.stdout
    # Piped (captured): the table is tab-separated lines under a header, every id and reason whole.
    lines = printed.splitlines()
    start = lines.index("measure\tquestions\tskipped\tseconds")
    rows = [line.split("\t") for line in lines[start + 1 :]]
    table = {cells[0]: cells for cells in rows if len(cells) == 4}
    assert set(table) == {"kg_movie_genre", "assoc_rule", "taxo_leaf"}
    assert [table[m][1] for m in ("kg_movie_genre", "assoc_rule", "taxo_leaf")] == ["4", "4", "0"]
    assert table["taxo_leaf"][2] == manifest["skipped"]["taxo_leaf"] != ""
    assert any(line.startswith("stages: ") for line in lines[start:])


@pytest.mark.parametrize(
    "args",
    [
        ["--measures", "nope"],
        ["--per-measure", "0"],
        ["--history-text", "genres"],
    ],
)
def test_cli_bad_options_exit_2(cache_dir: Path, tmp_path: Path, args: list[str]) -> None:
    out = tmp_path / "bad"
    ran = run_recworld("build", "--dataset", str(cache_dir), "--out", str(out), *args)
    assert ran.returncode == 2
    assert not out.exists()


def test_cli_bad_dataset_exits_2(tmp_path: Path) -> None:
    out = tmp_path / "bad"
    ran = run_recworld("build", "--dataset", str(tmp_path / "missing"), "--out", str(out))
    assert ran.returncode == 2
    assert "missing" in ran.stderr
    assert not out.exists()


def test_cli_refuses_a_foreign_out_with_one_line(cache_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "photos"
    out.mkdir()
    (out / "holiday.jpg").write_bytes(b"precious")
    argv = ["build", "--dataset", str(cache_dir), "--out", str(out), "--measures", "assoc_rule"]
    ran = run_recworld(*argv)
    assert ran.returncode == 2
    err = ran.stderr.strip().splitlines()
    assert len(err) == 1 and "--force" in err[0]
    assert tree(out) == {"holiday.jpg": b"precious"}
    ran = run_recworld(*argv, "--force", "--per-measure", "3")
    assert ran.returncode == 0, ran.stderr
    assert tree(out)["holiday.jpg"] == b"precious"
