"""``--anchors A,B,...``: anchors from one source or several at once, merged by user id.

``--anchors A,B,...`` names any mix of supported sources (a fetched dataset
name, a dataset folder or raw folder such as Amazon Reviews 2018 with several
category files, or CSV/JSONL logs). Every source is read in full; records of the
same user id are merged into one timeline, then ``n`` users are drawn (seeded)
among those with enough events and domains.

A source whose every timestamp is at 00:00:00 UTC knows days, not times (Amazon Reviews
2018: ``unixReviewTime`` is the ``reviewTime`` date at midnight UTC): its records are
day-only (:mod:`recworld.lunar.anchors.user`), and stay so when merged with timed sources.

A dataset's records get their domain per item: Amazon items carry the category
file they came from (``amazon_category``), other datasets their dataset domain;
:mod:`recworld.lunar.anchors.domains` maps either to a tier-1 domain and behaviour type.
``lunar-demo`` names the small multi-domain Amazon 2018 fixture shipped with
the package (offline runs and tests).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from recworld.errors import DataError
from recworld.lunar.anchors.datasets import dataset_users
from recworld.lunar.anchors.domains import DomainMap, load_domain_map
from recworld.lunar.anchors.files import is_file_source, load_anchor_files
from recworld.lunar.anchors.user import AnchorUser, is_day_granular, utc_day
from recworld.lunar.schemas import BehaviourRecord, Demographic
from recworld.seeding import rng

DEMO = "lunar-demo"
DATASET_MIN_EVENTS = 5


def demo_path() -> Path:
    """The shipped multi-domain anchor fixture (Amazon Reviews 2018 layout, invented users)."""
    return Path(str(resources.files("recworld.lunar.anchors") / "fixtures" / "amazon2018_multi"))


def _source_users(source: str, domains: DomainMap) -> tuple[dict[str, AnchorUser], int]:
    """The users of one source and the minimum event count a user of it needs."""
    path = demo_path() if source == DEMO else Path(source)
    if is_file_source(path):
        users, need = {u.user_id: u for u in load_anchor_files(path)}, 1
    else:
        from recworld.data import resolve_dataset

        users, need = dataset_users(resolve_dataset(str(path)), domains), DATASET_MIN_EVENTS
    return dated_only(users), need


def dated_only(users: dict[str, AnchorUser]) -> dict[str, AnchorUser]:
    """A source whose timestamps are all midnight UTC, with every record marked day-only."""
    if not is_day_granular([r.timestamp for u in users.values() for r in u.records]):
        return users
    return {
        uid: AnchorUser(u.demographic, u.records, {r.record_id: utc_day(r.timestamp) for r in u.records})
        for uid, u in users.items()
    }


def _richer(a: Demographic, b: Demographic) -> Demographic:
    """The demographic record with more known fields (the first on a tie)."""

    def known(d: Demographic) -> int:
        return sum(v is not None for v in (d.age, d.gender, d.occupation, d.location)) + len(d.extra)

    return b if known(b) > known(a) else a


def merge(sources: list[dict[str, AnchorUser]]) -> dict[str, AnchorUser]:
    """One timeline per user id across sources; record ids renumbered in time order."""
    demo: dict[str, Demographic] = {}
    records: dict[str, list[tuple[BehaviourRecord, str | None]]] = {}
    for users in sources:
        for uid, user in users.items():
            demo[uid] = _richer(demo[uid], user.demographic) if uid in demo else user.demographic
            records.setdefault(uid, []).extend((r, user.day_only.get(r.record_id)) for r in user.records)
    out = {}
    for uid in sorted(records):
        ordered = sorted(records[uid], key=lambda x: (x[0].timestamp, x[0].domain.value, x[0].record_id))
        renumbered = tuple(
            r.model_copy(update={"record_id": f"anchor-{uid}-{n:05d}"}) for n, (r, _) in enumerate(ordered)
        )
        day_only = {f"anchor-{uid}-{n:05d}": day for n, (_, day) in enumerate(ordered) if day is not None}
        out[uid] = AnchorUser(demo[uid], renumbered, day_only)
    return out


def load_anchors(
    source: str, n_users: int, *, seed: int = 0, min_domains: int = 1, domain_map: Path | None = None
) -> list[AnchorUser]:
    """Anchors from a comma-separated mix of sources, merged by user id; ``n_users`` drawn (seeded)."""
    domains = load_domain_map(domain_map)
    parts = [p.strip() for p in source.split(",") if p.strip()]
    if not parts:
        raise DataError("no anchor source given")
    loaded = [_source_users(p, domains) for p in parts]
    need = max(m for _, m in loaded)
    users = merge([u for u, _ in loaded])
    eligible = [
        uid
        for uid, u in users.items()
        if len(u.records) >= need and len({r.domain for r in u.records}) >= min_domains
    ]
    if len(eligible) < n_users:
        raise DataError(
            f"anchors {source!r}: only {len(eligible)} users have >= {need} events in >= {min_domains} "
            f"domains; asked for {n_users}"
        )
    picked = rng(seed, "lunar", "anchors").choice(sorted(eligible), size=n_users, replace=False)
    return [users[u] for u in sorted(str(p) for p in picked)]
