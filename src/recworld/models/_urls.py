"""A server URL never carries a secret: keys come from the environment only.

Invariant: a URL RecWorld is given to talk to (``--base-url``, an embedder's
server, ``--ray-address``, ``--qdrant-url``) holds no credentials, so no stored
record, log line or error message that quotes it can hold one either.
:func:`refuse_credentials` is the one check, applied where such a setting is
declared (:data:`recworld.models.registry.ServerURL`) and again where a key meets a
URL (:func:`recworld.models._keys.choose_key`). It refuses, with a hint to use
the environment and without echoing the URL:

* userinfo (``user:pass@``, ``:key@``, ``key@``, percent-encoded or not), that is
  any ``@`` before the query;
* a query parameter whose name reads as a credential (``api-key``, ``key``,
  ``token``, ``access_token``, ``sig``, ``password``, ``auth``..., in any case,
  percent-encoded or not) and any value or path segment that looks like an API
  key (``sk-...``, a JWT, a GitHub or Hugging Face token);
* a ``#fragment`` (never sent, so only ever a place to leave a secret).

:func:`strip_url_credentials` is the second line for text a library wrote: it
replaces the userinfo of every URL in ``text`` by ``***``.
"""

from __future__ import annotations

import re
from urllib.parse import unquote_plus

__all__ = ["refuse_credentials", "strip_url_credentials"]

HINT = "put the key in the environment variable --api-key-env names (default OPENAI_API_KEY)"
# Query names that carry a credential (Azure's api-key, Google's key, OAuth's access_token, SAS sig).
_SECRET_NAME = re.compile(r"key|token|secret|passw|pwd|auth|sig|credential|session|bearer|cookie", re.I)
# Values shaped like a key: sk-/pk-/rk-, Hugging Face hf_, GitHub gh?_, Slack xox?-, a JWT.
_SECRET_VALUE = re.compile(
    r"^(?:sk|pk|rk)-[\w-]{8,}|^hf_\w{8,}|^gh[pousr]_\w{8,}|^xox\w-|^eyJ[\w-]{8,}\.", re.I
)
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*:/+)[^\s/?#@]*@")


def refuse_credentials(url: str) -> str:
    """``url`` unchanged; ValueError when it carries a credential (see the module docstring)."""
    text = str(url)
    decoded = unquote_plus(text)
    before_query = re.split(r"[?#]", text, maxsplit=1)[0]
    if "@" in before_query or "@" in unquote_plus(before_query):
        raise ValueError(f"a server URL may not hold user:password@ credentials; {HINT}")
    if "#" in text:
        raise ValueError(f"a server URL may not hold a #fragment; {HINT} if it held a key")
    _, _, query = text.partition("?")
    for part in re.split(r"[&;]", query) if query else ():
        name, _, value = part.partition("=")
        if _SECRET_NAME.search(unquote_plus(name)) or _SECRET_VALUE.search(unquote_plus(value).strip()):
            raise ValueError(f"a server URL may not hold a key as a query parameter; {HINT}")
    if any(_SECRET_VALUE.search(piece) for piece in re.split(r"[/\\?&=;]", decoded) if piece):
        raise ValueError(f"a server URL may not hold an API key; {HINT}")
    return url


def strip_url_credentials(text: str) -> str:
    """``text`` with the ``user:pass@`` of every ``scheme://`` URL in it replaced by ``***@``."""
    return _USERINFO.sub(r"\1***@", text) if "@" in text else text
