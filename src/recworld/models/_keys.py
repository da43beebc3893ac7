"""Which API key, if any, an ``openai:`` model may send to its base URL.

The key is read from the environment variable that model's
``ModelConfig.api_key_env`` names, at the moment the model is created, and it
goes only to that model's ``base_url``. Over plain ``http://`` anyone on the
path can read it, so it is sent there only to a loopback host (the usual local
vLLM or llama.cpp server) unless ``allow_insecure_http`` says otherwise; when
it is withheld the server gets the placeholder instead, and a 401 names why.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from urllib.parse import urlsplit

from recworld.errors import ConfigError

# What a local server that wants no key gets (vLLM and llama.cpp servers accept anything).
PLACEHOLDER_KEY = "EMPTY"


@dataclass(frozen=True)
class KeyChoice:
    """The bearer token to send, and a note for error messages about where the key came from."""

    token: str  # the real key, or the placeholder
    secret: str | None  # the real key when it is sent (for redaction), else None
    note: str  # "key from $VAR", "no key set in $VAR", or why the key was withheld


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback IP literal (127.0.0.0/8, ::1)."""
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def choose_key(
    model: str, base_url: str | None, default_url: str, api_key_env: str, allow_insecure_http: bool
) -> KeyChoice:
    """The token for ``base_url`` (or the default API when None); ConfigError when one is required."""
    url = base_url or default_url
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"openai:{model}: base_url {url!r} is not an http(s) URL")
    key = os.environ.get(api_key_env, "")
    if not key:
        if base_url is None:
            raise ConfigError(
                f"openai:{model} needs an API key in the environment variable {api_key_env!r} "
                "(or a --base-url for a local server)"
            )
        return KeyChoice(PLACEHOLDER_KEY, None, f"no key set in ${api_key_env}")
    if parts.scheme == "http" and not allow_insecure_http and not is_loopback(parts.hostname):
        return KeyChoice(
            PLACEHOLDER_KEY,
            None,
            f"the key in ${api_key_env} was not sent over plain http to {parts.hostname}; "
            "use https, or --allow-insecure-http",
        )
    return KeyChoice(key, key, f"key from ${api_key_env}")
