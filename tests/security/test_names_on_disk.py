"""Every name is data on disk too: long, Unicode or undecodable names fit or are one line (issue 23 item 7).

Hypothesis draws output names (any Unicode, bidi and control characters, up
to 300 bytes, and undecodable bytes as the OS hands them over) and model specs.
The checker uses ``os`` alone: a name either is refused with one
:class:`ConfigError` before anything is written, or the output is made and no
hidden name beside it is over 255 bytes or left behind.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recworld import paths
from recworld.errors import ConfigError, DataError
from recworld.io import atomic_write_text, output_directory
from recworld.io.proof import hidden, short_name

RAN = {"output-names": 0, "short-names": 0, "slugs": 0}
NAMES = st.one_of(
    st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="/\0"), min_size=1, max_size=120),
    st.integers(200, 300).map(lambda n: "é" * (n // 2)),
    st.binary(min_size=1, max_size=40).filter(lambda b: b"/" not in b and b"\0" not in b).map(os.fsdecode),
    st.sampled_from(["résumé-\u202e-🚀-e\u0301-日本", "a" * 245, "b" * 256, "\x1b[2J", "CON", "-rf"]),
).filter(lambda n: n not in {".", ".."})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=NAMES)
def test_an_output_name_is_made_or_refused_in_one_line_and_leaves_no_hidden_name(name: str) -> None:
    RAN["output-names"] += 1
    with tempfile.TemporaryDirectory(prefix="rw-names-") as scratch:
        parent = Path(scratch) / "parent"
        parent.mkdir()
        old = os.environ.get("RECWORLD_HOME")
        os.environ["RECWORLD_HOME"] = str(Path(scratch) / "home")
        try:
            try:
                with output_directory(parent / name, "lrworld-suite") as staging:
                    atomic_write_text(staging / "manifest.json", "{}")
            except (ConfigError, DataError) as exc:
                assert "\n" not in str(exc)
                assert os.listdir(parent) == []
            else:
                assert os.listdir(parent) == [name]
                raw = os.fsencode(name)
                assert len(raw) <= 255 and raw.decode("utf-8")
        finally:
            if old is None:
                os.environ.pop("RECWORLD_HOME", None)
            else:
                os.environ["RECWORLD_HOME"] = old


@settings(max_examples=100, deadline=None)
@given(name=NAMES)
def test_hidden_names_always_fit_and_are_text(name: str) -> None:
    RAN["short-names"] += 1
    short = short_name(name)
    assert len(short.encode("utf-8")) <= 180
    longest = f".{short}.old-{'0' * 24}.partial"
    assert len(longest.encode("utf-8")) <= 255
    assert hidden(Path("/x") / name, "staging").matches(f".{short}.{'0' * 24}.partial")


@settings(max_examples=100, deadline=None)
@given(spec=st.text(max_size=400))
def test_a_model_slug_is_a_short_safe_file_name(spec: str) -> None:
    RAN["slugs"] += 1
    slug = paths.slug(spec)
    assert 0 < len(slug) <= 120 and slug.isascii() and "/" not in slug and slug not in {".", ".."}
    if len(spec) > 200:  # two long names sharing a prefix still name two folders
        assert paths.slug(spec) != paths.slug(spec[:150] + "x" * (len(spec) - 150)) or spec[150:] == "x" * (
            len(spec) - 150
        )


def test_zz_report_examples_run() -> None:
    print("examples run:", RAN)
