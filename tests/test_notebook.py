"""docs/notebook.ipynb: valid nbformat 4 JSON, and its code cells run in-process, offline, in seconds.

The structure is checked against nbformat 4.5's required fields by hand (nbformat itself is not a
dependency); the code cells run in one namespace, in order, as a kernel would run them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "docs" / "notebook.ipynb"


def _notebook() -> dict[str, Any]:
    data = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_it_is_nbformat_4_json() -> None:
    nb = _notebook()
    assert nb["nbformat"] == 4 and isinstance(nb["nbformat_minor"], int) and nb["nbformat_minor"] >= 5
    assert isinstance(nb["metadata"], dict)
    cells = nb["cells"]
    assert isinstance(cells, list) and cells
    ids = [c["id"] for c in cells]
    assert len(set(ids)) == len(ids)
    for cell in cells:
        assert cell["cell_type"] in {"markdown", "code"}
        assert isinstance(cell["metadata"], dict) and all(isinstance(s, str) for s in cell["source"])
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None  # committed unexecuted
        else:
            assert "outputs" not in cell
    for number, cell in enumerate(c for c in cells if c["cell_type"] == "code"):
        compile("".join(cell["source"]), f"notebook cell {number}", "exec")  # each cell parses


@pytest.mark.slow  # about 5 s: builds the fixture suite, runs two models, draws the chart
def test_its_code_cells_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "__notebook__"}
    cells = [c for c in _notebook()["cells"] if c["cell_type"] == "code"]
    for number, cell in enumerate(cells):
        exec(compile("".join(cell["source"]), f"notebook cell {number}", "exec"), namespace)
    mine, baseline = namespace["mine"], namespace["baseline"]
    assert mine.status == baseline.status == "finished"
    assert set(mine.metrics.measures) == set(baseline.metrics.measures)
    assert (namespace["WORK"] / "radar.png").stat().st_size > 0
