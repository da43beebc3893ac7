"""What synthesis produced, before it is written: per user, the profile, trajectory, records and anchors.

Synthesis runs on sanitised anchors (``user-NNN``, typed columns, surrogates, secretly
shifted times: :func:`~recworld.lunar.privacy.sanitise`); ``sources`` keeps the anchors as
they were read, which only the scanners read (``scanner``, built from them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from recworld.lunar.anchors import AnchorUser
from recworld.lunar.leaks import Scanner
from recworld.lunar.privacy.safe import ColumnReport, SafeUser
from recworld.lunar.schemas import BehaviourRecord, Profile, Trajectory


@dataclass
class UserResult:
    profile: Profile
    trajectory: Trajectory
    records: list[BehaviourRecord]
    anchors_used: list[BehaviourRecord]
    # Synthetic records removed as copies of this user's anchors, with the kind of value copied.
    copies: list[tuple[BehaviourRecord, str]] = field(default_factory=list)


@dataclass
class SynthResult:
    users: list[UserResult] = field(default_factory=list)
    anchors: list[SafeUser] = field(default_factory=list)  # what synthesis ran on (sanitised)
    dropped_users: list[str] = field(default_factory=list)
    sources: list[AnchorUser] = field(default_factory=list)  # the anchors as read (source ids, raw records)
    scanner: Scanner | None = None
    # Synthesis ran on secretly shifted times (privacy.sanitise): the release moves no date again.
    shifted: bool = False
    columns: ColumnReport = field(default_factory=ColumnReport)
