"""Exports are data, never code (review cases D1-D6; F6, F7, F8).

Suites with hostile names (a dataset folder or a zip's inner folder holding
``\"\"\"`` and a newline, a crafted manifest whose dataset name carries Python
and YAML payloads) are exported to every target and loaded as the harnesses
load them (:mod:`harness_loaders`): nothing runs, no canary file appears, and
the names come back as the data they were. Crafted measure ids (YAML tags,
Python code, path traversal), scales and missing hashes are refused when the
suite is read, before anything is written.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from helpers.cli import run_recworld
from helpers.security.harness_loaders import Load, load_all, load_yaml_unsafely
from helpers.security.worlds import write_ml_latest_small
from recworld.errors import DataError
from recworld.export.common import inside, load_suite, task_slug
from recworld.export.run import TARGETS, export_suite

PY_PAYLOAD = 'x"""\nimport os; os.system("touch PWNED_AT_IMPORT")\ndef _z():\n    """'
ZIP_PAYLOAD = PY_PAYLOAD.replace("PWNED_AT_IMPORT", "PWNED_FROM_ZIP")
YAML_PAYLOAD = '\nx: !!python/object/apply:os.system ["touch PWNED_DATASET_YAML"]\ny: "'
CANARIES = (
    "PWNED_AT_IMPORT",
    "PWNED_FROM_ZIP",
    "PWNED_DATASET_YAML",
    "PWNED_LMEVAL",
    "PWNED_INSPECT_MEASURE",
)
MEASURES = ("kg_movie_genre", "mem_item_item")


def _build(dataset: Path, out: Path) -> Path:
    argv = ["build", "--dataset", str(dataset), "--out", str(out), "--per-measure", "5", "--no-progress"]
    ran = run_recworld(*argv, "--measures", ",".join(MEASURES), "--allow-weak-neumf")
    assert ran.returncode == 0, ran.stderr
    return out


@pytest.fixture(scope="module")
def hostile_suites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """D1 (folder name), D1b (zip inner folder name) and a crafted manifest dataset name."""
    work = tmp_path_factory.mktemp("hostile-suites")
    folder = write_ml_latest_small(work / "data" / "inj" / PY_PAYLOAD)
    suites = {"folder": _build(folder, work / "suites" / "folder")}
    archive = work / "data" / "evil-name.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for name in ("movies.csv", "ratings.csv", "links.csv"):
            zf.write(folder / name, f"{ZIP_PAYLOAD}/{name}")
    suites["zip"] = _build(archive, work / "suites" / "zip")
    crafted = work / "suites" / "manifest"
    shutil.copytree(suites["folder"], crafted)
    manifest = json.loads((crafted / "manifest.json").read_text())
    manifest["dataset"] = PY_PAYLOAD + YAML_PAYLOAD
    (crafted / "manifest.json").write_text(json.dumps(manifest))
    suites["manifest"] = crafted
    return suites


def _canaries(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.name in CANARIES]


# Loading an export runs the installed harness. The fast suite exports every hostile name to the
# Hugging Face target, and loads the folder name's export in both harnesses and the manifest's
# (Python and YAML payloads) in lm-eval; the zip's payload is the folder's text with another
# canary, so its two harness loads, and the manifest's Inspect load (its Python part is the
# folder's), are marked slow.
INJECTION_SLOW = {("zip", "lm-eval"), ("zip", "inspect"), ("manifest", "inspect")}
INJECTION_CASES = [
    pytest.param(
        which,
        target,
        id=f"{which}-{target}",
        marks=pytest.mark.slow if (which, target) in INJECTION_SLOW else (),
    )
    for target in sorted(TARGETS)
    for which in ("folder", "zip", "manifest")
]
LOADER = {"lm-eval": "lm-eval", "inspect": "inspect", "hf": "datasets"}


@dataclass(frozen=True)
class Exported:
    """One case's export, as the harness loaded it: ``work`` is the folder the load ran in."""

    work: Path
    out: Path
    result: dict[str, Any]
    found: list[Any]


@pytest.fixture(scope="module")
def exported(
    hostile_suites: dict[str, Path],
    harness_python: Path,
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[tuple[str, str], Exported]:
    """Every selected case exported to its own folder, then all loaded in one harness interpreter.

    Each load runs in a fresh fork of that interpreter, in its case's folder (where a payload's
    ``touch`` would leave its canary); starting a harness is most of a load's cost.
    """
    root = tmp_path_factory.mktemp("hostile-exports")
    wanted = [
        (item.callspec.params["which"], item.callspec.params["target"])
        for item in request.session.items
        if item.module is request.module
        and isinstance(item, pytest.Function)
        and item.originalname == "test_hostile_names_export_as_data_and_load_without_running"
    ]
    cases: dict[tuple[str, str], tuple[Path, Path, dict[str, Any]]] = {}
    loads = []
    for which, target in wanted:
        work = root / f"{which}-{target}"
        work.mkdir()
        out = work / "export"
        cases[(which, target)] = (work, out, export_suite(hostile_suites[which], target, out))
        if target == "inspect":  # inspect resolves a task file relative to the working directory
            loads.append(Load("inspect", Path("recworld_inspect.py"), out))
        else:
            loads.append(Load(LOADER[target], out, work))
    found = load_all(loads, root / ".harness")
    return {
        key: Exported(work, out, result, names)
        for (key, (work, out, result)), names in zip(cases.items(), found, strict=True)
    }


@pytest.mark.usefixtures("harness_python")  # the real harnesses load every export (no stand-in)
@pytest.mark.parametrize(("which", "target"), INJECTION_CASES)
def test_hostile_names_export_as_data_and_load_without_running(
    hostile_suites: dict[str, Path],
    exported: dict[tuple[str, str], Exported],
    work: Path,
    which: str,
    target: str,
) -> None:
    dataset = load_suite(hostile_suites[which]).manifest.dataset
    assert '"""' in dataset and "\n" in dataset  # the name really is hostile
    case = exported[(which, target)]
    out = case.out
    prefix = f"recworld_{task_slug(dataset)}"
    assert prefix.isidentifier() and prefix.isascii()
    if target == "lm-eval":
        _check_lm_eval(out, prefix, case.found)
    elif target == "inspect":
        assert case.found == sorted(f"{prefix}_{m}" for m in MEASURES)
    else:
        header = load_yaml_unsafely_text((out / "README.md").read_text().split("---\n")[1])
        assert header["pretty_name"] == f"RecWorld LRWorld suite on {dataset}"  # the name, back as data
        assert [c["config_name"] for c in header["configs"]] == list(MEASURES)
        assert dict(case.found) == dict.fromkeys(MEASURES, 5)
    assert case.result["suite"]["dataset"] == dataset
    # where the harness loaded it, and where this test's in-process unsafe YAML reads ran
    assert _canaries(case.work) == [] and _canaries(work) == [] and _canaries(Path.cwd()) == []


def load_yaml_unsafely_text(text: str) -> dict[str, object]:
    path = Path("front-matter.yaml")
    path.write_text(text, encoding="utf-8")
    return load_yaml_unsafely(path)


def _check_lm_eval(out: Path, prefix: str, found: list[Any]) -> None:
    tasks = {f"{prefix}_{m}": m for m in MEASURES}
    for name, measure in tasks.items():
        for task, path in ((name, out / f"{name}.yaml"), (f"{name}_gen", out / f"{name}_gen.yaml")):
            loaded = load_yaml_unsafely(path)
            assert loaded["task"] == task
            assert loaded["dataset_kwargs"] == {"measure": measure}
            assert loaded["custom_dataset"] == ("!function", "recworld_lm_eval.load_docs")
    group = load_yaml_unsafely(out / f"_{prefix}.yaml")
    assert group["task"] == list(tasks)
    # found: what the installed lm-eval's TaskManager listed (after its load_yaml of every file)
    assert set(tasks) | {f"{t}_gen" for t in tasks} | {prefix} <= set(found)


CRAFTED_IDS = [
    '\nx: !!python/object/apply:os.system ["touch PWNED_LMEVAL"]',  # D2
    'm(solver="generate"):\n    pass\nimport os; os.system("touch PWNED_INSPECT_MEASURE")\ndef y',  # D3
    "../../../victim/owned",  # D4
    "/tmp/owned",
    "Kg_Movie_Genre",
    "kg movie",
    "",
]


def _craft(suite: Path, dest: Path, measure: str) -> Path:
    """The review's ``craft_suite.py``: a copy whose manifest adds ``measure`` with a matching hash."""
    shutil.copytree(suite, dest)
    source = (dest / "questions" / "kg_movie_genre.jsonl").read_bytes()
    target = dest / "questions" / f"{measure}.jsonl"
    if target.resolve().is_relative_to(dest.resolve()) and "\n" not in measure and measure:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source)
    manifest = json.loads((dest / "manifest.json").read_text())
    manifest["counts"][measure] = 5
    manifest["questions_sha256"][measure] = hashlib.sha256(source).hexdigest()
    (dest / "manifest.json").write_text(json.dumps(manifest))
    return dest


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("measure", CRAFTED_IDS, ids=range(len(CRAFTED_IDS)))
def test_crafted_measure_ids_are_refused_before_anything_is_written(
    evil_suite: Path, work: Path, measure: str, target: str
) -> None:
    crafted = _craft(evil_suite, work / "crafted", measure)
    victim = work / "victim"
    victim.mkdir()
    (victim / "owned.jsonl").write_text("the user's file\n")
    out = work / "exports" / "deep" / "a" / "b" / "out"
    with pytest.raises(DataError, match="not a measure id"):
        export_suite(crafted, target, out)
    assert not (work / "exports").exists()  # nothing written, inside --out or outside it
    assert (victim / "owned.jsonl").read_text() == "the user's file\n"
    assert _canaries(work) == []


def test_a_hostile_measures_option_is_refused(evil_suite: Path, work: Path) -> None:
    ran = run_recworld("export", evil_suite, "--to", "inspect", "--out", work / "x", "--measures", "../../x")
    assert ran.returncode == 2 and "no measure '../../x'" in ran.stderr
    assert not (work / "x").exists()


@pytest.mark.parametrize("how", ["missing", "empty", "not-hex"])
def test_the_question_hashes_are_required(evil_suite: Path, work: Path, how: str) -> None:
    """D5/F8: ``if expected and ...`` skipped the check when the manifest listed no hash."""
    crafted = work / "crafted"
    shutil.copytree(evil_suite, crafted)
    manifest = json.loads((crafted / "manifest.json").read_text())
    if how == "missing":
        del manifest["questions_sha256"]["kg_movie_genre"]
    elif how == "empty":
        manifest["questions_sha256"] = {}
    else:
        manifest["questions_sha256"]["kg_movie_genre"] = "x" * 64
    (crafted / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(DataError, match="questions_sha256 for kg_movie_genre"):
        export_suite(crafted, "lm-eval", work / "out")
    assert not (work / "out").exists()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("scale", '\nx: !!python/object/apply:os.system ["touch PWNED_LMEVAL"]', "scale"),
        ("scale", "../../victim", "scale"),
        ("measure", "mem_item_item", "question in the kg_movie_genre file"),
    ],
)
def test_question_fields_that_become_names_are_checked(
    evil_suite: Path, work: Path, field: str, value: str, message: str
) -> None:
    crafted = work / "crafted"
    shutil.copytree(evil_suite, crafted)
    path = crafted / "questions" / "kg_movie_genre.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[2][field] = value
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    manifest = json.loads((crafted / "manifest.json").read_text())
    manifest["questions_sha256"]["kg_movie_genre"] = hashlib.sha256(path.read_bytes()).hexdigest()
    (crafted / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(DataError, match=message):
        export_suite(crafted, "lm-eval", work / "out")
    assert not (work / "out").exists() and _canaries(work) == []


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_hostile_titles_stay_in_the_data_files(evil_suite: Path, work: Path, target: str) -> None:
    """D6: titles holding ``\"\"\"``, ``{{7*7}}``, ``${x}``, ``%s`` reach only the JSON/Parquet data."""
    out = work / "export"
    export_suite(evil_suite, target, out)
    generated = [p for p in out.rglob("*") if p.suffix in (".py", ".yaml") or p.name == "README.md"]
    assert generated
    for path in generated:
        text = path.read_text(encoding="utf-8")
        assert "PWNED_TITLE" not in text and "{{7*7}}" not in text and "onerror" not in text, path
    if target != "hf":
        data = "".join(p.read_text(encoding="utf-8") for p in (out / "data").glob("*.jsonl"))
        assert (
            "PWNED_TITLE" in data or "{{7*7}}" in data or "onerror" in data
        )  # the titles are there, as data


@pytest.mark.parametrize(
    "relative", ["../x", "/abs/x", "a/../../b", "a/./b", "a\x00b", "data/..", "", "a//b"]
)
def test_paths_are_confined_to_out(tmp_path: Path, relative: str) -> None:
    with pytest.raises(DataError, match="refusing to write"):
        inside(tmp_path / "out", relative)
    assert (
        inside(tmp_path / "out", "data/kg_movie_genre.jsonl")
        == tmp_path / "out" / "data" / "kg_movie_genre.jsonl"
    )
