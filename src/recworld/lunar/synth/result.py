"""What synthesis produced, before it is written: per user, the profile, trajectory, records and anchors."""

from __future__ import annotations

from dataclasses import dataclass, field

from recworld.lunar.anchors import AnchorUser
from recworld.lunar.schemas import BehaviourRecord, Profile, Trajectory


@dataclass
class UserResult:
    profile: Profile
    trajectory: Trajectory
    records: list[BehaviourRecord]
    anchors_used: list[BehaviourRecord]


@dataclass
class SynthResult:
    users: list[UserResult] = field(default_factory=list)
    anchors: list[AnchorUser] = field(default_factory=list)
    dropped_users: list[str] = field(default_factory=list)
