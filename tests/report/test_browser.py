"""report.html in real headless Chromium: the DOM has the tables and charts; the page is not blank."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

pytestmark = pytest.mark.browser


def test_report_renders_in_chromium(
    movie_report: tuple[Path, dict[str, Path]],
    tmp_path: Path,
    chromium: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    _, written = movie_report
    url = written["html"].resolve().as_uri()

    dom = chromium("--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert '<table id="main-ml-100k"' in html
    assert "Results on LRWorld (ml-100k)" in html
    assert html.count("<svg") >= 4  # bars, radar, two position charts
    assert 'class="chart"' in html
    assert "Mental world over factors (ml-100k)" in html  # chart text stays text
    assert "llamacpp:smollm2-135m" in html
    assert "<script src" not in html and "<link" not in html  # self-contained: nothing loaded from outside

    shot = tmp_path / "report.png"
    result = chromium(f"--screenshot={shot}", "--window-size=1400,2000", url)
    assert result.returncode == 0, result.stderr[-2000:]
    image = np.asarray(Image.open(shot).convert("L"), dtype=np.float64)
    assert image.shape == (2000, 1400)
    assert image.std() > 20  # not a blank page
    # Ink (dark pixels) is spread over the page: the tables and the first chart drew.
    dark_rows = np.flatnonzero((image < 100).any(axis=1))
    assert dark_rows.size > 300
    assert dark_rows.max() - dark_rows.min() > 1200


# Clicks the smollm2 cell under "Assoc rule", then the "missed" filter, the way a person would.
_CLICK = """<script>
(function () {
  var table = document.getElementById("main-ml-100k");
  var heads = Array.from(table.querySelectorAll("thead tr.cols th"))
    .map(function (th) { return th.textContent; });
  var col = heads.indexOf("Assoc rule");
  var row = Array.from(table.querySelectorAll("tbody tr")).find(function (tr) {
    return tr.children[0].textContent === "llamacpp:smollm2-135m";
  });
  row.children[col].click();
  document.body.setAttribute("data-all", document.querySelectorAll("#viewer-table tbody tr").length);
  document.querySelector('#viewer [data-filter="FILTER"]').click();
})();
</script>
</body>"""


def _outcomes(run_dir: Path, measure: str) -> list[str]:
    out = []
    for line in (run_dir / "samples.jsonl").read_text().splitlines():
        s = json.loads(line)
        if s["measure"] == measure:
            out.append(
                "error" if s["error"] else "missed" if s["missed"] else "correct" if s["correct"] else "wrong"
            )
    return out


@pytest.mark.parametrize("chosen", ["missed", "correct"])
def test_a_cell_opens_its_samples_and_the_filter_works(
    movie_report: tuple[Path, dict[str, Path]],
    tmp_path: Path,
    chosen: str,
    chromium: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    suite, written = movie_report
    page = tmp_path / "clicked.html"
    page.write_text(written["html"].read_text().replace("</body>", _CLICK.replace("FILTER", chosen)))
    dom = chromium("--dump-dom", page.resolve().as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    outcomes = _outcomes(suite / "runs" / "smol", "assoc_rule")
    assert f'data-all="{len(outcomes)}"' in html  # the cell opened every sample behind it
    assert '<section id="viewer" aria-live="polite">' in html  # shown: no longer hidden
    assert "llamacpp:smollm2-135m · assoc_rule" in html
    body = html.split('<table id="viewer-table">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r'<tr class="(\w+)">', body.split("<tbody>", 1)[1])
    assert outcomes.count(chosen) > 0 and rows == [chosen] * outcomes.count(chosen)
    assert "<summary>prompt</summary>" in body
