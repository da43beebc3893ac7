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
from pathlib import Path
from typing import Any

from recworld.export.common import Suite, question_row, write_text
from recworld.lrworld.catalogue import MEASURES_BY_ID

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


def _yaml_list(key: str, values: list[str], indent: str = "") -> list[str]:
    return [f"{indent}{key}:", *(f"{indent}- {json.dumps(v)}" for v in values)]


def _card_header(suite: Suite) -> list[str]:
    license_id, license_name, source = source_of(suite.manifest.dataset)
    header = ["---", f"license: {license_id}"]
    if license_name:
        header.append(f"license_name: {license_name}")
    header += [
        f"pretty_name: {json.dumps(f'RecWorld LRWorld suite on {suite.manifest.dataset}')}",
        "language:",
        "- en",
    ]
    header += _yaml_list("source_datasets", [source])
    header += _yaml_list("task_categories", ["multiple-choice", "question-answering"])
    header += _yaml_list("tags", ["recommendation", "llm-evaluation", "recworld", "lrworld"])
    header.append("configs:")
    for measure in suite.measures:
        header += [
            f"- config_name: {measure}",
            "  data_files:",
            "  - split: test",
            f"    path: {measure}/test.parquet",
        ]
    header.append("---")
    return header


def card(suite: Suite, meta: dict[str, Any]) -> str:
    """The dataset card: YAML metadata (license, sources, configs) and what each measure asks."""
    m = suite.manifest
    source = source_of(m.dataset)[2]
    header = _card_header(suite)
    suite_info = meta["suite"]
    body = [
        "",
        f"# RecWorld LRWorld suite: {m.dataset}",
        "",
        f"Questions that test whether a language model knows what the {m.dataset} interaction log says "
        "about its users and items. One config per measure; every config has one `test` split.",
        "",
        "## Provenance",
        "",
        f"- dataset fingerprint: `{suite_info['fingerprint']}`",
        f"- build seed: {suite_info['seed']}",
        f"- built by: {suite_info['built_by'] or 'unknown'} ({suite_info['generator'] or 'unknown'})",
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
            f"| {measure} | {q.scale} | {q.format.value} | {len(suite.questions[measure])} | {what} |"
        )
    body += [
        "",
        "## Fields",
        "",
        "`prompt` is the exact text `recworld eval` sends (zero-shot variant); `labels` and `options` "
        "are the lettered choices; `answer` / `answer_index` the correct one; `evidence` a JSON string.",
        "",
    ]
    return "\n".join(header + body)


def write(suite: Suite, out: Path, meta: dict[str, Any]) -> list[str]:
    """Write one Parquet file per measure and the card; returns the config names."""
    for measure in suite.measures:
        rows = [question_row(q) for q in suite.questions[measure]]
        path = out / measure / "test.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(parquet_bytes(rows, meta))
    write_text(out / "README.md", card(suite, meta))
    return list(suite.measures)
