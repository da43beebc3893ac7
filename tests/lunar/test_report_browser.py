"""LUNAR's report.html in real headless Chromium: tables, figures, and a viewer that opens on a click."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from helpers.report_folders import RunSpec, write_folder
from recworld import lunar

pytestmark = pytest.mark.browser

Chromium = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def report_page(tmp_path: Path) -> Path:
    root = write_folder(
        tmp_path / "run",
        [
            RunSpec("openai:a", "none", [(2, 2)] * 10, privacy=[5] * 10),
            RunSpec("openai:a", "full", [(4, 4)] * 9 + ["failed"], privacy=[2] * 9 + [None]),
            RunSpec("openai:b", "full", [(3, 3)] * 9 + ["judge-error"], privacy=[4] * 10),
        ],
    )
    lunar.write_lunar_report(lunar.ReportConfig(root=root))
    return root / "report.html"


def test_report_renders_tables_and_figures(report_page: Path, tmp_path: Path, chromium: Chromium) -> None:
    dom = chromium("--dump-dom", report_page.resolve().as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    for table in ("personalisation", "privacy-models", "privacy-contexts", "jsd", "runs"):
        assert f'<table id="{table}">' in html
    assert html.count("<svg") >= 3  # personalisation bars, the quadrant, JSD
    assert "Privacy vs personalisation, Full-context answers" in html  # chart text stays text
    assert "Pareto front (over models)" in html
    assert "<pre>" not in html.split('<section id="viewer"')[0]  # no Markdown dumped in a <pre>
    assert "<script src" not in html and "<link" not in html
    # The script ran: score cells are marked as opening the viewer.
    assert len(re.findall(r'class="r viewable"', html)) >= 9
    shot = tmp_path / "report.png"
    result = chromium(f"--screenshot={shot}", "--window-size=1300,2400", report_page.resolve().as_uri())
    assert result.returncode == 0, result.stderr[-2000:]
    from PIL import Image

    image = np.asarray(Image.open(shot).convert("L"), dtype=np.float64)
    assert image.std() > 20
    dark_rows = np.flatnonzero((image < 100).any(axis=1))
    assert dark_rows.size > 300 and dark_rows.max() - dark_rows.min() > 1200


# Click openai:a's full Avg cell, record how many items opened, then keep only failed answers.
_CLICK = """<script>
(function () {
  var table = document.getElementById("personalisation");
  var heads = Array.from(table.querySelectorAll("thead th")).map(function (th) { return th.textContent; });
  var row = Array.from(table.querySelectorAll("tbody tr")).find(function (tr) {
    return tr.children[0].textContent === "openai:a" && tr.children[1].textContent === "full";
  });
  row.children[heads.indexOf("Avg")].click();
  document.body.setAttribute("data-all", document.querySelectorAll("#viewer-table tbody tr").length);
  document.querySelector('#viewer [data-filter="answer failed"]').click();
})();
</script>
</body>"""


def test_a_score_cell_opens_its_answers(report_page: Path, tmp_path: Path, chromium: Chromium) -> None:
    page = tmp_path / "clicked.html"
    page.write_text(report_page.read_text().replace("</body>", _CLICK))
    dom = chromium("--dump-dom", page.resolve().as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert 'data-all="10"' in html  # every answer behind the cell
    assert '<section id="viewer" aria-live="polite">' in html  # no longer hidden
    assert "openai:a · full" in html
    body = html.split('<table id="viewer-table">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r'<tr class="([\w-]+)">', body.split("<tbody>", 1)[1])
    assert rows == ["answer-failed"]  # the filter kept the one failed answer
    assert "(failed: 503 from the server)" in body and "<summary>rubric</summary>" in body
    assert "1 shown" in html
