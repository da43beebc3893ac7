"""``--to hf``: Parquet files, one Hugging Face ``datasets`` config per measure, and a dataset card.

``datasets.load_dataset(DIR, "<measure>")`` reads ``<measure>/test.parquet``
through the ``configs`` list in the card's YAML header. Parquet is written with
an explicit schema, no pandas metadata and fixed writer options, so the same
suite gives the same bytes; the provenance also rides in each file's schema
metadata, so a file copied out of the export still says where it came from.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

from recworld.export.common import Suite, question_row, write_bytes, write_text
from recworld.export.yaml_text import dump
from recworld.lrworld.catalogue import MEASURES_BY_ID
from recworld.mdsafe import md_cell

MOVIELENS = (
    "other",
    "movielens-research",
    "MovieLens (GroupLens Research, University of Minnesota): research use only",
)


def source_of(dataset: str) -> tuple[str, str, str]:
    """(license, license_name, source line) for a dataset name; MovieLens is the one recworld fetches."""
    if dataset.startswith("ml-"):
        return MOVIELENS
    return ("unknown", "", dataset)


_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def strip_controls(text: str) -> str:
    return _CONTROLS.sub(" ", text)


GROUND_TRUTH = (
    "Each question is built from the interaction log alone, with a fixed seed: the correct option is "
    "computed from the data by the measure's rule (below), and the distractors are drawn from items or "
    "users the rule ranks lower. No human labels are involved. The rules are those of LRWorld "
    "(recworld docs/lrworld.md); `evidence` holds, per question, the numbers that made its answer right."
)


def _schema() -> Any:
    import pyarrow as pa

    text = pa.string()
    return pa.schema(
        [
            ("id", text),
            ("dataset", text),
            ("domain", text),
            ("measure", text),
            ("scale", text),
            ("format", text),
            ("prompt", text),
            ("labels", pa.list_(text)),
            ("options", pa.list_(text)),
            ("candidate_ids", pa.list_(text)),
            ("answer_index", pa.int64()),
            ("answer", text),
            ("target_kind", text),
            ("target_id", text),
            ("target_text", text),
            ("history", pa.list_(text)),
            ("history_ids", pa.list_(text)),
            ("evidence", text),
            ("seed", pa.int64()),
        ]
    )


def parquet_bytes(rows: list[dict[str, Any]], meta: dict[str, Any]) -> bytes:
    """One measure's rows as Parquet bytes (deterministic for the same rows and pyarrow version)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = _schema().with_metadata({"recworld": json.dumps(meta, sort_keys=True)})
    table = pa.Table.from_pylist(rows, schema=schema)
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", write_statistics=False, store_schema=True)
    return sink.getvalue()


def _card_header(suite: Suite) -> str:
    license_id, license_name, source = source_of(suite.manifest.dataset)
    header: dict[str, Any] = {"license": license_id}
    if license_name:
        header["license_name"] = license_name
    header.update(
        {
            "pretty_name": f"RecWorld LRWorld suite on {suite.manifest.dataset}",
            "language": ["en"],
            "source_datasets": [source],
            "task_categories": ["multiple-choice", "question-answering"],
            "tags": ["recommendation", "llm-evaluation", "recworld", "lrworld"],
            "configs": [
                {"config_name": m, "data_files": [{"split": "test", "path": f"{m}/test.parquet"}]}
                for m in suite.measures
            ],
        }
    )
    return "---\n" + dump(header) + "---"


def _text(value: str) -> str:
    """A name from the suite as one line of Markdown text: no line breaks, HTML, link or image."""
    return md_cell(" ".join(strip_controls(value).split()))


def card(suite: Suite, meta: dict[str, Any]) -> str:
    """The dataset card: YAML metadata (license, sources, configs) and what each measure asks."""
    m = suite.manifest
    name = _text(m.dataset)
    source = _text(source_of(m.dataset)[2])
    suite_info = meta["suite"]
    body = [
        "",
        f"# RecWorld LRWorld suite: {name}",
        "",
        f"Questions that test whether a language model knows what the {name} interaction log says "
        "about its users and items. One config per measure; every config has one `test` split.",
        "",
        "## Provenance",
        "",
        f"- dataset fingerprint: `{_text(suite_info['fingerprint']).replace('`', '')}`",
        f"- build seed: {suite_info['seed']}",
        f"- built by: {_text(suite_info['built_by'] or 'unknown')} "
        f"({_text(suite_info['generator'] or 'unknown')})",
        f"- exported by: recworld {meta['recworld_version']}",
        f"- source: {source}; see the source's own licence before redistributing.",
        "",
        "## How the ground truth was built",
        "",
        GROUND_TRUTH,
        "",
        "## Measures",
        "",
        "| config | scale | format | questions | what the question asks |",
        "| --- | --- | --- | --- | --- |",
    ]
    for measure in suite.measures:
        q = suite.questions[measure][0]
        known = MEASURES_BY_ID.get(measure)
        what = known.description if known else "(not in this recworld version's catalogue)"
        body.append(
            f"| {_text(measure)} | {_text(q.scale)} | {q.format.value} | {len(suite.questions[measure])} "
            f"| {_text(what)} |"
        )
    body += [
        "",
        "## Fields",
        "",
        "`prompt` is the exact text `recworld eval` sends (zero-shot variant); `labels` and `options` "
        "are the lettered choices; `answer` / `answer_index` the correct one; `evidence` a JSON string.",
        "",
    ]
    return "\n".join([_card_header(suite), *body])


def write(suite: Suite, out: Path, meta: dict[str, Any]) -> list[str]:
    """Write one Parquet file per measure and the card; returns the config names."""
    for measure in suite.measures:
        rows = [question_row(q) for q in suite.questions[measure]]
        write_bytes(out, f"{measure}/test.parquet", parquet_bytes(rows, meta))
    write_text(out, "README.md", card(suite, meta))
    return list(suite.measures)
