"""The apply step of the memory loop: one batch's decisions turn a user's memories into new ones.

Invariant: after a batch, the memories hold the current state of every decided fact; no
decision silently drops what it was given. In order, per decision on new fact ``f``:

* ``ADD``: a new memory reading the decision's text (``f`` when empty);
* ``UPDATE m``: ``m`` reads the decision's text. A second UPDATE of ``m`` in the same batch
  merges instead (the model saw ``m`` before either update, so each text carries one
  fact): ``m`` reads the earlier text and the new one joined by ``"; "`` (one alone when
  it already contains the other, case-folded);
* ``DELETE m``: ``m`` is removed, and ``f``, which contradicts it, is stored as a new
  memory (logged as its own ``ADD``): the memory keeps the user's current state, not
  neither (Mem0 deletes only; review U9);
* ``UPDATE`` or ``DELETE`` of a memory an earlier decision of the batch deleted: the
  decision's text (UPDATE) or ``f`` (DELETE) is stored as a new memory (logged ``ADD``,
  counted in ``redirected``);
* ``NONE``: nothing changes.

:func:`apply_batch` is pure (no store, no embedder); the loop writes its ``changed`` and
``deleted`` to Qdrant.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field

from recworld.records import Draft, Record

Event = Literal["ADD", "UPDATE", "DELETE", "NONE"]
EVENTS: tuple[Event, ...] = ("ADD", "UPDATE", "DELETE", "NONE")
NEW = "new"  # the memory id of an ADD
JOIN = "; "  # between the texts of two UPDATEs of one memory in one batch


class Decision(Draft):
    event: Event
    memory_id: str  # a shown memory (m1, m2, ...) for UPDATE and DELETE; "new" for ADD
    text: str = ""  # ADD and UPDATE: the memory as it should read afterwards


class MemoryItem(Record):
    """One memory of a user: a line of ``memories.jsonl`` and the payload of one Qdrant point."""

    schema_id: Literal["recworld.lunar.memory/1"] = Field(default="recworld.lunar.memory/1", alias="schema")
    memory_id: str
    user_id: str
    text: str
    created_batch: int
    updated_batch: int
    record_ids: list[str]  # the records of every batch that added to it


class MemoryEvent(Record):
    """One decision of the memory model, as applied: a line of ``events.jsonl``."""

    schema_id: Literal["recworld.lunar.memory_event/1"] = Field(
        default="recworld.lunar.memory_event/1", alias="schema"
    )
    user_id: str
    batch: int
    fact: str
    event: Event
    memory_id: str | None  # the memory added, updated or deleted (None for NONE)
    text: str | None  # the memory's text afterwards (None for DELETE and NONE)
    previous: str | None  # its text before (UPDATE, DELETE)


def memory_id(user_id: str, batch: int, fact: int) -> str:
    return hashlib.sha256(f"{user_id}\0{batch}\0{fact}".encode()).hexdigest()[:32]


def merged(earlier: str, later: str) -> str:
    """Two update texts of one memory as one (one alone when it contains the other, case-folded)."""
    a, b = earlier.casefold(), later.casefold()
    if b in a:
        return earlier
    if a in b:
        return later
    return earlier + JOIN + later


@dataclass
class BatchOutcome:
    """What one batch did: the memories after it, and what the store must write and remove."""

    memories: dict[str, MemoryItem]
    events: list[MemoryEvent] = field(default_factory=list)
    changed: dict[str, MemoryItem] = field(default_factory=dict)  # added or updated, final text
    deleted: list[MemoryItem] = field(default_factory=list)
    redirected: int = 0  # decisions on a memory deleted earlier in the batch, stored as new


def apply_batch(
    memories: Mapping[str, MemoryItem],
    user_id: str,
    batch: int,
    steps: Sequence[tuple[str, Decision]],
    shown: Mapping[str, MemoryItem],
    record_ids: Sequence[str],
) -> BatchOutcome:
    """Apply ``(fact, decision)`` steps in order (the rules in the module docstring)."""
    out = BatchOutcome(dict(memories))
    updated: set[str] = set()

    def log(fact: str, event: Event, mid: str | None, text: str | None, previous: str | None) -> None:
        out.events.append(MemoryEvent(user_id=user_id, batch=batch, fact=fact, event=event,
                                      memory_id=mid, text=text, previous=previous))  # fmt: skip

    def add(n: int, fact: str, text: str) -> None:
        item = MemoryItem(memory_id=memory_id(user_id, batch, n), user_id=user_id, text=text,
                          created_batch=batch, updated_batch=batch, record_ids=list(record_ids))  # fmt: skip
        out.memories[item.memory_id] = out.changed[item.memory_id] = item
        log(fact, "ADD", item.memory_id, text, None)

    for n, (fact, decision) in enumerate(steps):
        target = shown.get(decision.memory_id)
        live = out.memories.get(target.memory_id) if target is not None else None
        text = decision.text.strip()
        if decision.event == "ADD":
            add(n, fact, text or fact)
        elif decision.event in ("UPDATE", "DELETE") and live is None:
            out.redirected += 1
            add(n, fact, (text or fact) if decision.event == "UPDATE" else fact)
        elif decision.event == "UPDATE" and live is not None:
            new = merged(live.text, text) if live.memory_id in updated else text
            ids = list(dict.fromkeys([*live.record_ids, *record_ids]))
            item = live.model_copy(update={"text": new, "updated_batch": batch, "record_ids": ids})
            out.memories[item.memory_id] = out.changed[item.memory_id] = item
            updated.add(item.memory_id)
            log(fact, "UPDATE", item.memory_id, new, live.text)
        elif decision.event == "DELETE" and live is not None:
            del out.memories[live.memory_id]
            out.changed.pop(live.memory_id, None)
            out.deleted.append(live)
            log(fact, "DELETE", live.memory_id, None, live.text)
            add(n, fact, fact)
        else:
            log(fact, "NONE", None, None, None)
    return out
