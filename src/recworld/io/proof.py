"""The one place that decides whether a path on disk is recworld's own to move or delete.

**Invariant.** recworld deletes or moves a path it did not just create in this
process only when :func:`proven` says so: the path is a direct child of the
folder it was made in, its name has exactly the form recworld generates for
that output (:func:`hidden`), and the name carries a seal over the output's
real path, a random nonce and the path's own inode, made with a per-user key
(:func:`key`) that a planted file cannot know. A name read from disk is never
enough: a user's ``.suite.old-v1/`` or ``drafts/.x.20240101.tmp``, a forged
journal, or a recworld folder copied elsewhere (other inode) fails the check
and is left alone.

The key is 32 random bytes in ``RECWORLD_HOME/keys/ownership.key`` (mode
0600), made on first use and read back by :func:`recworld.io.keyfile.load_or_make_key`
(whole or not at all; a damaged file is one error naming it); where that folder
cannot be written the key lives in memory only (what this process makes it can
still clean up; a later process then leaves it, as it leaves anything it cannot prove).

Every generated name fits in 255 bytes: :func:`short_name` cuts a long or
undecodable output name to a readable prefix plus a hash of the whole name.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import threading
from pathlib import Path

from recworld import paths
from recworld.io.keyfile import load_or_make_key

__all__ = [
    "NAME_MAX",
    "Hidden",
    "hidden",
    "identity",
    "key",
    "new_nonce",
    "proven",
    "proven_temporary",
    "real_target",
    "seal",
    "short_name",
    "temporary_name",
]

NAME_MAX = 255  # bytes in one file name on every file system recworld runs on
_SHORT_MAX = 180  # an output's own name in its hidden siblings' names, before the hash
_KEY_BYTES = 32
_KEYS: dict[str, bytes] = {}
_LOCK = threading.Lock()
_SEAL_HEX = 16
_NONCE_HEX = 8


def _key_file() -> Path:
    return Path(os.path.abspath(paths.home().expanduser())) / "keys" / "ownership.key"


def key() -> bytes:
    """This user's ownership key (made on first use; in memory where the home cannot be written)."""
    path = _key_file()
    with _LOCK:
        known = _KEYS.get(str(path))
        if known is None:
            known = load_or_make_key(path, _KEY_BYTES, memory_if_unwritable=True)
            _KEYS[str(path)] = known
    return known


def _text(part: object) -> bytes:
    if isinstance(part, Path):
        return os.fsencode(part)
    return str(part).encode("utf-8", "surrogatepass")


def seal(kind: str, *parts: object) -> str:
    """A hex MAC of ``kind`` and ``parts`` under :func:`key`."""
    message = b"\0".join([kind.encode(), *(_text(p) for p in parts)])
    return hmac.new(key(), message, hashlib.sha256).hexdigest()


def new_nonce() -> str:
    return secrets.token_hex(_NONCE_HEX // 2)


def identity(path: Path) -> tuple[int, int] | None:
    """``(st_dev, st_ino)`` of ``path`` itself (a link is not followed); None when it is absent."""
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return (info.st_dev, info.st_ino)


def short_name(name: str) -> str:
    """``name`` if it is short, valid UTF-8 text; else a readable prefix, ``~`` and a hash of it all."""
    raw = os.fsencode(name)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        if len(raw) <= _SHORT_MAX:
            return name
    prefix = raw[: _SHORT_MAX - 24].decode("utf-8", "ignore").replace("\0", "")
    return f"{prefix}~{hashlib.sha256(raw).hexdigest()[:16]}"


def real_target(target: Path) -> Path:
    """``target`` with its parent resolved: the same output however the user spelt its path."""
    return Path(os.path.realpath(target.parent)) / target.name


class Hidden:
    """The hidden siblings of one role (``staging`` or ``trash``) recworld makes for an output ``target``."""

    def __init__(self, target: Path, role: str) -> None:
        self.target = target
        self.role = role
        self.short = short_name(target.name)
        self.infix = "old-" if role == "trash" else ""
        self.suffix = ".partial" if role == "staging" else ""
        self.pattern = re.compile(
            rf"\.{re.escape(self.short)}\.{self.infix}(?P<nonce>[0-9a-f]{{{_NONCE_HEX}}})"
            rf"(?P<seal>[0-9a-f]{{{_SEAL_HEX}}}){re.escape(self.suffix)}"
        )

    def _seal(self, nonce: str, ident: tuple[int, int]) -> str:
        return seal(self.role, real_target(self.target), nonce, f"{ident[0]}:{ident[1]}")[:_SEAL_HEX]

    def name(self, nonce: str, ident: tuple[int, int]) -> str:
        """The name for ``nonce`` and the inode ``ident`` of the folder that will bear it."""
        return f".{self.short}.{self.infix}{nonce}{self._seal(nonce, ident)}{self.suffix}"

    def matches(self, name: str) -> bool:
        """Whether ``name`` has this form at all (never a proof: see :meth:`proves`)."""
        return self.pattern.fullmatch(name) is not None

    def proves(self, path: Path) -> bool:
        """Whether ``path`` is a direct child of the output's folder, of this form, sealed for its inode."""
        found = self.pattern.fullmatch(path.name)
        if found is None or path.parent != self.target.parent:
            return False
        ident = identity(path)
        return ident is not None and hmac.compare_digest(found["seal"], self._seal(found["nonce"], ident))


def hidden(target: Path, role: str) -> Hidden:
    """The generated names of ``role`` (``staging`` or ``trash``) for ``target``."""
    if role not in {"staging", "trash"}:
        raise ValueError(role)
    return Hidden(target, role)


_TEMPORARY = re.compile(
    rf"\.(?P<short>.+)\.(?P<nonce>[0-9a-f]{{{_NONCE_HEX}}})(?P<seal>[0-9a-f]{{{_SEAL_HEX}}})\.tmp"
)


def temporary_name(folder: Path, name: str) -> str:
    """A fresh name for the temporary file of an atomic write of ``folder/name``."""
    short, nonce = short_name(name), new_nonce()
    return f".{short}.{nonce}{_temporary_seal(folder, short, nonce)}.tmp"


def _temporary_seal(folder: Path, short: str, nonce: str) -> str:
    return seal("tmp", Path(os.path.realpath(folder)), short, nonce)[:_SEAL_HEX]


def proven_temporary(path: Path, of: str = "") -> bool:
    """Whether ``path`` is a temporary file this user's recworld made (of the file ``of``, if given)."""
    found = _TEMPORARY.fullmatch(path.name)
    if found is None or (of and found["short"] != short_name(of)):
        return False
    expected = _temporary_seal(path.parent, found["short"], found["nonce"])
    return hmac.compare_digest(found["seal"], expected)


def proven(path: Path, target: Path, role: str) -> bool:
    """Whether ``path`` is ``target``'s own ``role`` sibling (:meth:`Hidden.proves`), checked first."""
    return hidden(target, role).proves(path)
