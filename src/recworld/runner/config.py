"""How requests are sent (:class:`RunnerConfig`) and what was sent (:class:`RunnerStats`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import ConfigDict, Field

from recworld.console.options import Flag
from recworld.records import MAX_SECONDS, Seed, Settings

# More in flight, or more retries of one request, than anyone means: a typo, refused before any work.
MAX_CONCURRENCY = 4096
MAX_RETRIES = 100


class RunnerConfig(Settings):
    """How requests are sent; none of these settings enters the cache key.

    Every number is finite and bounded (:class:`~recworld.records.Settings`):
    ``--timeout inf`` or ``--backoff nan`` is one config error, never a run whose
    ``run.json`` no reader can parse.
    """

    model_config = ConfigDict(extra="forbid")

    # Each setting's help and flag are declared here once (recworld.console.options).
    concurrency: Annotated[int, Field(ge=1, le=MAX_CONCURRENCY, description="Requests in flight.")] = 8
    max_retries: Annotated[int, Field(ge=0, le=MAX_RETRIES, description="Retries per request.")] = 6
    timeout_s: Annotated[
        float, Field(gt=0, le=MAX_SECONDS, description="Seconds per request attempt."), Flag("--timeout")
    ] = 120.0
    backoff_base_s: Annotated[
        float,
        Field(ge=0, le=MAX_SECONDS, description="First retry waits up to this, in seconds."),
        Flag("--backoff"),
    ] = 0.5
    backoff_max_s: Annotated[
        float,
        Field(ge=0, le=MAX_SECONDS, description="Longest retry wait, in seconds."),
        Flag("--backoff-max"),
    ] = 60.0
    progress: Annotated[bool, Field(description="Show progress on stderr.")] = True
    # Seeds the backoff jitter so a rerun waits the same way (recworld.seeding).
    seed: Seed = 0


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
