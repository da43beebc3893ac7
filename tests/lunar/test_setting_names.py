"""The parts of LUNAR that serve every context setting name none of them (issue 26, item 4).

``lunar/api.py``, its configs (``lunar/config.py``), the LUNAR command line (``lunar/cli/*``),
the settings' interface (``contexts/base.py``), the eval loop (``answering/run.py``) and the
dry run (``llm/plan.py``, ``answering/plan.py``) read the registry; a
setting's name, class, role, or flag written in one of them means a new setting would
have to edit it too. This check reads the source as tokens on its own (it shares no
code with what it checks) and looks, for each registered setting, for

* an identifier with the setting's name or one of its role names as a word
  (``MEMORY``, ``memory_embedder``, ``MemoryContext``);
* a string or comment holding one of its flags (``--memory-model``, ``--rag-k``), the
  name quoted (``"memory"``, ````full````), or the name as a setting in prose
  ("the full context", "memory's distillation").
"""

from __future__ import annotations

import io
import keyword
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

import recworld.lunar
from recworld.lunar.contexts import registered

LUNAR = Path(recworld.lunar.__file__).parent
CHECKED = sorted(
    [
        LUNAR / "api.py",
        LUNAR / "config.py",
        LUNAR / "contexts" / "base.py",
        LUNAR / "llm" / "plan.py",
        LUNAR / "answering" / "plan.py",
        LUNAR / "answering" / "run.py",
        *(LUNAR / "cli").glob("*.py"),
    ]
)


def _words(identifier: str) -> list[str]:
    """``memory_embedder`` -> memory, embedder; ``MemoryContext`` -> memory, context."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", identifier)
    return [w.lower() for w in spaced.split("_") if w]


def _flags(setting: type) -> set[str]:
    """The flags a setting declares: its options' (Flag metadata) and its roles'."""
    found = {spec.flag for spec in getattr(setting, "roles", {}).values()}
    for info in setting.options_type.model_fields.values():  # type: ignore[attr-defined]
        for mark in info.metadata:
            name = getattr(mark, "name", None)
            if isinstance(name, str) and name.startswith("--"):
                found.add(name.split("/")[0])
    return found


def _marks(setting: type) -> tuple[set[str], list[re.Pattern[str]]]:
    """A setting's words (for identifiers) and patterns (for strings and comments)."""
    name: str = setting.name  # type: ignore[attr-defined]
    roles = list(getattr(setting, "roles", {}))
    words = {name, *roles}
    quoted = "|".join(re.escape(w) for w in sorted(words))
    patterns = [re.compile(rf"(?<![\w-]){re.escape(flag)}(?![\w-])") for flag in sorted(_flags(setting))]
    patterns += [
        re.compile(rf"^({quoted})$"),  # the name as a whole string literal
        re.compile(rf"``({quoted})``"),
        re.compile(rf"\b({re.escape(name)})(?:'s)?\s+(context|setting)s?\b", re.IGNORECASE),
        re.compile(rf"\b({re.escape(name)})'s\b", re.IGNORECASE),
    ]
    return words, patterns


def _string_text(token: tokenize.TokenInfo) -> str:
    text = token.string
    if token.type == tokenize.STRING:
        body = re.sub(r"^[rbuRBUfF]*", "", text)
        quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
        return body[len(quote) : len(body) - len(quote)]
    return text.lstrip("#").strip()


def namings(source: str, settings: list[type]) -> Iterator[str]:
    """``line: what`` for every place ``source`` names one of ``settings``."""
    marks = [(s.name, *_marks(s)) for s in settings]  # type: ignore[attr-defined]
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        line = token.start[0]
        if token.type == tokenize.NAME and not keyword.iskeyword(token.string):  # None is no 'none'
            words = _words(token.string)
            for name, own, _ in marks:
                hit = next((w for w in own if w in words or token.string.lower() == w), None)
                if hit is not None:
                    yield f"{line}: identifier {token.string} names {name!r}"
        elif token.type in (tokenize.STRING, tokenize.COMMENT):
            text = _string_text(token)
            for name, _, patterns in marks:
                for pattern in patterns:
                    found = pattern.search(text)
                    if found:
                        yield f"{line}: {found.group(0)!r} names {name!r}"
                        break


def test_the_check_finds_a_setting_named_in_each_way() -> None:
    memory = next(s for s in registered() if s.name == "memory")
    planted = '''
MEMORY = {"model": Flag("--memory-model")}  # the memory setting's own
def f(memory_embedder): return "memory"
"""Such as memory's distillation, or the ``rag`` one."""
x = MemoryContext
'''
    found = list(namings(planted, [memory]))
    assert any("identifier MEMORY" in f for f in found)
    assert any("'--memory-model'" in f for f in found)
    assert any("identifier memory_embedder" in f for f in found)
    assert any(f.startswith("3: 'memory' names") for f in found)
    assert any("memory's" in f for f in found)
    assert any("identifier MemoryContext" in f for f in found)
    assert any("'memory setting'" in f for f in found)
    clean = 'def model(role: str) -> None:\n    """The model of a declared role (none when not given)."""\n'
    assert list(namings(clean, registered())) == []


@pytest.mark.parametrize("path", CHECKED, ids=lambda p: str(p.relative_to(LUNAR)))
def test_the_shared_parts_of_lunar_name_no_setting(path: Path) -> None:
    assert len(registered()) >= 5
    found = list(namings(path.read_text(encoding="utf-8"), registered()))
    assert found == [], f"{path.relative_to(LUNAR)} names a context setting:\n" + "\n".join(found)
