"""What every export target shares: the suite it reads, one row per question, provenance, and the writer.

A row is the question as other harnesses need it: the prompt ``recworld eval``
sends (zero-shot variant, rendered by :func:`~recworld.lrworld.prompts.render_prompt`),
the option labels and texts, the gold label, and the question's own fields. Rows
depend only on the suite's question files, so the same suite always exports to
the same bytes (the recworld version is stamped in, so a new version may differ).

The output directory is written atomically. A previous export's marker lists
the files it wrote (and ``recworld-export.json`` their hashes); re-exporting
replaces exactly those and keeps anything else found there (a user's notes, at
any depth), so an export never deletes what it did not write.

Exports are data, never code. A suite is untrusted input (it may come from a
shared zip), so :func:`load_suite` checks every identifier that becomes a name
in the export: measure ids match :data:`MEASURE_ID` (the catalogue's own
shape), scales are the catalogue's, every question file must carry the hash the
manifest recorded (a manifest without one is refused), and each question must
belong to the file it sits in. Every string then reaches a generated file
through a serialiser (``repr`` for Python, a YAML emitter for YAML, JSON for
data), and every path is confined to ``--out`` (:func:`inside`).
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recworld import __version__
from recworld.capped import read_capped, sha256_file
from recworld.errors import DataError
from recworld.io import (
    atomic_write_json,
    check_output_dir,
    dumps_canonical,
    output_directory,
    read_models,
)
from recworld.lrworld.catalogue import MEASURES_BY_ID
from recworld.lrworld.manifest import SuiteManifest, read_manifest
from recworld.lrworld.measure import Scale
from recworld.lrworld.prompts import render_prompt
from recworld.lrworld.schema import Question
from recworld.paths import slug

OUTPUT_KIND = "recworld-export"
PROVENANCE_NAME = "recworld-export.json"
EXPORT_SCHEMA = "recworld.export/1"
VARIANT = "zero-shot"
# recworld's completion prompt for a base model ends with this cue (recworld.models._common.ANSWER_CUE);
# each choice is then scored as " " + label. Repeated here so export never imports the model backends.
ANSWER_CUE = "Answer:"
# The shape of every catalogue id ("kg_movie_genre"); an id from a newer recworld must have it too.
MEASURE_ID = re.compile(r"[a-z][a-z0-9_]{0,63}")
QUESTIONS_LIMIT = 1 << 30  # one question file; ML-25M's largest is a few MB
SHA256 = re.compile(r"[0-9a-f]{64}")
SCALES = frozenset(scale.value for scale in Scale)
# One path component of a generated file: what every name above can produce.
_FILE_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}")


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
    """Read ``suite_dir``, checking every identifier and each question file against its recorded hash."""
    suite_dir = Path(suite_dir)
    manifest = read_manifest(suite_dir)
    manifest_path = suite_dir / "manifest.json"
    for measure in sorted({*manifest.counts, *manifest.questions_sha256}):
        check_measure_id(measure, manifest_path)
    wanted = sorted(manifest.counts) if measures is None else list(measures)
    unknown = [m for m in wanted if m not in manifest.counts]
    if unknown:
        known = ", ".join(sorted(manifest.counts))
        shown = ", ".join(repr(m) for m in unknown)
        raise DataError(f"{suite_dir}: no measure {shown} in this suite (it has: {known})")
    questions: dict[str, list[Question]] = {}
    for measure in wanted:
        path = suite_dir / "questions" / f"{measure}.jsonl"
        expected = manifest.questions_sha256.get(measure, "")
        if not SHA256.fullmatch(expected):
            raise DataError(
                f"lists no questions_sha256 for {measure}: an unverifiable question file is refused; "
                "rebuild the suite",
                path=manifest_path,
            )
        data = read_capped(
            path, limit=QUESTIONS_LIMIT, missing=f"question file missing (the manifest lists {measure})"
        )
        if hashlib.sha256(data).hexdigest() != expected:
            raise DataError(f"{path}: does not match the hash in manifest.json; rebuild the suite")
        questions[measure] = _checked(read_models(path, Question), measure, path)
    return Suite(suite_dir, manifest, questions)


def check_measure_id(measure: str, where: Path) -> None:
    """DataError unless ``measure`` is a catalogue id or has the catalogue's shape (lower-case, ``_``)."""
    if measure not in MEASURES_BY_ID and not MEASURE_ID.fullmatch(measure):
        raise DataError(
            f"measure id {measure!r} is not a measure id (lower-case letters, digits and _); refused",
            path=where,
        )


def _checked(questions: list[Question], measure: str, path: Path) -> list[Question]:
    """The questions of one file, each of that file's measure and of a catalogue scale."""
    if not questions:
        raise DataError("holds no question", path=path)
    for line, question in enumerate(questions, start=1):
        if question.measure != measure:
            raise DataError(f"a {question.measure!r} question in the {measure} file", path=path, line=line)
        if question.scale not in SCALES:
            raise DataError(f"scale {question.scale!r} is not one of {sorted(SCALES)}", path=path, line=line)
    return questions


def question_row(question: Question) -> dict[str, Any]:
    """One question as a flat record every target writes (the prompt is recworld's own)."""
    prompt = render_prompt(question, VARIANT)
    by_name = prompt.answer_by == "name"  # LastFM as LLaRA: the reply names a candidate, no letters shown
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
        "answer_by": prompt.answer_by,
        # What a reply is scored against: the option's letter, or its name for answer-by-name measures.
        "answer": (prompt.option_texts if by_name else prompt.labels)[question.answer_index],
        # What a multiple-choice (loglik) task scores as continuations: the letters, or the names.
        "choices": list(prompt.option_texts) if by_name else list(prompt.labels),
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
    """The one slug (:func:`recworld.paths.slug`) made a Python identifier part, for task ids.

    One transform on top: lower case, and each run of the slug's ``.``, ``-`` and ``_``
    becomes one ``_`` (harness task names are identifiers: ``ml-100k`` -> ``ml_100k``),
    at most 64 characters; "dataset" when nothing is left.
    """
    ident = re.sub(r"[._-]+", "_", slug(text, empty="dataset").lower()).strip("_")[:64].strip("_")
    return ident or "dataset"


def inside(out: Path, relative: str) -> Path:
    """``out / relative``, refused unless every component is a plain file name and it stays under ``out``."""
    parts = relative.split("/")
    if not all(_FILE_PART.fullmatch(part) and part not in (".", "..") for part in parts):
        raise DataError(f"refusing to write {relative!r}: not a plain relative file name")
    path = out.joinpath(*parts)
    if not path.resolve().is_relative_to(out.resolve()):
        raise DataError(f"refusing to write {relative!r}: it would land outside the export")
    return path


# -- writing ----------------------------------------------------------------------------------------


def _digest_files(staging: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for path in sorted(p for p in staging.rglob("*") if p.is_file()):
        found[path.relative_to(staging).as_posix()] = sha256_file(path)
    return found


def check_export_target(out: Path) -> None:
    """Refuse ``out``, writing nothing, before any work (the same rule :func:`export_directory` applies)."""
    check_output_dir(Path(out), OUTPUT_KIND, force_option=None)


@contextlib.contextmanager
def export_directory(out: Path, meta: dict[str, Any]) -> Iterator[Path]:
    """Stage an export; on success add provenance (with each file's hash), then swap it in, marked.

    ``out`` must be new, empty, or a previous export (:func:`recworld.io.output_directory`);
    files there that the previous export did not write are kept, at any depth.
    """
    with output_directory(Path(out), OUTPUT_KIND, force_option=None) as staging:
        yield staging
        atomic_write_json(staging / PROVENANCE_NAME, {**meta, "files": _digest_files(staging)})


def write_bytes(out: Path, relative: str, data: bytes) -> None:
    """Write ``out/relative`` (confined by :func:`inside`); the staging directory is atomic as a whole."""
    path = inside(out, relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def write_text(out: Path, relative: str, text: str) -> None:
    """Plain UTF-8 with LF newlines at ``out/relative``."""
    write_bytes(out, relative, text.encode("utf-8"))


def write_jsonl(out: Path, relative: str, rows: list[dict[str, Any]]) -> None:
    write_text(out, relative, "".join(dumps_canonical(row) + "\n" for row in rows))
