"""``--to lm-eval``: task YAMLs for lm-evaluation-harness over JSON-lines files in the export.

Per measure two tasks: ``recworld_<dataset>_<measure>`` (``multiple_choice``:
lm-eval scores each option label as a continuation, like ``recworld eval --mode
loglik``) and ``..._gen`` (``generate_until`` plus a regex filter that reads the
label as our extractor does). Groups gather each variant per dataset and per
scale. The prompt is recworld's base-model completion prompt: the rendered
question, a blank line and ``Answer:``, each label scored after one space, which
is what recworld's llama.cpp/hf backends score for a model without a chat template.

Data is loaded by ``recworld_lm_eval.py`` (a ``custom_dataset`` beside the YAMLs)
relative to its own file, so the export can be moved and run from any directory:
``lm_eval --include_path DIR --tasks recworld_<dataset>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from recworld.export.answer_regex import answer_pattern
from recworld.export.common import ANSWER_CUE, Suite, question_row, task_slug, write_jsonl, write_text
from recworld.export.yaml_text import FunctionRef, dump

LOADER_MODULE = "recworld_lm_eval"
MAX_GEN_TOKENS = 16  # recworld eval's default --max-tokens

_LOADER = r'''"""Loads a RecWorld export's questions for lm-eval (written by recworld export; do not edit)."""

import re
from pathlib import Path

import datasets

HERE = Path(__file__).resolve().parent


def load_docs(measure, **_metadata):
    """lm-eval calls this with the task's metadata and dataset_kwargs; only the measure matters."""
    path = HERE / "data" / f"{measure}.jsonl"
    return datasets.load_dataset("json", data_files={"test": str(path)})


def name_match(doc, results):
    """Answer-by-name measures (LastFM as LLaRA): 1 when the reply names the answer and no other option.

    LLaRA's rule, as recworld reads it: the first line of the reply (or the text after the
    last "Answer:"), lower-cased; a line that is exactly one option's name is that option,
    else the reply counts only when exactly one option's name occurs in it.
    """
    body = results[0].strip()
    cues = [m.end() for m in re.finditer(r"answer\s*(?:is)?\s*[:\uff1a]", body, flags=re.IGNORECASE)]
    line = (body[cues[-1]:] if cues else body).strip().split("\n")[0].strip().lower()
    names = [n.strip().lower() for n in doc["options"]]
    exact = [i for i, n in enumerate(names) if n and n == line.strip(" \"'*.")]
    found = exact if len(exact) == 1 else [i for i, n in enumerate(names) if n and n in line]
    picked = found[0] if len(found) == 1 else None
    return {"exact_match": float(picked == doc["answer_index"])}
'''


def _header(task: str, measure: str, *, by_name: bool = False) -> dict[str, Any]:
    # A LastFM prompt ends "The answer is" (LLaRA's own wording): nothing is appended to it.
    return {
        "task": task,
        "custom_dataset": FunctionRef(f"{LOADER_MODULE}.load_docs"),
        "dataset_kwargs": {"measure": measure},
        "test_split": "test",
        "doc_to_text": "{{prompt}}" if by_name else "{{prompt}}\n\n" + ANSWER_CUE,
    }


def _metadata(meta: dict[str, Any]) -> dict[str, Any]:
    suite = meta["suite"]
    return {
        "metadata": {
            "version": 1.0,
            "recworld_version": str(meta["recworld_version"]),
            "suite_fingerprint": str(suite["fingerprint"]),
            "suite_seed": int(suite["seed"]),
            "prompt_variant": str(meta["prompt_variant"]),
        }
    }


def mc_yaml(task: str, measure: str, meta: dict[str, Any], *, by_name: bool = False) -> str:
    return dump(
        {
            **_header(task, measure, by_name=by_name),
            "output_type": "multiple_choice",
            "target_delimiter": " ",
            "doc_to_choice": "choices",
            "doc_to_target": "answer_index",
            "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
            **_metadata(meta),
        }
    )


def gen_yaml(task: str, measure: str, labels: list[str], meta: dict[str, Any]) -> str:
    extract = {
        "name": "recworld_extract",
        "filter": [
            {
                "function": "regex",
                "regex_pattern": answer_pattern(labels),
                "group_select": 0,
                "fallback": "[invalid]",
            },
            {"function": "take_first"},
        ],
    }
    metric = {"metric": "exact_match", "aggregation": "mean", "higher_is_better": True, "ignore_case": True}
    return dump(
        {
            **_header(task, measure),
            "output_type": "generate_until",
            "doc_to_target": "answer",
            "generation_kwargs": {
                "until": ["\n\n"],
                "max_gen_toks": MAX_GEN_TOKENS,
                "do_sample": False,
                "temperature": 0.0,
            },
            "filter_list": [extract],
            "metric_list": [metric],
            **_metadata(meta),
        }
    )


def name_gen_yaml(task: str, measure: str, meta: dict[str, Any]) -> str:
    """The generate task of an answer-by-name measure: the reply is matched by name (``name_match``)."""
    metric = {"metric": "exact_match", "aggregation": "mean", "higher_is_better": True}
    return dump(
        {
            **_header(task, measure, by_name=True),
            "output_type": "generate_until",
            "doc_to_target": "answer",
            "generation_kwargs": {
                "until": ["\n\n"],
                "max_gen_toks": MAX_GEN_TOKENS,
                "do_sample": False,
                "temperature": 0.0,
            },
            "process_results": FunctionRef(f"{LOADER_MODULE}.name_match"),
            "metric_list": [metric],
            **_metadata(meta),
        }
    )


def group_yaml(group: str, tasks: list[str], meta: dict[str, Any]) -> str:
    metric = "exact_match" if group.endswith("_gen") else "acc"
    return dump(
        {
            "group": group,
            "task": list(tasks),
            "aggregate_metric_list": [{"metric": metric, "aggregation": "mean", "weight_by_size": True}],
            **_metadata(meta),
        }
    )


def task_names(suite: Suite) -> dict[str, str]:
    """Measure id -> the multiple-choice task name (the generate task adds ``_gen``)."""
    prefix = f"recworld_{task_slug(suite.manifest.dataset)}"
    return {m: f"{prefix}_{m}" for m in suite.measures}


def write(suite: Suite, out: Path, meta: dict[str, Any]) -> list[str]:
    """Write the data, the loader, the task and group YAMLs; returns the task names (mc then gen)."""
    names = task_names(suite)
    write_text(out, f"{LOADER_MODULE}.py", _LOADER)
    by_scale: dict[str, list[str]] = {}
    for measure in suite.measures:
        rows = [question_row(q) for q in suite.questions[measure]]
        write_jsonl(out, f"data/{measure}.jsonl", rows)
        task = names[measure]
        by_name = rows[0]["answer_by"] == "name"
        write_text(out, f"{task}.yaml", mc_yaml(task, measure, meta, by_name=by_name))
        gen = (
            name_gen_yaml(f"{task}_gen", measure, meta)
            if by_name
            else gen_yaml(f"{task}_gen", measure, rows[0]["labels"], meta)
        )
        write_text(out, f"{task}_gen.yaml", gen)
        by_scale.setdefault(str(rows[0]["scale"]), []).append(task)
    prefix = f"recworld_{task_slug(suite.manifest.dataset)}"
    groups = {prefix: [names[m] for m in suite.measures]}
    # A scale name may hold spaces ("lastfm mini-benchmark"): groups are named by its slug.
    groups.update({f"{prefix}_{task_slug(scale)}": tasks for scale, tasks in sorted(by_scale.items())})
    for group, tasks in groups.items():
        write_text(out, f"_{group}.yaml", group_yaml(group, tasks, meta))
        gen = f"{group}_gen"
        write_text(out, f"_{gen}.yaml", group_yaml(gen, [f"{t}_gen" for t in tasks], meta))
    return [*names.values(), *(f"{t}_gen" for t in names.values())]
