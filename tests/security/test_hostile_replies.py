"""Bounded work on hostile replies (review cases E1-E9, E12, E14-E17; F12, F14, F15).

A reply is the server's to choose, so none of them may crash the run, hold
unbounded memory, or leave ``run.json`` at "running": each is a sample error
(exit 3) or, when the reply is still usable (``usage: 1e400``), a scored sample.
The gzip bomb runs in a subprocess so its peak RSS can be measured; two of its
four body x transport pairs run in ``make test-fast``, all four in ``make test``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers.cli import run_recworld
from helpers.security.common import KEY, eval_argv
from helpers.security.fake_server import FakeServer, gzip_bomb_bytes

TRANSPORTS = ["aiohttp", "sdk"]


def _samples(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]


def _finished(out: Path) -> str:
    status = json.loads((out / "run.json").read_text())["status"]
    assert status != "running"
    return str(status)


def _eval(
    suite: Path,
    server: FakeServer,
    out: Path,
    transport: str,
    *extra: str,
) -> tuple[int, str, float]:
    argv = eval_argv(suite, server.url, out, "--model-option", f"transport={transport}", *extra)
    started = time.monotonic()
    ran = run_recworld(*argv)
    return ran.returncode, ran.stderr, time.monotonic() - started


# mode, arg, the error a sample carries (None: the sample is scored)
MALFORMED = [
    ("deep_json", "100000", "nested deeper"),  # E14: a RecursionError crashed the run
    ("usage_inf", "", None),  # E15: an OverflowError crashed the run; the reply is fine apart from usage
    ("huge_int", "", "invalid JSON"),
    ("wrong_types", "", "without choices"),
    ("wrong_types_inner", "", "without message content"),
    ("invalid_json", "", "malformed reply"),  # E5
    ("error_no_choices", "", "without choices"),  # E6
    ("content_null", "", "without message content"),  # E7
]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(("mode", "arg", "error"), MALFORMED, ids=[m for m, _a, _e in MALFORMED])
def test_a_malformed_reply_is_a_sample_error_never_a_crash(
    evil_suite: Path,
    key_env: str,
    work: Path,
    mode: str,
    arg: str,
    error: str | None,
    transport: str,
) -> None:
    out = work / "run"
    with FakeServer(mode, arg, KEY) as server:
        code, err, _ = _eval(evil_suite, server, out, transport, "--max-retries", "1", "--backoff", "0.01")
    assert "Traceback" not in err
    (sample,) = _samples(out)
    if error is None:
        assert code == 0 and sample["error"] is None and _finished(out) == "finished"
        assert sample["usage"] == {"prompt_tokens": 0, "completion_tokens": 1}
    else:
        assert code == 3, err
        assert error in str(sample["error"]) and sample["correct"] is None
        assert _finished(out) == "too_many_errors"
        assert len(server.seen) == 2  # malformed is transient: retried once, then a sample error


def test_rank_mode_offsets_out_of_range_are_a_sample_error(
    evil_suite: Path, key_env: str, work: Path
) -> None:
    """``span_logprob``'s ``int(o)`` overflowed on ``1e400`` exactly like ``_usage``."""
    out = work / "run"
    with FakeServer("offsets_inf", "", KEY) as server:
        code, err, _ = _eval(evil_suite, server, out, "aiohttp", "--mode", "rank", "--max-retries", "0")
    assert code == 3 and "Traceback" not in err
    assert "prompt logprobs" in str(_samples(out)[0]["error"])


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(
    ("mode", "arg"), [("infinite_chunked", ""), ("big_cl", "100"), ("big_nocl", "40"), ("gzip_bomb", "256")]
)
def test_an_oversized_reply_is_refused_at_the_cap(
    evil_suite: Path,
    key_env: str,
    work: Path,
    mode: str,
    arg: str,
    transport: str,
) -> None:
    """E2, E3, E4, E12: refused once past 16 MiB (after decompression), a sample error, exit 3."""
    out = work / "run"
    with FakeServer(mode, arg, KEY) as server:
        code, err, _ = _eval(evil_suite, server, out, transport, "--max-retries", "0")
    assert code == 3, err
    assert "larger than 16777216 bytes" in str(_samples(out)[0]["error"])
    assert _finished(out) == "too_many_errors"


_RSS_CHILD = """
import sys
from recworld.cli import main
import aiohttp, httpx2, openai, recworld.evaluation.run  # imported before the baseline is read

def status(field):
    return int(open("/proc/self/status").read().split(field + ":")[1].split()[0])

# Reset the peak (VmHWM) to what is resident now: import-time garbage freed since would otherwise
# hide the first hundred MB a reply costs.
open("/proc/self/clear_refs", "w").write("5")
before = status("VmRSS")
code = main(sys.argv[1:])
print(code, before, status("VmHWM"))
"""


# A child process each (peak RSS is the measurement): the fast suite runs each body on one
# transport, each transport once; the other two pairs are slow.
BOMBS = [
    pytest.param(mode, 256, transport, id=f"{mode}-256-{transport}", marks=() if fast else pytest.mark.slow)
    for mode, transport, fast in (
        ("gzip_bomb", "aiohttp", True),
        ("gzip_bomb", "sdk", False),
        ("gzip_bomb_chunked", "aiohttp", False),
        ("gzip_bomb_chunked", "sdk", True),
    )
]


@pytest.mark.parametrize(("mode", "mib", "transport"), BOMBS)
@pytest.mark.timing
def test_a_gzip_bomb_costs_less_than_100_mb(
    evil_suite: Path, key_env: str, work: Path, transport: str, mode: str, mib: int
) -> None:
    """F12: 1 MB inflating to 1 GiB peaked at 2.3 GB. Extra peak RSS is now bounded by the 16 MiB cap."""
    _assert_bomb_bounded(evil_suite, work, transport, mode, mib)


@pytest.mark.slow
@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.timing
def test_the_reviews_1_gib_gzip_bomb_costs_less_than_100_mb(
    evil_suite: Path, key_env: str, work: Path, transport: str
) -> None:
    """E12 exactly: a 1,043,656-byte body that inflates to 1 GiB."""
    assert len(gzip_bomb_bytes(1024)) == 1_043_656
    _assert_bomb_bounded(evil_suite, work, transport, "gzip_bomb", 1024)


@pytest.mark.timing
def test_the_rss_meter_sees_a_large_reply(evil_suite: Path, key_env: str, work: Path) -> None:
    """The control: with the cap raised to 128 MiB, a 60 MiB reply shows up in the same measurement."""
    code, extra_mb = _extra_peak_mb(
        evil_suite, work, "aiohttp", "big_nocl", "60", "max_response_bytes=134217728"
    )
    assert code == 3 and extra_mb > 60


def _assert_bomb_bounded(suite: Path, work: Path, transport: str, mode: str, mib: int) -> None:
    gzip_bomb_bytes(mib)  # built before the child starts, so the server answers at once
    code, extra_mb = _extra_peak_mb(suite, work, transport, mode, str(mib))
    assert code == 3
    assert extra_mb < 100


def _extra_peak_mb(
    suite: Path, work: Path, transport: str, mode: str, arg: str, *options: str
) -> tuple[int, float]:
    """Run one eval in a child against ``mode``; its exit code and the peak RSS it added (MB)."""
    with FakeServer(mode, arg, KEY) as server:
        argv = eval_argv(
            suite, server.url, work / "run", "--max-retries", "0", "--model-option", f"transport={transport}"
        )
        argv += [f for option in options for f in ("--model-option", option)]
        done = subprocess.run(
            [sys.executable, "-c", _RSS_CHILD, *argv],
            capture_output=True,
            text=True,
            timeout=300,
            env=os.environ.copy(),
            check=False,
        )
    assert done.returncode == 0 and done.stdout.split(), done.stderr[-2000:]
    code, before_kb, after_kb = (int(x) for x in done.stdout.split()[-3:])
    extra_mb = (after_kb - before_kb) / 1024
    base_mb = before_kb / 1024
    print(f"\n{mode} {arg} via {transport}: exit {code}, extra peak RSS {extra_mb:.1f} MB (of {base_mb:.0f})")
    return code, extra_mb


@pytest.mark.timing
def test_slowloris_times_out(evil_suite: Path, key_env: str, work: Path) -> None:
    """E1: headers, then a byte a second: the attempt times out and the sample fails."""
    out = work / "run"
    with FakeServer("slowloris", "30", KEY) as server:
        code, err, seconds = _eval(evil_suite, server, out, "aiohttp", "--timeout", "1", "--max-retries", "1")
    assert code == 3 and seconds < 15, err
    assert "timed out" in str(_samples(out)[0]["error"])


@pytest.mark.parametrize("value", ["999999", "inf", "Wed, 21 Oct 2099 07:28:00 GMT", "nan", "1e400"])
@pytest.mark.timing
def test_retry_after_is_capped(evil_suite: Path, key_env: str, work: Path, value: str) -> None:
    """E9: a server's Retry-After never waits past --backoff-max."""
    with FakeServer("retry_after", value, KEY) as server:
        argv = ("--max-retries", "1", "--backoff-max", "0.1", "--backoff", "0.05")
        code, err, seconds = _eval(evil_suite, server, work / "run", "aiohttp", *argv)
    assert code == 3 and seconds < 10, err
    assert len(server.seen) == 2


@pytest.mark.parametrize(
    "host", ["127.1", "2130706433", "0x7f.0.0.1", "127.0.0.01", "0177.0.0.1", "127.0.0.1."]
)
@pytest.mark.timing
def test_a_non_canonical_loopback_url_is_a_config_error(
    evil_suite: Path, key_env: str, work: Path, host: str
) -> None:
    """E16/F15: ``http://127.1`` was retried 7 times as a transient error; now exit 2 at once."""
    started = time.monotonic()
    ran = run_recworld(*eval_argv(evil_suite, f"http://{host}:18100/v1", work / "run"))
    assert ran.returncode == 2, ran.stderr
    assert "canonical IPv4" in ran.stderr and time.monotonic() - started < 10
    assert not (work / "run" / "samples.jsonl").exists()


TRICKY = [
    "http://a\\@127.0.0.1/v1",
    "http://a;@127.0.0.1/v1",
    "http://evil.example#@127.0.0.1/v1",
    "http://evil.example?@127.0.0.1/v1",
    "http://evil.example%2f@127.0.0.1/v1",
    "http://127.0.0.1%2f@evil.example/v1",
    "http://127.0.0.1\t.evil.example/v1",
    "http://127.0.0.1:80@evil.example/v1",
    "http://[::1]@evil.example/v1",
    "http://evil.example\\127.0.0.1/v1",
    "http://user:pass@127.0.0.1/v1",
    "http://127.0.0.1./v1",
    "http://LOCALHOST/v1",
    "http://[0:0:0:0:0:0:0:1]/v1",
    "http://[::ffff:127.0.0.1]/v1",
    "http://127.0.0.1 /v1",
    "http://127.0.0.1\n.evil.example/v1",
    "http://0.0.0.0/v1",
    "http://[::1/v1",
]


@pytest.mark.parametrize("url", TRICKY)
def test_the_loopback_rule_and_the_clients_read_one_host(url: str, key_env: str) -> None:
    """E17: where the key rule says loopback, yarl (aiohttp) and httpx connect to loopback too."""
    import httpx
    import yarl

    from recworld.errors import ConfigError
    from recworld.models._keys import choose_key, is_loopback

    try:
        choice = choose_key("m", url, url, "OPENAI_API_KEY", allow_insecure_http=False)
    except (ConfigError, ValueError):
        return  # refused outright: nothing is sent anywhere
    if choice.secret is None:
        return  # the key is withheld, wherever the client connects
    for parse in (lambda u: yarl.URL(u).host, lambda u: httpx.URL(u).host):
        try:
            host = parse(url)
        except (ValueError, httpx.InvalidURL):
            continue  # this client refuses the URL: nothing is sent
        assert host is not None and is_loopback(host), (url, host)


@pytest.mark.parametrize("step", [1, 7, 65536])
@pytest.mark.parametrize("encoding", ["gzip", "deflate", "raw-deflate", "gzip-members", "identity"])
def test_the_inflater_decodes_what_servers_send(encoding: str, step: int) -> None:
    import gzip
    import zlib

    from recworld.models._transport import Inflater

    raw = json.dumps({"choices": [{"message": {"content": "A" * 5000}}]}).encode()
    body = {
        "gzip": gzip.compress(raw),
        "deflate": zlib.compress(raw),
        "raw-deflate": zlib.compress(raw)[2:-4],
        "gzip-members": gzip.compress(raw[:3000]) + gzip.compress(raw[3000:]),
        "identity": raw,
    }[encoding]
    inflater = Inflater({"raw-deflate": "deflate", "gzip-members": "gzip"}.get(encoding, encoding), len(raw))
    for start in range(0, len(body), step):
        inflater.feed(body[start : start + step])
    assert inflater.finish() == raw


def test_the_inflater_refuses_what_it_cannot_bound() -> None:
    import gzip

    from recworld.errors import ModelError
    from recworld.models._transport import Inflater

    with pytest.raises(ModelError, match="larger than 1000 bytes once decompressed"):
        Inflater("gzip", 1000).feed(gzip.compress(bytes(1001)))
    with pytest.raises(ModelError, match="Content-Encoding 'br'"):
        Inflater("br", 1000)
    with pytest.raises(ModelError, match="Content-Encoding 'gzip, gzip'"):
        Inflater("gzip, gzip", 1000)
    with pytest.raises(ModelError, match="corrupt"):
        Inflater("gzip", 1000).feed(b"\x1f\x8b\x08\x00garbage-not-deflate")
