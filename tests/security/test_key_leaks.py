"""Keys only where they belong (review cases E10a-d, E11, E19, H1, H2; F9, F10, F11).

The one scan that matters: after runs against servers that echo the key (in
an error body at any offset, in a successful reply, in headers, in a protocol
error the HTTP client quotes), no file under the run, the report or
``RECWORLD_HOME`` (the response cache included) holds any 12-character run of
the key, and neither does the terminal output. Each case first checks the key
really was sent, so a withheld key cannot make it pass.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from helpers.cli import run_recworld
from helpers.security.common import KEY, eval_argv, files_with_key, text_has_key
from helpers.security.fake_server import FakeServer
from recworld.chat import Message, Request
from recworld.models._keys import KeyChoice, redact_secret
from recworld.models._replies import error_message
from recworld.models.openai_compat import OpenAICompatModel
from recworld.models.registry import ModelConfig

# (mode, arg): every way the fake server echoes what it was sent.
ECHOES = [
    ("echo_key_error", "0"),
    ("echo_key_error", "15"),  # E10b
    ("echo_key_error", "256"),  # E10c: 39 of 40 characters leaked before
    ("echo_key_error", "280"),  # E10a: 15 characters leaked before
    ("echo_key_error", "295"),
    ("echo_key_text", "4795"),  # a plain-text body, the key past any early cut
    ("echo_key_200", ""),  # E10d: a successful reply
    ("echo_key_header", ""),  # 429 with the key in Retry-After and X-Echo
    ("proto_key", "nocolon"),  # the client's parser quotes the bad header line
    ("proto_key", "badname"),
    ("proto_key", "badstatus"),
    ("proto_key", "badcl"),
    ("proto_key", "badchunk"),
    ("proto_key", "badenc"),
]


# Each case runs an eval and a report (about half a second). ``make test`` runs every echo on
# both transports; ``make test-fast`` runs every echo once, the transports alternating down
# ECHOES (so each transport meets error bodies and protocol errors), and E10c on both.
def _fast_leak(index: int, mode: str, arg: str, transport: str) -> bool:
    return (mode, arg) == ("echo_key_error", "256") or transport == ("aiohttp", "sdk")[index % 2]


LEAK_CASES = [
    pytest.param(
        mode,
        arg,
        transport,
        id=f"{mode}-{arg}-{transport}",
        marks=() if _fast_leak(index, mode, arg, transport) else pytest.mark.slow,
    )
    for transport in ("aiohttp", "sdk")
    for index, (mode, arg) in enumerate(ECHOES)
]


@pytest.mark.parametrize(("mode", "arg", "transport"), LEAK_CASES)
def test_no_file_a_run_writes_holds_the_key(
    evil_suite: Path,
    key_env: str,
    work: Path,
    mode: str,
    arg: str,
    transport: str,
) -> None:
    out = work / "run"
    with FakeServer(mode, arg, KEY) as server:
        argv = eval_argv(
            evil_suite, server.url, out, "--max-retries", "0", "--model-option", f"transport={transport}"
        )
        ran = run_recworld(*argv)
    assert server.seen and all(s.auth_is_key for s in server.seen), (
        "the key was not sent: the case proves nothing"
    )
    assert ran.returncode in (0, 3)
    report = run_recworld("report", out, "--out", work / "report")
    assert report.returncode == 0, report.stderr
    assert (work / "report" / "report.html").is_file()
    assert files_with_key(work, Path(os.environ["RECWORLD_HOME"])) == []
    for text in (ran.stdout, ran.stderr, report.stdout, report.stderr):
        assert not text_has_key(text)
    samples = (out / "samples.jsonl").read_text(encoding="utf-8")
    if mode in ("echo_key_error", "echo_key_text", "echo_key_200"):
        assert "***" in samples  # the echo reached the stored text, redacted


def test_a_redirect_keeps_the_key_at_home(key_env: str, work: Path) -> None:
    """E8a/E8b: a 307 is never followed on either transport; the target never hears of the key."""
    with FakeServer("ok", "A", KEY) as target:
        for transport in ("aiohttp", "sdk"):
            with FakeServer("redirect", str(target.port), KEY) as server:
                model = _model(server.url, transport)
                with pytest.raises(Exception, match="HTTP 307"):
                    asyncio.run(_ask(model))
            assert target.seen == []


def _model(url: str, transport: str, **config: object) -> OpenAICompatModel:
    options = {"transport": transport} if transport != "auto" else {}
    return OpenAICompatModel("fake", ModelConfig(base_url=url, options=options, **config))  # type: ignore[arg-type]


async def _ask(model: OpenAICompatModel) -> str:
    try:
        return (await model.complete(Request((Message("user", "Which one? A or B"),)))).text
    finally:
        await model.aclose()


@pytest.mark.parametrize("transport", ["auto", "aiohttp", "sdk"])
def test_with_a_proxy_set_a_loopback_server_gets_the_key_and_the_proxy_nothing(
    evil_suite: Path,
    key_env: str,
    work: Path,
    monkeypatch: pytest.MonkeyPatch,
    transport: str,
) -> None:
    """E11: ``http_proxy`` set and a loopback ``http://`` base URL: the key went to the proxy in clear."""
    with FakeServer("ok", "A", KEY) as proxy, FakeServer("ok", "A", KEY) as server:
        monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{proxy.port}")
        monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{proxy.port}")
        extra = [] if transport == "auto" else ["--model-option", f"transport={transport}"]
        ran = run_recworld(*eval_argv(evil_suite, server.url, work / "run", *extra))
    assert ran.returncode == 0, ran.stderr
    assert proxy.seen == []
    assert server.seen and all(s.auth_is_key for s in server.seen)


def test_through_a_proxy_plain_http_never_carries_the_key(
    key_env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A non-loopback http server the user allowed, behind a proxy: the proxy sees the placeholder."""
    with FakeServer("ok", "A", KEY) as proxy:
        monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{proxy.port}")
        model = _model("http://models.example.invalid/v1", "auto", allow_insecure_http=True)
        assert model.transport == "sdk"
        assert asyncio.run(_ask(model)) == "A"
    assert len(proxy.seen) == 1
    assert proxy.seen[0].path == "http://models.example.invalid/v1/chat/completions"  # it went via the proxy
    assert proxy.seen[0].auth_present and not proxy.seen[0].auth_is_key
    # no_proxy names the host: the request goes direct, and the key with it (allow_insecure_http).
    monkeypatch.setenv("no_proxy", "models.example.invalid")
    direct = _model("http://models.example.invalid/v1", "auto", allow_insecure_http=True)
    assert direct.transport == "aiohttp"
    asyncio.run(direct.aclose())


def test_https_through_a_proxy_still_sends_the_key(key_env: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CONNECT tunnel carries TLS the proxy cannot read: the key is sent (and the SDK transport chosen)."""
    monkeypatch.setenv("https_proxy", "http://127.0.0.1:9")
    model = _model("https://models.example.invalid/v1", "auto")
    assert model.transport == "sdk"
    assert model._key.secret == KEY
    asyncio.run(model.aclose())


@pytest.mark.parametrize("transport", ["aiohttp", "sdk"])
def test_debug_logs_hold_no_key(
    evil_suite: Path,
    key_env: str,
    work: Path,
    monkeypatch: pytest.MonkeyPatch,
    transport: str,
) -> None:
    """E19: ``OPENAI_LOG=debug`` and ``--log-level debug`` on both transports, against an echoing server."""
    monkeypatch.setenv("OPENAI_LOG", "debug")
    out = work / "run"
    with FakeServer("echo_key_error", "256", KEY) as server:
        argv = eval_argv(evil_suite, server.url, out, "--max-retries", "1", "--backoff", "0.01")
        ran = run_recworld("--log-level", "debug", *argv, "--model-option", f"transport={transport}")
    assert ran.returncode == 3
    assert not text_has_key(ran.stdout + ran.stderr)
    assert files_with_key(work) == []
    header = json.loads((out / "run.json").read_text())
    assert "OPENAI_API_KEY" in json.dumps(header) or "api_key_env" in json.dumps(header)  # H2: the name only


def test_redaction_covers_every_fragment_before_any_cut() -> None:
    """F9: cutting first left 39 of 40 characters; every run of 8 or more is redacted, then cut."""
    choice = KeyChoice(KEY, KEY, "key from $OPENAI_API_KEY")
    for pad in range(0, 320, 7):
        body = json.dumps({"error": {"message": "x" * pad + KEY + " tail"}}).encode()
        said = error_message(body, choice.redact)
        assert not text_has_key(said, KEY) and len(said) <= 300
        # Redacted before the cut, not even the few characters a cut would leave (below a fragment) remain.
        for size in range(4, len(KEY) + 1):
            assert KEY[:size] not in said, (pad, said[-20:])
    pieces = f"a{KEY[:10]}b{KEY[5:30]}c{KEY[-9:]}d{KEY[:7]}"
    assert redact_secret(pieces, KEY) == f"a***b***c***d{KEY[:7]}"  # a 7-character run is not the key
    assert redact_secret("no secret here", KEY) == "no secret here"
    assert redact_secret("abc", None) == "abc"
