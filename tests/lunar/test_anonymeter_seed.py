"""Anonymeter draws from the run's seed: one seed, one release card; numpy's global state is left as found."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from recworld.lunar.config import SynthConfig
from recworld.lunar.llm.config import SessionConfig
from recworld.lunar.privacy import publish
from recworld.lunar.privacy.attack import RiskReport
from recworld.lunar.schemas import BehaviourRecord, BehaviourType, Category
from recworld.lunar.store.outputs import PrivacyReport
from recworld.lunar.synth.pipeline import release_risks
from recworld.lunar.synth.release import release
from recworld.lunar.synth.result import SynthResult

CHICAGO = ZoneInfo("America/Chicago")


def _records(n: int, draw_seed: int) -> list[BehaviourRecord]:
    draw = random.Random(draw_seed)
    return [
        BehaviourRecord(
            record_id=f"a{k}",
            user_id=f"user-00{k % 3}",
            timestamp=1_900_000_000 + draw.randrange(0, 60 * 86400),
            domain=draw.choice(list(Category)),
            type=draw.choice(list(BehaviourType)),
        )
        for k in range(n)
    ]


def _card(risks: RiskReport) -> bytes:
    return publish.card(PrivacyReport(risks=risks)).encode("utf-8")


def _global_state() -> tuple[str, list[int], int, int, float]:
    name, keys, pos, has_gauss, cached = np.random.get_state()  # type: ignore[misc]
    return name, keys.tolist(), pos, has_gauss, cached


def test_the_seed_drives_the_risks_and_leaves_numpys_global_generator_alone() -> None:
    records = _records(160, 11)
    released = [r.model_copy(update={"record_id": f"s{k}"}).to_json() for k, r in enumerate(records[:50])]
    zones = {f"user-00{k}": CHICAGO for k in range(3)}
    np.random.seed(1234)
    before = _global_state()
    cards = {seed: _card(publish.risks(records[:80], records[80:], released, zones, 0.05, seed=seed))
             for seed in (0, 1, 2, 3)}  # fmt: skip
    assert _global_state() == before  # the attacks' reseeding is undone
    assert len(set(cards.values())) > 1  # the draws follow the seed (some seeds differ)
    again = _card(publish.risks(records[:80], records[80:], released, zones, 0.05, seed=3))
    assert again == cards[3]
    # A 63-bit seed (what child_seed gives) is accepted, not only numpy's legacy 32 bits.
    big = publish.risks(records[:80], records[80:], released, zones, 0.05, seed=2**62 + 5)
    assert big.singling_out is not None


def test_a_runs_attacks_get_a_seed_from_its_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``SynthConfig.seed`` reaches the attacks: other run seeds, other attack seeds; one run seed, one."""
    seen: list[int] = []
    real = publish.attack

    def spy(*args: Any, seed: int) -> RiskReport:
        seen.append(seed)
        return real(*args, seed=seed)

    monkeypatch.setattr(publish, "attack", spy)
    empty = SynthResult()
    for seed in (0, 1, 0, 2**40):
        report = release_risks(empty, release(empty), _config(seed, tmp_path))
        assert report.note is not None  # nothing to attack here: what is checked is the seed it got
    assert len(seen) == 4 and seen[0] == seen[2] and len({seen[0], seen[1], seen[3]}) == 3


def _config(seed: int, tmp: Path) -> SynthConfig:
    return SynthConfig(anchors="ml", out_dir=tmp, llm=SessionConfig(model="scripted"), seed=seed)
