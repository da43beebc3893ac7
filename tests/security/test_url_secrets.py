"""Secrets have one road: a key in a server URL is refused, never stored (issue 23, item 6; review 3, D11).

``--base-url "http://user:$KEY@host/v1"`` and ``...?api-key=$KEY`` put the key
into ``run.json`` (H5, H6), and the userinfo form was retried 7 times as a
transient error. The class: a key in the userinfo (with or without a user,
percent-encoded, any case of scheme), in a query parameter named like a
credential (any case, any separator, percent-encoded), as a key-shaped value
anywhere, or in a fragment. Each is refused with a hint to use the environment,
and the key appears in no error, no file and no output; the checker scans for
any 12-character run of the key, as the review's ``keyscan.py`` did.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from helpers.cli import run_recworld
from helpers.security.common import KEY, files_with_key, text_has_key
from helpers.security.fake_server import FakeServer
from recworld.errors import ConfigError, from_validation
from recworld.models import ModelConfig
from recworld.models._keys import choose_key
from recworld.models._urls import strip_url_credentials

KEYS = st.sampled_from([KEY, "sk-proj-" + "Ab3" * 12]) | st.text(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", min_size=24, max_size=40
)
HOSTS = st.sampled_from(["127.0.0.1:8000", "localhost:1", "[::1]:9", "api.example.com", "10.0.0.2:443"])
SCHEMES = st.sampled_from(["http", "https", "HTTP", "Https"])
NAMES = st.sampled_from(
    ["api-key", "api_key", "apikey", "API-KEY", "key", "token", "access_token", "sig", "password", "auth",
     "x-api-key", "subscription-key", "Authorization", "secret", "api%2Dkey", "api%5Fkey", "session"]
)  # fmt: skip


@st.composite
def secret_urls(draw: st.DrawFn) -> tuple[str, str]:
    """(url, key): a server URL that carries the key somewhere."""
    key = draw(KEYS)
    base = f"{draw(SCHEMES)}://"
    host = draw(HOSTS)
    form = draw(
        st.sampled_from(["userinfo", "password", "user", "encoded", "query", "query2", "semi", "frag"])
    )
    if form == "userinfo":
        return f"{base}{draw(st.sampled_from(['user', 'u', 'apikey']))}:{key}@{host}/v1", key
    if form == "password":
        return f"{base}:{key}@{host}/v1", key
    if form == "user":
        return f"{base}{key}@{host}/v1", key
    if form == "encoded":
        at = draw(st.sampled_from(["@", ""]))  # a real @ after it, or only the encoded one
        return f"{base}{quote('user:' + key + '@', safe='')}{at}{host}/v1", key
    if form == "query":
        return f"{base}{host}/v1?{draw(NAMES)}={key}", key
    if form == "query2":
        return f"{base}{host}/v1?api-version=2024-02-01&{draw(NAMES)}={quote(key)}", key
    if form == "semi":
        return f"{base}{host}/v1?a=1;{draw(NAMES)}={key}", key
    return f"{base}{host}/v1#{key}", key


@settings(max_examples=300, deadline=None)
@given(secret_urls())
def test_a_key_in_a_server_url_is_refused_and_never_echoed(case: tuple[str, str]) -> None:
    url, key = case
    with pytest.raises(ValidationError) as caught:
        ModelConfig(base_url=url)
    shown = str(from_validation(caught.value))  # what every command prints for a refused setting
    assert not text_has_key(str(caught.value), key) and not text_has_key(shown, key)
    assert "environment" in str(caught.value)
    with pytest.raises(ConfigError) as refused:  # the second line: where a key meets a URL
        choose_key("m", url, "https://api.openai.com/v1", "OPENAI_API_KEY", False)
    assert not text_has_key(str(refused.value), key)


def test_the_embedder_server_url_is_checked_the_same_way() -> None:
    from recworld.lunar.llm.config import EmbedderConfig

    with pytest.raises(ValidationError) as caught:
        EmbedderConfig(model="openai:e", backend=ModelConfig(base_url=f"http://u:{KEY}@127.0.0.1:1/v1"))
    assert not text_has_key(str(caught.value))


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/v1",
        "https://api.openai.com/v1",
        "http://localhost:11434/v1",
        "https://my.azure.example/openai/deployments/x?api-version=2024-02-01",
        "http://[::1]:8080/v1",
    ],
)
def test_plain_server_urls_still_work(url: str) -> None:
    assert ModelConfig(base_url=url).base_url == url


@settings(max_examples=100, deadline=None)
@given(secret_urls(), st.text(max_size=20))
def test_text_that_quotes_a_url_loses_its_userinfo(case: tuple[str, str], around: str) -> None:
    url, key = case
    if "@" not in url.split("?")[0]:
        return
    cleaned = strip_url_credentials(f"{around} cannot connect to {url} ({around})")
    head = cleaned.split("?")[0]
    assert key not in head or "%" in url.split("@")[0]


@pytest.mark.parametrize(
    "template",
    [
        "http://user:{key}@127.0.0.1:{port}/v1",  # H5: stored in run.json, retried 7 times
        "http://127.0.0.1:{port}/v1?api-key={key}",  # H6: stored in run.json
        "http://:{key}@127.0.0.1:{port}/v1",
        "http://127.0.0.1:{port}/v1?x=1&API_KEY={key}",
        "http://127.0.0.1:{port}/v1#{key}",
    ],
)
def test_d11_credentials_in_base_url_are_one_config_error_and_stored_nowhere(
    evil_suite: Path,
    work: Path,
    key_env: str,
    template: str,
) -> None:
    import shutil

    suite = work / "suite"
    shutil.copytree(evil_suite, suite, symlinks=True)
    with FakeServer("ok", expect_key=KEY) as server:
        url = template.format(key=KEY, port=server.port)
        argv = ["eval", suite, "--model", "openai:q", "--base-url", url, "--out", work / "q", "--limit", "1"]
        ran = run_recworld(*argv, "--no-progress")
        assert server.seen == []  # refused before any request: nothing retried
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr.count("\n") == 1 and "environment" in ran.stderr and "Traceback" not in ran.stderr
    assert not text_has_key(ran.stdout) and not text_has_key(ran.stderr)
    assert files_with_key(work) == []
    assert not (work / "q").exists()


def test_describe_images_refuses_a_key_in_its_base_url_before_writing(work: Path, key_env: str) -> None:
    from helpers.security.worlds import write_ml_latest_small

    data = write_ml_latest_small(work / "data" / "ml-latest-small")
    url = f"http://u:{KEY}@127.0.0.1:9/v1"
    argv = [
        "describe-images",
        "--dataset",
        data,
        "--model",
        "openai:v",
        "--base-url",
        url,
        "--out",
        work / "d",
    ]
    ran = run_recworld(*argv)
    assert ran.returncode == 2 and "--base-url" in ran.stderr and "Traceback" not in ran.stderr, ran.stderr
    assert not text_has_key(ran.stdout + ran.stderr) and files_with_key(work) == []
    assert not (work / "d").exists()
