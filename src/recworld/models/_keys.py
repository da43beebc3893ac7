"""Which API key, if any, an ``openai:`` model may send to its base URL, and how it is kept out of text.

The key is read from the environment variable that model's
``ModelConfig.api_key_env`` names, at the moment the model is created, and it
goes only to that model's ``base_url``. Over plain ``http://`` anyone on the
path can read it, so it is sent there only to a loopback host (the usual local
vLLM or llama.cpp server) unless ``allow_insecure_http`` says otherwise, and
never through a proxy: a proxy on the path of plain http reads every header.
Loopback is never proxied (:func:`proxy_for`), so a local server keeps its key
while ``http_proxy`` is set. When the key is withheld the server gets the
placeholder instead, and a 401 names why.

A host is judged as the connection will see it: one whose last label is a
number must be a canonical IPv4 address (``127.1`` or ``2130706433`` is a
:class:`ConfigError`, not a retried connection failure), so the loopback rule
and the client never read one host two ways.

:func:`redact_secret` takes the key out of any text a server sent before it is
stored or shown: every run of 8 or more of its characters becomes ``***``, so
a key cut short by truncation still does not survive.
"""

from __future__ import annotations

import ipaddress
import os
import re
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlsplit

from recworld.errors import ConfigError
from recworld.models._urls import refuse_credentials, strip_url_credentials

# What a local server that wants no key gets (vLLM and llama.cpp servers accept anything).
PLACEHOLDER_KEY = "EMPTY"
# Runs of the key this long or longer are redacted wherever they appear.
SECRET_FRAGMENT = 8
_NUMERIC_LABEL = re.compile(r"(?:0x[0-9a-f]*|[0-9]+)")


@dataclass(frozen=True)
class KeyChoice:
    """The bearer token to send, and a note for error messages about where the key came from."""

    token: str  # the real key, or the placeholder
    secret: str | None  # the real key when it is sent (for redaction), else None
    note: str  # "key from $VAR", "no key set in $VAR", or why the key was withheld

    def redact(self, text: str) -> str:
        """``text`` with every run of the key of :data:`SECRET_FRAGMENT` characters or more replaced.

        The userinfo of any URL in it goes too (:func:`~recworld.models._urls.strip_url_credentials`).
        """
        return strip_url_credentials(redact_secret(text, self.secret))


def redact_secret(text: str, secret: str | None) -> str:
    """Replace each stretch of ``text`` covered by a :data:`SECRET_FRAGMENT`-character piece of ``secret``.

    A key shorter than the fragment is replaced where it appears whole.
    """
    if not secret or not text:
        return text
    size = min(len(secret), SECRET_FRAGMENT)
    spans: list[tuple[int, int]] = []
    for start in range(len(secret) - size + 1):
        piece = secret[start : start + size]
        at = text.find(piece)
        while at != -1:
            spans.append((at, at + size))
            at = text.find(piece, at + 1)
    if not spans:
        return text
    spans.sort()
    out: list[str] = []
    done = 0
    cut_start, cut_end = spans[0]
    for begin, end in spans[1:]:
        if begin <= cut_end:
            cut_end = max(cut_end, end)
            continue
        out += [text[done:cut_start], "***"]
        done, cut_start, cut_end = cut_end, begin, end
    out += [text[done:cut_start], "***", text[cut_end:]]
    return "".join(out)


def canonical_host(model: str, host: str) -> str:
    """``host`` lower-cased, brackets off; ConfigError when it ends in a number but is no canonical IPv4."""
    name = host.strip("[]").lower()
    if ":" in name:
        try:
            ipaddress.IPv6Address(name)
        except ValueError:
            raise ConfigError(f"openai:{model}: base_url host {host!r} is not a valid IPv6 address") from None
        return name
    last = name.removesuffix(".").rpartition(".")[2]
    if _NUMERIC_LABEL.fullmatch(last):
        try:
            address = ipaddress.IPv4Address(name)
        except ValueError:
            address = None
        if address is None or str(address) != name:
            raise ConfigError(
                f"openai:{model}: base_url host {host!r} is not a canonical IPv4 address "
                "(write four decimal numbers, such as 127.0.0.1)"
            )
    return name


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback IP literal (127.0.0.0/8, ::1)."""
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def proxy_for(url: str, *, exempt_loopback: bool = True) -> str | None:
    """The proxy the environment (``*_proxy``, ``no_proxy``) routes ``url`` through; None: direct.

    Loopback is direct unless ``exempt_loopback`` is off (what a caller's own
    httpx client does, which trusts the environment without that exemption).
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    if exempt_loopback and is_loopback(host):
        return None
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    bypass = getattr(urllib.request, "proxy_bypass_environment")  # noqa: B009 - not in typeshed
    if not proxy or bypass(host, proxies):
        return None
    return proxy


def choose_key(
    model: str,
    base_url: str | None,
    default_url: str,
    api_key_env: str,
    allow_insecure_http: bool,
    *,
    proxy: str | None = None,
) -> KeyChoice:
    """The token for ``base_url`` (or the default API when None); ConfigError when one is required.

    ``proxy`` is the proxy the request will go through (None: a direct connection).
    """
    url = base_url or default_url
    try:
        refuse_credentials(url)
    except ValueError as exc:
        raise ConfigError(f"openai:{model}: {exc}") from None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"openai:{model}: base_url {url!r} is not an http(s) URL")
    host = canonical_host(model, parts.hostname)
    key = os.environ.get(api_key_env, "")
    if not key:
        if base_url is None:
            raise ConfigError(
                f"openai:{model} needs an API key in the environment variable {api_key_env!r} "
                "(or a --base-url for a local server)"
            )
        return KeyChoice(PLACEHOLDER_KEY, None, f"no key set in ${api_key_env}")
    if parts.scheme == "http" and proxy is not None:
        proxy_host = urlsplit(proxy).hostname or proxy
        return KeyChoice(
            PLACEHOLDER_KEY,
            None,
            f"the key in ${api_key_env} was not sent over plain http through the proxy {proxy_host}; "
            f"use https, or add {host} to no_proxy",
        )
    if parts.scheme == "http" and not allow_insecure_http and not is_loopback(host):
        return KeyChoice(
            PLACEHOLDER_KEY,
            None,
            f"the key in ${api_key_env} was not sent over plain http to {host}; "
            "use https, or --allow-insecure-http",
        )
    return KeyChoice(key, key, f"key from ${api_key_env}")
