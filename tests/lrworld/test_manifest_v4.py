"""manifest/4: a suite built before it reads back with the label rules it was built with."""

from __future__ import annotations

import json
from pathlib import Path

from recworld.lrworld.config import BuildConfig
from recworld.lrworld.manifest import MANIFEST_SCHEMA, SuiteManifest, UsersSkipped


def manifest_json(config: dict[str, object], schema: str) -> dict[str, object]:
    record = SuiteManifest(
        dataset="d",
        domain="movie",
        fingerprint="f" * 64,
        config=BuildConfig(),
        seed=0,
        counts={},
        users_skipped=UsersSkipped(too_short_history=0, rule="test"),
    ).to_json()
    return {**record, "schema": schema, "config": config}


def test_an_old_manifest_reads_with_its_label_rules(tmp_path: Path) -> None:
    old = BuildConfig().to_json()
    for key in ("memory_min_support", "memory_margin", "rule_margin"):
        old.pop(key)
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest_json(old, "recworld.manifest/3")))
    config = SuiteManifest.read(path, missing="none").config
    assert (config.memory_min_support, config.memory_margin, config.rule_margin) == (1, 0.0, None)


def test_a_current_manifest_keeps_its_config(tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest_json(BuildConfig().to_json(), MANIFEST_SCHEMA)))
    assert SuiteManifest.read(path, missing="none").config == BuildConfig()
