"""report.html in real headless Chromium: the DOM has the tables and charts; the page is not blank."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/ensure-test-tools.sh)"),
]


def _chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_report_renders_in_chromium(movie_report: tuple[Path, dict[str, Path]], tmp_path: Path) -> None:
    _, written = movie_report
    url = written["html"].resolve().as_uri()

    dom = _chromium(tmp_path / "profile-dom", "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert '<table id="main-ml-100k"' in html
    assert "Results on LRWorld (ml-100k)" in html
    assert html.count("<svg") >= 4  # bars, radar, two position charts
    assert 'class="chart"' in html
    assert "Mental world over factors (ml-100k)" in html  # chart text stays text
    assert "llamacpp:smollm2-135m" in html
    assert "<script" not in html  # self-contained and static

    shot = tmp_path / "report.png"
    result = _chromium(tmp_path / "profile-shot", f"--screenshot={shot}", "--window-size=1400,2000", url)
    assert result.returncode == 0, result.stderr[-2000:]
    image = np.asarray(Image.open(shot).convert("L"), dtype=np.float64)
    assert image.shape == (2000, 1400)
    assert image.std() > 20  # not a blank page
    # Ink (dark pixels) is spread over the page: the tables and the first chart drew.
    dark_rows = np.flatnonzero((image < 100).any(axis=1))
    assert dark_rows.size > 300
    assert dark_rows.max() - dark_rows.min() > 1200
