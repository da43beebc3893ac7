"""Reading an OpenAI-compatible server's reply: statuses, error bodies, token counts, logprob spans.

Everything here treats the reply as hostile: a value of the wrong type, a
number out of range (``usage: 1e400``, an offset of ``inf``) or a missing field
is a classified model error, never an exception the runner would take for a
bug. Error text from a server passes ``redact`` before it is cut to
:data:`ERROR_CHARS`, so a cut can never leave part of a key behind.

Invariant: a reply body becomes well-formed data or a classified error, in
every field (answer, model name, error message, usage, logprobs): invalid
UTF-8, ``NaN``/``Infinity`` tokens and nesting past the depth guard are a
malformed reply (:func:`parse_reply` raises :class:`DataError`, which callers
turn into a :class:`TransientModelError`); a lone surrogate escape
(``"\\ud800"``) in any string, key or value, is replaced by U+FFFD; a logprob
that is NaN or ``+inf`` is a malformed reply. So no server can make the runner
raise, hang or write text that does not encode.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from recworld.chat import Usage, clean_text
from recworld.errors import DataError, ModelError
from recworld.io import parse_json
from recworld.models._transport import HTTPReply
from recworld.models.base import FatalModelError, TransientModelError

TRANSIENT_STATUS = frozenset({408, 409, 425, 429})
FATAL_STATUS = {
    401: "the server rejected the API key",
    403: "permission denied",
    404: "model not found (or base_url lacks the API path, such as /v1)",
}
ERROR_CHARS = 300  # a server's error message is cut to this, after redaction
# Converting a server's value can fail these ways (an int(inf) overflows); each is a malformed reply.
BAD_VALUE = (LookupError, TypeError, ValueError, ArithmeticError)


# A JSON escape in the surrogate range: only then can a parsed string hold a lone surrogate.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def parse_reply(body: bytes) -> Any:
    """A reply body as plain JSON with every string well-formed (see the module docstring).

    Raises :class:`DataError` for invalid UTF-8, ``NaN``/``Infinity``, bad JSON
    or nesting past :data:`recworld.io.MAX_JSON_DEPTH`.
    """
    data = parse_json(body, surrogates=True)
    return _cleaned(data) if _SURROGATE_ESCAPE.search(body) else data


def _cleaned(value: Any) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(k): _cleaned(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cleaned(v) for v in value]
    return value


def logprob_of(value: Any) -> float:
    """A logprob from a reply: a number that is finite or ``-inf``; anything else is a ValueError."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"a logprob is not a number: {type(value).__name__}")
    number = float(value)
    if math.isnan(number) or number == math.inf:
        raise ValueError("a logprob is NaN or +inf")
    return number


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """The wait a server asked for, in seconds (the runner caps it with its back-off limit)."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        import time

        return max(0.0, when.timestamp() - time.time())


def classify_status(reply: HTTPReply, where: str, key_note: str, redact: Callable[[str], str]) -> Exception:
    """The error a non-2xx reply stands for (see the module docstring)."""
    status = reply.status
    said = error_message(reply.body, redact)
    if status in FATAL_STATUS:
        cause = FATAL_STATUS[status]
        extra = f"; {key_note}" if status in (401, 403) else ""
        return FatalModelError(redact(f"{where}: {cause} (HTTP {status}{extra}): {said}"))
    detail = redact(f"{where}: server returned HTTP {status}: {said}")
    if status in TRANSIENT_STATUS or status >= 500:
        return TransientModelError(detail, retry_after=retry_after(reply.headers))
    return ModelError(detail)


def span_logprob(choice: Mapping[str, Any], start: int, text: str) -> tuple[float, int]:
    """Sum and count of the echoed token logprobs covering ``text[start:]``.

    Tokens are placed by ``text_offset``; a token that straddles ``start``
    belongs to the continuation (its logprob is conditioned on the prompt
    before it). The generated token, at or past ``len(text)``, is left out.
    """
    try:
        logprobs = choice["logprobs"]
        offsets = [int(o) for o in logprobs["text_offset"]]
        values = list(logprobs["token_logprobs"])
        echoed = str(choice.get("text", "")).startswith(text)
    except BAD_VALUE as exc:
        raise ModelError("the server returned no prompt logprobs") from exc
    if not echoed or len(offsets) != len(values):
        raise ModelError("the server did not echo the prompt with its logprobs")
    first = next((i for i, o in enumerate(offsets) if o >= start), len(offsets))
    if first > 0 and (first == len(offsets) or offsets[first] > start):
        first -= 1
    last = next((i for i, o in enumerate(offsets) if o >= len(text)), len(offsets))
    span = values[first:last]
    if not span or first == 0 or any(isinstance(v, bool) or not isinstance(v, int | float) for v in span):
        raise ModelError("the server returned no logprobs for the scored option")
    try:
        total = float(sum(span))
    except ArithmeticError:
        raise ModelError("the server returned logprobs out of range for the scored option") from None
    if math.isnan(total) or total == math.inf:
        raise ModelError("the server returned logprobs out of range for the scored option")
    return total, len(span)


def choice_of(reply: Mapping[str, Any]) -> Mapping[str, Any]:
    choices = reply.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise TransientModelError("the server replied without choices")
    return choices[0]


def message_of(reply: Mapping[str, Any]) -> Mapping[str, Any]:
    message = choice_of(reply).get("message")
    return message if isinstance(message, dict) else {}


def error_message(body: bytes, redact: Callable[[str], str]) -> str:
    """The ``error.message`` of an error body, else its start: redacted, then one line cut to 300 chars."""
    try:
        data = parse_reply(body)
        message = data["error"]["message"] if isinstance(data.get("error"), dict) else data["error"]
        text = str(message)
    except (DataError, *BAD_VALUE, AttributeError):
        text = body.decode("utf-8", "replace")  # whole: a cut before redaction could split a key
    return clean_text(" ".join(redact(text).split())[:ERROR_CHARS]) or "(empty body)"


def token_count(value: Any) -> int:
    """A token count from a reply: a whole number of at least 0, else 0 (``1e400``, ``"x"``, ``-3``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return 0
    return int(value) if 0 <= value < 2**63 else 0


def usage_of(reply: Mapping[str, Any]) -> Usage:
    usage = reply.get("usage")
    if not isinstance(usage, dict):
        return Usage()
    return Usage(token_count(usage.get("prompt_tokens")), token_count(usage.get("completion_tokens")))
