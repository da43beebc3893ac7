"""What every export target shares: the suite it reads, one row per question, provenance, and the writer.

A row is the question as other harnesses need it: the prompt ``recworld eval``
sends (zero-shot variant, rendered by :func:`~recworld.lrworld.prompts.render_prompt`),
the option labels and texts, the gold label, and the question's own fields. Rows
depend only on the suite's question files, so the same suite always exports to
the same bytes (the recworld version is stamped in, so a new version may differ).

The output directory is written atomically. A previous export lists the files it
wrote in ``recworld-export.json``; re-exporting replaces exactly those and keeps
anything else found there (a user's notes), so an export never deletes what it
did not write.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recworld import __version__
from recworld.errors import DataError
from recworld.io import (
    OUTPUT_MARKER,
    OutputMarker,
    atomic_directory,
    atomic_write_json,
    claim_output_dir,
    dumps_canonical,
    read_json_object,
    read_models,
)
from recworld.lrworld.manifest import SuiteManifest, read_manifest
from recworld.lrworld.prompts import render_prompt
from recworld.lrworld.schema import Question

OUTPUT_KIND = "recworld-export"
PROVENANCE_NAME = "recworld-export.json"
EXPORT_SCHEMA = "recworld.export/1"
VARIANT = "zero-shot"
# recworld's completion prompt for a base model ends with this cue (recworld.models._common.ANSWER_CUE);
# each choice is then scored as " " + label. Repeated here so export never imports the model backends.
ANSWER_CUE = "Answer:"


@dataclass(frozen=True)
class Suite:
    """A suite as export reads it: its manifest and its questions per measure (in file order)."""

    path: Path
    manifest: SuiteManifest
    questions: dict[str, list[Question]]

    @property
    def measures(self) -> list[str]:
        return sorted(self.questions)


def load_suite(suite_dir: Path, measures: tuple[str, ...] | None = None) -> Suite:
    """Read ``suite_dir``; each question file must match the hash its manifest recorded."""
    suite_dir = Path(suite_dir)
    manifest = read_manifest(suite_dir)
    wanted = sorted(manifest.counts) if measures is None else list(measures)
    unknown = [m for m in wanted if m not in manifest.counts]
    if unknown:
        known = ", ".join(sorted(manifest.counts))
        raise DataError(f"{suite_dir}: no measure {', '.join(unknown)} in this suite (it has: {known})")
    questions: dict[str, list[Question]] = {}
    for measure in wanted:
        path = suite_dir / "questions" / f"{measure}.jsonl"
        if not path.is_file():
            raise DataError(f"{path}: question file missing (the manifest lists {measure})")
        expected = manifest.questions_sha256.get(measure)
        if expected and hashlib.sha256(path.read_bytes()).hexdigest() != expected:
            raise DataError(f"{path}: does not match the hash in manifest.json; rebuild the suite")
        questions[measure] = read_models(path, Question)
    return Suite(suite_dir, manifest, questions)


def question_row(question: Question) -> dict[str, Any]:
    """One question as a flat record every target writes (the prompt is recworld's own)."""
    prompt = render_prompt(question, VARIANT)
    return {
        "id": question.id,
        "dataset": question.dataset,
        "domain": question.domain,
        "measure": question.measure,
        "scale": question.scale,
        "format": question.format.value,
        "prompt": prompt.messages[0].content,
        "labels": list(prompt.labels),
        "options": list(prompt.option_texts),
        "candidate_ids": [c.id for c in question.candidates],
        "answer_index": question.answer_index,
        "answer": prompt.labels[question.answer_index],
        "target_kind": question.target.kind,
        "target_id": question.target.id,
        "target_text": question.target.text,
        "history": [e.text for e in question.history],
        "history_ids": [e.id for e in question.history],
        "evidence": dumps_canonical(question.evidence),
        "seed": question.seed,
    }


def provenance(suite: Suite, target: str) -> dict[str, Any]:
    """Where an export came from: enough to rebuild the suite and to tell two exports apart."""
    m = suite.manifest
    return {
        "schema": EXPORT_SCHEMA,
        "target": target,
        "recworld_version": __version__,
        "prompt_variant": VARIANT,
        "suite": {
            "dataset": m.dataset,
            "domain": m.domain,
            "fingerprint": m.fingerprint,
            "seed": m.seed,
            "generator": m.generator,
            "built_by": m.created_by,
            "questions_sha256": {k: m.questions_sha256.get(k, "") for k in suite.measures},
        },
        "counts": {k: len(v) for k, v in sorted(suite.questions.items())},
    }


def task_slug(text: str) -> str:
    """A name safe in task ids and file names ("ml-100k" -> "ml_100k")."""
    return "".join(ch if ch.isalnum() else "_" for ch in text.lower()).strip("_")


# -- writing ----------------------------------------------------------------------------------------


def _listed_files(folder: Path) -> set[str]:
    """The files a previous export in ``folder`` says it wrote (relative POSIX paths)."""
    path = folder / PROVENANCE_NAME
    if not path.is_file():
        return set()
    files = read_json_object(path).get("files", {})
    return set(files) if isinstance(files, dict) else set()


def _carry_foreign(old: Path, staging: Path, owned: set[str]) -> None:
    """Copy into ``staging`` every file of ``old`` the old export did not write and the new one lacks."""
    for root, _dirs, names in os.walk(old):
        for name in names:
            source = Path(root) / name
            relative = source.relative_to(old).as_posix()
            if relative in owned or relative in (PROVENANCE_NAME, OUTPUT_MARKER):
                continue
            destination = staging / relative
            if destination.exists() or destination.is_symlink():
                continue
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination, follow_symlinks=False)


def _digest_files(staging: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for path in sorted(p for p in staging.rglob("*") if p.is_file()):
        found[path.relative_to(staging).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


@contextlib.contextmanager
def export_directory(out: Path, meta: dict[str, Any]) -> Iterator[Path]:
    """Stage an export; on success add provenance (with each file's hash) and the marker, then swap in.

    ``out`` must be new, empty, or a previous export (:func:`recworld.io.claim_output_dir`).
    """
    target = claim_output_dir(Path(out), OUTPUT_KIND)
    owned = _listed_files(target) if target.is_dir() else set()
    with atomic_directory(target, carry=False) as staging:
        yield staging
        written = _digest_files(staging)  # before foreign files join: only ours are listed
        atomic_write_json(staging / PROVENANCE_NAME, {**meta, "files": written})
        marker = OutputMarker(kind=OUTPUT_KIND, created_by=f"recworld {__version__}")
        atomic_write_json(staging / OUTPUT_MARKER, marker.model_dump(mode="json", by_alias=True))
        if target.is_dir():
            _carry_foreign(target, staging, owned)


def write_text(path: Path, text: str) -> None:
    """Plain UTF-8 with LF newlines: the staging directory is already atomic as a whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    write_text(path, "".join(dumps_canonical(row) + "\n" for row in rows))
