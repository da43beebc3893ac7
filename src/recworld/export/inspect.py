"""``--to inspect``: a task file for inspect_ai over JSON-lines files in the export.

``recworld_inspect.py`` holds one ``@task`` per measure. By default a sample's
input is recworld's own prompt (zero-shot), the solver is inspect's
``generate()`` and the scorer is inspect's ``pattern()`` with the regex of
:mod:`recworld.export.answer_regex`, so the reply is read as our extractor
reads it. ``-T solver=multiple_choice`` switches to inspect's
``multiple_choice()`` solver and ``choice()`` scorer over the option texts
(inspect's own prompt template, so the prompt then differs from recworld's).
"""

from __future__ import annotations

import json
import keyword
from pathlib import Path
from typing import Any

from recworld.export.answer_regex import answer_pattern
from recworld.export.common import Suite, question_row, task_slug, write_jsonl, write_text
from recworld.export.lm_eval import MAX_GEN_TOKENS

TASK_FILE = "recworld_inspect.py"

_HEAD = '''"""inspect_ai tasks for a RecWorld suite export (written by `recworld export`; do not edit).

Run one measure:  inspect eval {task_file}@<task> --model <provider/model>
Options:          -T solver=multiple_choice  (inspect's own multiple-choice prompt and choice() scorer)
"""

import json
import keyword
import re
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample, json_dataset
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import CORRECT, INCORRECT, Score, accuracy, choice, pattern, scorer, stderr
from inspect_ai.solver import generate, multiple_choice

HERE = Path(__file__).resolve().parent
PROVENANCE = json.loads({provenance})
MAX_TOKENS = {max_tokens}


def _sample(record):
    return Sample(
        id=record["id"],
        input=record["prompt"],
        target=record["answer"],
        choices=record["options"],
        metadata={{"measure": record["measure"], "format": record["format"], "scale": record["scale"]}},
    )


def _named(reply, names):
    """The option a reply names, as LLaRA reads it (recworld read_name_reply); None for a miss."""
    cues = [m.end() for m in re.finditer(r"answer\\s*(?:is)?\\s*[:\\uff1a]", reply, flags=re.IGNORECASE)]
    line = (reply[cues[-1]:] if cues else reply).strip().split("\\n")[0].strip().lower()
    folded = [n.strip().lower() for n in names]
    exact = [i for i, n in enumerate(folded) if n and n == line.strip(" \\"'*.")]
    found = exact if len(exact) == 1 else [i for i, n in enumerate(folded) if n and n in line]
    return found[0] if len(found) == 1 else None


@scorer(metrics=[accuracy(), stderr()])
def by_name():
    """Answer-by-name measures (LastFM as LLaRA): the reply names the answer and no other option."""

    async def score(state, target):
        names = [c.value for c in state.choices]
        picked = _named(state.output.completion, names)
        answer = names[picked] if picked is not None else None
        return Score(value=CORRECT if answer == target.text else INCORRECT, answer=answer)

    return score


def _task(measure, answer_pattern, solver, by_name_measure=False):
    dataset = json_dataset(str(HERE / "data" / f"{{measure}}.jsonl"), sample_fields=_sample, name=measure)
    if solver == "multiple_choice":
        return Task(dataset=dataset, solver=multiple_choice(), scorer=choice(), metadata=PROVENANCE)
    if solver != "generate":
        raise ValueError(f"solver must be generate or multiple_choice, got {{solver!r}}")
    return Task(
        dataset=dataset,
        solver=generate(),
        scorer=by_name() if by_name_measure else pattern(answer_pattern, ignore_case=False),
        config=GenerateConfig(max_tokens=MAX_TOKENS, temperature=0.0),
        metadata=PROVENANCE,
    )
'''

_TASK = """

@task
def {name}(solver="generate"):
    {description}
    return _task({measure}, {pattern}, solver, {by_name})
"""


def _identifier(name: str) -> str:
    """``name`` when it is a plain Python identifier (never a keyword), else ValueError."""
    if not name.isidentifier() or not name.isascii() or keyword.iskeyword(name):
        raise ValueError(f"not a Python identifier: {name!r}")
    return name


def task_file(
    suite: Suite, meta: dict[str, Any], labels: dict[str, list[str]], by_name: frozenset[str] = frozenset()
) -> str:
    """The Python source of the task file (deterministic: measures in sorted order).

    Every value enters the source through ``repr`` (a Python literal) and every
    function name through :func:`_identifier`; nothing from the suite is
    formatted into code as it stands.
    """
    provenance = repr(json.dumps(meta, sort_keys=True, ensure_ascii=True))
    parts = [_HEAD.format(task_file=TASK_FILE, provenance=provenance, max_tokens=int(MAX_GEN_TOKENS))]
    prefix = f"recworld_{task_slug(suite.manifest.dataset)}"
    for measure in suite.measures:
        parts.append(
            _TASK.format(
                name=_identifier(f"{prefix}_{measure}"),
                description=_literal(f"RecWorld {suite.manifest.dataset} / {measure}"),
                measure=_literal(measure),
                pattern=_literal(answer_pattern(labels[measure])),
                by_name=repr(measure in by_name),
            )
        )
    return "".join(parts)


def _literal(text: str) -> str:
    """A Python string literal for ``text``, ASCII only (``repr`` quotes and escapes it)."""
    return ascii(str(text))


def write(suite: Suite, out: Path, meta: dict[str, Any]) -> list[str]:
    """Write the data and the task file; returns the task names."""
    labels: dict[str, list[str]] = {}
    by_name: set[str] = set()
    for measure in suite.measures:
        rows = [question_row(q) for q in suite.questions[measure]]
        write_jsonl(out, f"data/{measure}.jsonl", rows)
        labels[measure] = list(rows[0]["labels"])
        if rows[0]["answer_by"] == "name":
            by_name.add(measure)
    write_text(out, TASK_FILE, task_file(suite, meta, labels, frozenset(by_name)))
    prefix = f"recworld_{task_slug(suite.manifest.dataset)}"
    return [f"{prefix}_{m}" for m in suite.measures]
