"""The docs' example model passes the shipped contract tests, as printed.

``docs/models.md`` ("Your own model from Python") prints a model class and a
``ModelContract`` subclass for it. Both blocks run here exactly as written: the
model's block defines ``OverlapRecommender``, the contract's block is executed in
that namespace, and pytest collects the class it defines, so every inherited
check runs on the docs' model.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from recworld.testing import ModelContract

DOCS = Path(__file__).resolve().parents[2] / "docs" / "models.md"


def docs_blocks() -> list[str]:
    """The Python blocks of the section, in order: the model, its evaluation, its contract test."""
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("## Your own model from Python", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def _printed_contract() -> type[ModelContract]:
    model_block, _evaluation, contract_block = docs_blocks()
    namespace: dict[str, Any] = {"__name__": "docs_example"}
    exec(compile(model_block, f"{DOCS}:model", "exec"), namespace)
    exec(compile(contract_block, f"{DOCS}:contract", "exec"), namespace)
    found = [v for v in namespace.values() if isinstance(v, type) and issubclass(v, ModelContract)]
    contracts = [c for c in found if c is not ModelContract]
    assert len(contracts) == 1, contracts
    return contracts[0]


TestDocsExample = _printed_contract()


def test_the_printed_contract_is_every_check() -> None:
    """The docs' subclass inherits each shipped check and overrides none of them."""
    shipped = {n for n in dir(ModelContract) if n.startswith("test_")}
    assert len(shipped) == 6
    assert all(getattr(TestDocsExample, n) is getattr(ModelContract, n) for n in shipped)
