"""The release gate: a model that copies every anchor string it sees leaves none in the release,
on the terminal, in failures.jsonl or in recworld.log (issue 19, item 1).

The run goes through the command line against a local OpenAI-compatible server playing that
model (:func:`helpers.lunar.copycat`); nothing in recworld is patched.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from helpers.cli import run_recworld
from helpers.lunar import copycat, follow_real_days, lunar_responder, lunar_server
from recworld.chat import Request
from recworld.lunar.anchors import load_anchor_files
from recworld.lunar.leaks import Scanner
from recworld.lunar.schemas import BehaviourRecord, BehaviourType, Category, Demographic
from recworld.testing.fake_server import FakeOpenAIServer

SOURCE_IDS = ("SRC-CANARY-USER-7731", "srcuser-beta-9761")
# 2019-03-04, a Monday, 19:00 UTC (13:00 in Chicago).
T0 = 1_551_726_000
EVENT_CANARIES = {
    "title": ["Zephyr Canary Film", "Heat (1995)", "Friday (1995)"],
    "merchant": ["Canarybistro Kowloon"],
    "place": ["Canary Wharf Pier 9"],
    "reference": ["PNRCANARY99", "4815162342"],
    "field": ["evening with Dana Quill", "Quokkacanary Foods", "Marbled glass by Xylocanary Works"],
}
USER_CANARIES = {
    "name": ["Dana Quill", "Eli Marsh"],
    "nickname": ["Quillycanary", "Marshmallowcanary"],
    "employer": ["CanaryCorp Ltd", "Velvetcanary GmbH"],
    "birthdate": ["1987-04-12", "1979-11-30"],
    "contact": ["eli.canary@example.org", "4155550199"],
    "demographic": ["collects Snorkelcanary stamps"],
}
BIRTH_FORMS = ("April 12, 1987", "12 April 1987", "04/12/1987", "Nov 30, 1979", "1979-11-30")


def _anchor_folder(root: Path) -> Path:
    root.mkdir()
    header = "user_id,timestamp,domain,type,field.title,field.merchant,field.place,field.booking_ref,"
    header += "field.order_number,field.note,field.brand,field.description,field.genres"
    lines = [header]
    titles = EVENT_CANARIES["title"]
    for n, uid in enumerate(SOURCE_IDS):
        for day in range(10):
            ts = T0 + day * 86400 + n * 600
            lines.append(
                f"{uid},{ts},movies,watch,{titles[day % 3]},Canarybistro Kowloon,Canary Wharf Pier 9,"
                f"PNRCANARY99,4815162342,evening with Dana Quill,Quokkacanary Foods,"
                f"Marbled glass by Xylocanary Works,Crime"
            )
    (root / "events.csv").write_text("\n".join(lines) + "\n")
    (root / "users.csv").write_text(
        "user_id,age,gender,occupation,location,timezone,name,nickname,employer,birthdate,hobby,email,phone\n"
        f'{SOURCE_IDS[0]},34,F,engineer,"Canary Wharf Pier 9, London",America/Chicago,Dana Quill,'
        "Quillycanary,CanaryCorp Ltd,1987-04-12,collects Snorkelcanary stamps,,\n"
        f"{SOURCE_IDS[1]},51,M,CanaryCorp Ltd analyst,zip 55105,America/New_York,Eli Marsh,"
        "Marshmallowcanary,Velvetcanary GmbH,1979-11-30,,eli.canary@example.org,4155550199\n"
    )
    return root


def _planted() -> list[str]:
    out = [s for group in (EVENT_CANARIES, USER_CANARIES) for v in group.values() for s in v]
    return [*out, *SOURCE_IDS, "Crime"]


def _real_dates() -> list[str]:
    days = [date(2019, 2, 25) + timedelta(days=k) for k in range(28)]
    out = []
    for d in days:
        out += [d.isoformat(), d.strftime("%B %-d, %Y"), d.strftime("%-d %B %Y"), d.strftime("%m/%d/%Y")]
    return out


def _forbidden() -> list[str]:
    strings = [s for s in _planted() if s != "Crime"]
    # Parts that identify on their own (every rare word of a canary), the birth dates in other formats.
    strings += ["Zephyr", "Canarybistro", "Kowloon", "Quokkacanary", "Xylocanary", "Snorkelcanary", "Quill"]
    strings += ["Canary Wharf", *BIRTH_FORMS]
    return strings + _real_dates()


def _leaks(text: str) -> list[str]:
    low = text.lower()
    return [s for s in _forbidden() if s.lower() in low]


@pytest.fixture(scope="module")
def copying_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """One run, read by the three tests below (none of them writes to it)."""
    tmp_path = tmp_path_factory.mktemp("copying-run")
    # A module's fixture runs before each test's own isolation (tests/conftest.py, openai_server):
    # the same environment, set here for the module.
    with pytest.MonkeyPatch.context() as env:
        env.setenv("RECWORLD_HOME", str(tmp_path / "home"))
        for name in ("http_proxy", "https_proxy", "all_proxy", "OPENAI_API_KEY"):
            env.delenv(name, raising=False)
            env.delenv(name.upper(), raising=False)
        yield _copying_run(tmp_path)


def _copying_run(tmp_path: Path) -> tuple[Path, str]:
    anchors = _anchor_folder(tmp_path / "src")
    # The slots of every other (shifted) day fail with chat text holding all it saw: failures.jsonl,
    # terminal, log.
    model = copycat(lunar_responder(), _planted(), fail_keys=(r"Date \d{4}-\d\d-\d[02468]\b",))
    with lunar_server(model) as server:
        out = tmp_path / "run"
        args = [
            "--log-level",
            "info",
            "lunar",
            "synth",
            "--anchors",
            str(anchors),
            "--users",
            "2",
            "--weeks",
            "2",
            "--max-slots",
            "1",
        ]
        args += ["--model", "openai:copycat", "--base-url", server.base_url, "--out", str(out)]
        args += ["--fail-on-error", "0.5", "--attempts", "2"]
        # One synth for three tests: run_recworld captures the run itself, so a module's fixture can call it.
        result = run_recworld(*args)
        assert result.returncode == 0, result.stderr
        # By construction the model is never shown an identifier, a free-text value or a real date in
        # any of these forms: what it can copy are surrogates (the release checks below still apply).
        assert server.chat and _leaks(json.dumps(server.chat, ensure_ascii=False)) == []
    return out, result.stdout + result.stderr


@pytest.mark.slow
def test_a_copying_model_leaves_no_anchor_string_in_the_release(copying_run: tuple[Path, str]) -> None:
    out, _ = copying_run
    release = "\n".join(p.read_text() for p in sorted((out / "dataset").iterdir()))
    assert _leaks(release) == []
    # The anchors' dates and birth years, as numbers of their own: a shifted epoch timestamp such as
    # 2361979800 holds the digits 1979 by chance (the shift is keyed by the run's random key).
    assert re.findall(r"(?<!\d)(?:2019-|1987(?!\d)|1979(?!\d))", release) == []
    # Ordinary words survive: the model's own text and the fields it wrote stay readable.
    records = [json.loads(x) for x in (out / "dataset" / "records.jsonl").read_text().splitlines()]
    assert records and {r["user_id"] for r in records} <= {"user-000", "user-001"}
    profiles = [json.loads(x) for x in (out / "dataset" / "profiles.jsonl").read_text().splitlines()]
    demo = profiles[0]["demographic"]
    assert set(demo) == {"schema", "user_id", "age_band", "gender", "occupation", "region", "timezone"}
    assert (
        demo["age_band"] == "25-34" and demo["region"] == "London" and demo["timezone"] == "America/Chicago"
    )
    # An occupation naming an employer is not coarse: dropped, not released.
    assert (
        profiles[1]["demographic"]["occupation"] is None
        and profiles[1]["demographic"]["region"] == "zip 551xx"
    )


@pytest.mark.slow
def test_a_copying_model_leaves_no_anchor_string_on_the_terminal_or_in_the_logs(
    copying_run: tuple[Path, str],
) -> None:
    out, printed = copying_run
    failures = (out / "failures.jsonl").read_text()
    log = (out / "recworld.log").read_text()
    assert failures.strip() and "rejected reply" in log and "rejected reply" in printed  # the summary ran
    for name, text in (("terminal", printed), ("failures.jsonl", failures), ("recworld.log", log)):
        assert _leaks(text) == [], name
    assert "user-00" in failures  # pseudonymous keys
    # No file holds one, the cache and the private key folder included: no prompt ever held one.
    for path in out.rglob("*"):
        if path.is_file():
            assert _leaks(path.read_bytes().decode("utf-8", errors="replace")) == [], path


@pytest.mark.slow
def test_the_manifest_counts_every_kind_and_releases_none(copying_run: tuple[Path, str]) -> None:
    out, _ = copying_run
    manifest = json.loads((out / "manifest.json").read_text())
    scan = manifest["release"]["leak_scan"]
    assert all(v["released"] == 0 for v in scan.values())
    # The gate knows every kind's anchor strings (it would catch a copy); the independent scan found none.
    for kind in ("title", "merchant", "place", "reference", "name", "nickname", "employer", "birthdate"):
        assert scan[kind]["strings"] > 0, kind
    privacy = manifest["release"]["privacy"]
    assert privacy["findings"] == [] and privacy["published"] is True
    assert manifest["release"]["demographics"] == {"record": 2, "none": 0, "drawn": 0}


def _scanner_with_titles(*titles: str) -> Scanner:
    records = [
        BehaviourRecord(
            record_id=f"a{n}",
            user_id="u",
            timestamp=T0,
            domain=Category.MOVIES,
            type=BehaviourType.WATCH,
            fields={"title": t, "genres": "Action, Crime, Thriller"},
        )
        for n, t in enumerate(titles)
    ]
    return Scanner.of([("u", Demographic(user_id="u"), records)])


def test_ordinary_word_titles_are_matched_as_titles_not_as_words() -> None:
    scanner = _scanner_with_titles("Heat (1995)", "Friday (1995)", "Kids (1995)")

    def redact(text: str, slot: str | None = None) -> str:
        return scanner.redact(text, lambda kind, _: f"<{kind}>", slot=slot, count=False)

    ordinary = "Gym on Friday, then home; avoid the heat; pick up the kids. Kids love Fridays."
    assert redact(ordinary) == ordinary
    assert redact("Friday") == "Friday"  # a day of the week in a free-text field
    assert redact("watched Heat with friends") == "watched <TITLE> with friends"
    assert redact('a rerun of "Kids" tonight') == 'a rerun of "<TITLE>" tonight'
    assert redact("Friday (1995) on the couch") == "<TITLE> on the couch"
    assert redact("Heat", slot="title") == "<TITLE>"
    assert redact("Heat: Director's Cut", slot="title") == "<TITLE>: Director's Cut"
    assert redact("Friday Night Lights", slot="title") == "Friday Night Lights"  # another title
    assert redact("Heat, an action crime thriller") == "<TITLE>, an action crime thriller"  # with its genres


def test_distinctive_strings_numbers_and_dates_are_found_in_any_form() -> None:
    anchors = load_anchor_files_from_rows(
        {"merchant": "Canarybistro Kowloon", "booking_ref": "PNRCANARY99", "order_number": 4815162342}
    )
    scanner = Scanner.of(anchors)

    def redact(text: str) -> str:
        return scanner.redact(text, lambda kind, _: f"<{kind}>", count=False)

    assert redact("dinner at CANARYBISTRO-kowloon") == "dinner at <MERCHANT>"
    assert redact("the Kowloon branch") == "the <MERCHANT> branch"  # a rare word alone
    assert redact("ref pnrcanary99, order 481-516-2342") == "ref <REFERENCE>, order <REFERENCE>"
    assert redact("on March 4, 2019 and 03/04/2019") == "on <DATE> and <DATE>"
    assert redact("born 12 April 1987") == "born <BIRTHDATE>"
    assert redact("user SRC-CANARY-USER-7731") == "user <ID>"


def load_anchor_files_from_rows(
    fields: dict[str, str | int],
) -> list[tuple[str, Demographic, list[BehaviourRecord]]]:
    record = BehaviourRecord(
        record_id="a0",
        user_id=SOURCE_IDS[0],
        timestamp=T0,
        domain=Category.DINING,
        type=BehaviourType.ORDER,
        fields=fields,
    )
    demo = Demographic(user_id=SOURCE_IDS[0], extra={"birthdate": "1987-04-12"}, timezone="America/Chicago")
    return [(SOURCE_IDS[0], demo, [record])]


def test_the_canary_folder_reads_as_two_timed_users(tmp_path: Path) -> None:
    users = load_anchor_files(_anchor_folder(tmp_path / "src"))
    assert [u.user_id for u in users] == sorted(SOURCE_IDS)
    assert all(not u.day_only and len(u.records) == 10 for u in users)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", users[0].demographic.extra["birthdate"])


def test_several_ordinary_words_capitalised_as_the_title_are_the_title() -> None:
    scanner = _scanner_with_titles("Toy Story (1995)", "Paper Tigers")

    def redact(text: str) -> str:
        return scanner.redact(text, lambda kind, _: f"<{kind}>", count=False)

    assert redact("a Toy Story night in") == "a <TITLE> night in"
    assert redact("Paper Tigers marathon") == "<TITLE> marathon"
    assert redact("a toy story about paper tigers") == "a toy story about paper tigers"


AMAZON_CANARIES = ["Glimmerquartz Espresso", "Vexicanary Roasters", "Snorblewick Tea", "Trundlecanary Films"]
AMAZON_CANARIES += ["Night of the Flibbertigoo", "AREVIEWERCANARY1", "AREVIEWERCANARY2", "Zonkercanary"]


def _amazon_canaries(root: Path) -> Path:
    """Amazon 2018 files (real format: dates at 00:00 UTC) with canaries in the item metadata."""
    root.mkdir()
    meta = {
        "Grocery_and_Gourmet_Food": [
            ("G1", "Glimmerquartz Espresso", "Vexicanary Roasters", "Zonkercanary Blend"),
            ("G2", "Snorblewick Tea", "Kettle Co", "Tea"),
        ],
        "Movies_and_TV": [("M1", "Night of the Flibbertigoo", "Trundlecanary Films", "Horror")],
    }
    for cat, items in meta.items():
        rows = [{"asin": a, "title": t, "brand": b, "category": [cat, c]} for a, t, b, c in items]
        (root / f"meta_{cat}.json").write_text("\n".join(json.dumps(x) for x in rows) + "\n")
        lines = []
        for n, reviewer in enumerate(("AREVIEWERCANARY1", "AREVIEWERCANARY2")):
            for k, (asin, *_) in enumerate(items * 3):
                day = date(2018, 3, 5 + 2 * k + n)
                stamp = int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp())
                review = {"overall": 4.0, "reviewerID": reviewer, "asin": asin, "unixReviewTime": stamp,
                          "reviewTime": f"{day.month:02d} {day.day}, {day.year}"}  # fmt: skip
                lines.append(json.dumps(review))
        (root / f"{cat}_5.json").write_text("\n".join(lines) + "\n")
    return root


@pytest.mark.slow
def test_a_copying_model_on_day_only_amazon_anchors_leaves_no_metadata_canary(
    tmp_path: Path,
    openai_server: Callable[[Callable[[Request], str]], FakeOpenAIServer],
) -> None:
    anchors = _amazon_canaries(tmp_path / "amazon")
    # Movie records fail on every attempt with chat text holding all the prompt showed (masked failures).
    model = copycat(follow_real_days(lunar_responder()), AMAZON_CANARIES, fail_keys=("domains: movies",))
    server = openai_server(model)
    out = tmp_path / "run"
    args = [
        "--log-level",
        "info",
        "lunar",
        "synth",
        "--anchors",
        str(anchors),
        "--users",
        "2",
        "--weeks",
        "2",
    ]
    args += ["--max-slots", "1", "--model", "openai:c", "--base-url", server.base_url, "--out", str(out)]
    args += ["--fail-on-error", "0.5", "--timezone", "America/Chicago"]
    result = run_recworld(*args)
    assert result.returncode == 0, result.stderr
    prompts = json.dumps(server.chat)
    # Titles, brands and reviewer ids never reach a prompt (surrogates stand in); the kept category
    # column does, so the copying model has an anchor canary to copy and the gate has work to do.
    identifiers = ["Glimmerquartz", "Vexicanary", "Snorblewick", "Trundlecanary", "Flibbertigoo", "AREVIEWER"]
    for identifier in identifiers:
        assert identifier.lower() not in prompts.lower(), identifier
    assert "zonkercanary" in prompts.lower()
    texts = {
        p.name: p.read_text(errors="replace") for p in out.rglob("*") if p.is_file() and "cache" not in p.name
    }
    texts["terminal"] = result.stdout + result.stderr
    for name, text in texts.items():
        for canary in [*AMAZON_CANARIES, "Flibbertigoo", "Glimmerquartz", "2018-03"]:
            assert canary.lower() not in text.lower(), (name, canary)
    release = json.loads((out / "manifest.json").read_text())["release"]
    assert release["day_only_anchors"] == 18 and release["demographics"] == {
        "record": 0,
        "none": 2,
        "drawn": 0,
    }
    # The copied category canary is what the gate caught; no title was there to catch.
    assert release["leak_scan"]["field"]["redacted"] > 0 and release["leak_scan"]["title"]["redacted"] == 0
