"""How requests are sent (:class:`RunnerConfig`) and what was sent (:class:`RunnerStats`)."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field


class RunnerConfig(BaseModel):
    """How requests are sent; none of these settings enters the cache key."""

    model_config = ConfigDict(extra="forbid")

    concurrency: int = Field(default=8, ge=1)
    max_retries: int = Field(default=6, ge=0)
    timeout_s: float = Field(default=120.0, gt=0)
    backoff_base_s: float = Field(default=0.5, ge=0)
    backoff_max_s: float = Field(default=60.0, ge=0)
    progress: bool = True
    # Seeds the backoff jitter so a rerun waits the same way (recworld.seeding).
    seed: int = 0


@dataclass
class RunnerStats:
    """Counters over a runner's lifetime."""

    requests: int = 0  # complete() calls (embedding runners: texts asked)
    sent: int = 0  # attempts handed to the model (retries included)
    cache_hits: int = 0
    coalesced: int = 0  # calls answered by an identical request already in flight
    retries: int = 0
    errors: int = 0  # requests that ended with an error

    def to_json(self) -> dict[str, int]:
        return {
            "requests": self.requests,
            "sent": self.sent,
            "cache_hits": self.cache_hits,
            "coalesced": self.coalesced,
            "retries": self.retries,
            "errors": self.errors,
        }
