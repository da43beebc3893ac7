"""The run's secret: the key of every surrogate and of the time offset.

Invariant: the key and the offset it gives are never written to ``RUN/dataset/``, the
manifest, a log or the terminal. The key comes from ``RECWORLD_LUNAR_KEY`` (hex, at least
16 bytes; then nothing is written) or from ``RUN/private/key`` (32 bytes as hex, mode 0600,
made whole with a fresh random key on the first run into that folder and reused when the
run resumes, so the cache still hits: :func:`recworld.io.keyfile.load_or_make_key`; a
damaged file is one error naming it, never a short key or a silently new one).
Delete that file and the real dates of a release can no longer be recovered by anyone.

The offset is a whole number of weeks, drawn from the key among the shifts that move every
real day to a day whose month and day, and whose date, no real day has (so no released
date, with or without its year, equals a real one); it is applied to local wall-clock
time, so weekday and hour of week are kept across DST switches.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Collection
from datetime import date, timedelta
from pathlib import Path

from recworld.errors import ConfigError
from recworld.io import confined
from recworld.io.keyfile import load_or_make_key
from recworld.lunar.privacy.surrogates import digest

KEY_ENV = "RECWORLD_LUNAR_KEY"
KEY_FILE = Path("private") / "key"
KEY_BYTES = 32
MIN_ENV_BYTES = 16
# Offsets tried: 5 to 30 years forward, in weeks.
MIN_WEEKS, MAX_WEEKS = 260, 1560


def run_key(out_dir: Path | None) -> bytes:
    """The run key (module docstring): from the environment, the run's private file, or fresh."""
    env = os.environ.get(KEY_ENV)
    if env:
        try:
            key = bytes.fromhex(env.strip())
        except ValueError:
            key = b""
        if len(key) < MIN_ENV_BYTES:
            raise ConfigError(
                f"{KEY_ENV} must be at least {MIN_ENV_BYTES} bytes as hex "
                "(e.g. the output of `openssl rand -hex 32`)"
            )
        return key
    if out_dir is None:
        return secrets.token_bytes(KEY_BYTES)
    return load_or_make_key(confined(out_dir / KEY_FILE), KEY_BYTES)


def offset_weeks(key: bytes, real_days: Collection[date]) -> int:
    """Whole weeks to add to every real time (module docstring); deterministic in the key."""
    days = set(real_days)
    month_days = {(d.month, d.day) for d in days}
    span = range(MIN_WEEKS, MAX_WEEKS + 1)
    start = digest(key, "offset") % len(span)
    best, fewest = span[start], None
    for n in range(len(span)):
        weeks = span[(start + n * 7919) % len(span)]
        moved = [d + timedelta(weeks=weeks) for d in days]
        clash = sum((m.month, m.day) in month_days or m in days for m in moved)
        if clash == 0:
            return weeks
        if fewest is None or clash < fewest:
            best, fewest = weeks, clash
        if n > 400:
            break
    return best
