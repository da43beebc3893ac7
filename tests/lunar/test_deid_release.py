"""The released folder (RUN/dataset/) holds only de-identified profiles, trajectories and records."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path

from helpers.lunar import lunar_responder, make_llm
from recworld.chat import Request
from recworld.lunar.anchors import load_anchor_files
from recworld.lunar.config import SynthConfig, SynthOptions
from recworld.lunar.llm.config import SessionConfig
from recworld.lunar.localtime import WEEK_S
from recworld.lunar.synth.pipeline import synthesize, write_dataset
from recworld.lunar.synth.release import RELEASED

SOURCE_IDS = ("srcuser-alpha-41", "srcuser-beta-97")
TITLES = ("Zorblax Returns", "The Quiet Lantern")
# 2019-03-04 (a Monday) 19:00 UTC and the next days.
T0 = 1_551_726_000


def _anchor_folder(root: Path) -> Path:
    root.mkdir()
    lines = ["user_id,timestamp,domain,type,field.title,field.cinema"]
    for n, uid in enumerate(SOURCE_IDS):
        for day in range(3):
            lines.append(f"{uid},{T0 + day * 86400 + n * 60},movies,watch,{TITLES[day % 2]},Odeon")
    (root / "events.csv").write_text("\n".join(lines) + "\n")
    (root / "users.csv").write_text(
        "user_id,age,name,phone\n"
        f"{SOURCE_IDS[0]},34,Dana Whitfield,4155550199\n{SOURCE_IDS[1]},51,Eli Marsh,13812345678\n"
    )
    return root


def _echoing_days(base: Callable[[Request], str]) -> Callable[[Request], str]:
    """Day plans that repeat the real events they were shown (titles included), as models do."""

    def respond(request: Request) -> str:
        prompt = request.messages[-1].content
        if request.json_schema is not None and request.json_schema.get("title") == "DaysDraft":
            real = re.findall(r"^- \d{4}-\d\d-\d\d: (.+)$", prompt, flags=re.M)
            acts = [[(r if r != "none" else "rest")[:60]] for r in real] or [["rest"]] * 7
            return json.dumps({"days": [{"anchor_activities": a} for a in acts]})
        return base(request)

    return respond


def test_release_holds_no_source_id_title_or_real_date(tmp_path: Path) -> None:
    anchors = load_anchor_files(_anchor_folder(tmp_path / "src"))
    out = tmp_path / "run"
    llm, _ = make_llm(_echoing_days(lunar_responder()), out)
    options = SynthOptions(weeks=1, max_slots_per_day=1, active_days=3, max_records_per_slot=3)
    result = asyncio.run(synthesize(llm, anchors, options))
    assert len(result.users) == 2
    # The plans did carry the real titles before release.
    raw_plans = json.dumps([u.trajectory.to_json() for u in result.users])
    assert TITLES[0] not in raw_plans  # titles become category surrogates before any prompt (issue 25)
    config = SynthConfig(anchors="x", out_dir=out, llm=SessionConfig(model="scripted"), options=options)
    write_dataset(out, result, llm, config, 0.0)

    release = out / "dataset"
    assert sorted(p.name for p in release.iterdir()) == sorted(RELEASED)
    assert (out / "cache.sqlite").exists() and (out / "failures.jsonl").exists()  # working state, apart
    text = "\n".join(p.read_text() for p in release.iterdir())
    for secret in (*SOURCE_IDS, *TITLES, "Dana Whitfield", "Eli Marsh", "4155550199", "13812345678"):
        assert secret.lower() not in text.lower(), secret
    assert "2019-" not in text  # real dates
    real_start = result.users[0].trajectory.start_ts
    trajectories = [json.loads(x) for x in (release / "trajectories.jsonl").read_text().splitlines()]
    starts = {t["start_ts"] for t in trajectories}
    assert len(starts) == 1 and (real_start - starts.pop()) % WEEK_S == 0  # whole weeks
    # The shift is the run's secret whole-week offset (5-30 years), not the public move into 2024 (issue 25).
    records = [json.loads(x) for x in (release / "records.jsonl").read_text().splitlines()]
    assert records and {r["user_id"] for r in records} <= {"user-000", "user-001"}
    # The synthetic records keep their weekday and hour.
    real = sorted((r.timestamp % WEEK_S) for u in result.users for r in u.records)
    assert sorted(r["timestamp"] % WEEK_S for r in records) == real
