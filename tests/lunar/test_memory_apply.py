"""The memory's apply step against a small reference model of the memory state (review U9).

The reference keeps a list of live texts per slot and follows the rules as stated in
recworld.lunar.contexts.memory_apply's docstring, written again here without its code:
after a DELETE the contradicting fact is stored; a second UPDATE of one memory in a batch
keeps both texts; a decision on a memory deleted earlier in the batch is stored as new.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from recworld.lunar.contexts.memory_apply import Decision, MemoryItem, apply_batch

WORDS = st.sampled_from(["tea", "coffee", "gym", "vegan", "Tea", "runs daily", "cancelled gym"])


@st.composite
def _batches(draw: st.DrawFn) -> list[list[tuple[str, str, int, str]]]:
    """Batches of (fact, event, target index among the memories shown, text)."""
    out = []
    for _ in range(draw(st.integers(1, 4))):
        steps = draw(
            st.lists(
                st.tuples(
                    WORDS, st.sampled_from(["ADD", "UPDATE", "DELETE", "NONE"]), st.integers(0, 5), WORDS
                ),
                min_size=1,
                max_size=6,
            )
        )
        out.append(steps)
    return out


def _reference(batches: list[list[tuple[str, str, int, str]]]) -> tuple[list[str], dict[str, int]]:
    live: list[tuple[int, str]] = []  # (slot, text); slots numbered in order of creation
    counts = {"ADD": 0, "UPDATE": 0, "DELETE": 0, "NONE": 0}
    slot = 0
    for steps in batches:
        shown = [s for s, _ in live]  # every live memory is shown, m1.. in order
        touched: set[int] = set()

        def store(text: str) -> None:
            nonlocal slot
            live.append((slot, text))
            slot += 1
            counts["ADD"] += 1

        for fact, event, target, text in steps:
            if event in ("UPDATE", "DELETE") and target >= len(shown):
                event = "ADD" if event == "UPDATE" else "NONE"  # not a shown id: the test sends "new"
            if event == "ADD":
                store(text)
            elif event == "NONE":
                counts["NONE"] += 1
            else:
                wanted = shown[target]
                at = [i for i, (s, _) in enumerate(live) if s == wanted]
                if not at:
                    store(text if event == "UPDATE" else fact)
                elif event == "DELETE":
                    del live[at[0]]
                    counts["DELETE"] += 1
                    store(fact)
                else:
                    old = live[at[0]][1]
                    if wanted in touched and text.lower() not in old.lower():
                        new = text if old.lower() in text.lower() else f"{old}; {text}"
                    else:
                        new = old if wanted in touched else text
                    live[at[0]] = (wanted, new)
                    touched.add(wanted)
                    counts["UPDATE"] += 1
    return sorted(t for _, t in live), counts


@settings(max_examples=200, deadline=None)
@given(batches=_batches())
def test_applied_batches_match_the_reference_state(batches: list[list[tuple[str, str, int, str]]]) -> None:
    memories: dict[str, MemoryItem] = {}
    counts = {"ADD": 0, "UPDATE": 0, "DELETE": 0, "NONE": 0}
    for b, steps in enumerate(batches):
        shown = {f"m{i}": item for i, item in enumerate(memories.values(), 1)}
        decisions = []
        for fact, event, target, text in steps:
            sid = f"m{target + 1}"
            if event in ("UPDATE", "DELETE") and sid not in shown:
                event, sid = ("ADD", "new") if event == "UPDATE" else ("NONE", "new")
            decisions.append(
                (fact, Decision(event=event, memory_id=sid if event != "ADD" else "new", text=text))
            )
        done = apply_batch(memories, "u", b, decisions, shown, [f"r{b}"])
        # What the store is told agrees with the state handed on.
        assert set(done.changed) <= set(done.memories)
        assert not {m.memory_id for m in done.deleted} & set(done.memories)
        memories = done.memories
        for e in done.events:
            counts[e.event] += 1
    texts, want = _reference(batches)
    assert sorted(m.text for m in memories.values()) == texts
    assert counts == want


def test_two_updates_of_one_memory_in_a_batch_keep_both() -> None:
    old = MemoryItem(memory_id="a" * 32, user_id="u", text="drinks tea", created_batch=0, updated_batch=0,
                     record_ids=["r0"])  # fmt: skip
    steps = [
        ("tea with milk", Decision(event="UPDATE", memory_id="m1", text="drinks tea with milk")),
        ("green tea too", Decision(event="UPDATE", memory_id="m1", text="drinks green tea")),
    ]
    done = apply_batch({old.memory_id: old}, "u", 1, steps, {"m1": old}, ["r1"])
    assert [m.text for m in done.memories.values()] == ["drinks tea with milk; drinks green tea"]


def test_a_delete_keeps_the_contradicting_fact() -> None:
    old = MemoryItem(memory_id="a" * 32, user_id="u", text="active gym membership", created_batch=0,
                     updated_batch=0, record_ids=["r0"])  # fmt: skip
    steps = [("cancelled the gym membership", Decision(event="DELETE", memory_id="m1"))]
    done = apply_batch({old.memory_id: old}, "u", 1, steps, {"m1": old}, ["r1"])
    assert [m.text for m in done.memories.values()] == ["cancelled the gym membership"]
    assert [e.event for e in done.events] == ["DELETE", "ADD"] and done.deleted == [old]
