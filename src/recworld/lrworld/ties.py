"""Next events: no answer of a leave-one-out window is decided by the order ties were sorted in.

Invariant: a sliding-window question's "next" is the whole set of items the
user has at the first timestamp after the shown history (its *next event*),
and its history is a run of whole timestamps, so that no item of the log is
shown, hidden, right or wrong because of where a same-time tie happened to
sort.

* **The next event is a set.** At a flat position ``p`` that starts a new
  timestamp for its user, every item of that user with ``times[p]`` is the
  next event (:func:`event_end`). Windows inside an event (``p`` sharing its
  timestamp with ``p - 1``) are the same event, asked once from its start, and
  counted as ``tied_windows``. On second-granular logs (MovieLens) most events
  are one item; on day-granular ones (Netflix, Amazon 2018) they are a day's
  items. Builders treat any member as right (attribute measures: any value of
  any member; next-item measures: the option is one member, drawn with the
  seed) and none as wrong (their values, or they, are never negatives). A
  question asked about an event of two or more items is counted as merged
  (``filters[m].merged["next_event_set"]``).
* **The history ends and starts at a time boundary.** The shown items are the
  up to ``history_length`` items before the event; when the earliest of them
  shares its timestamp with the item before it (the cut fell inside a tie),
  the history starts at the next boundary instead, so it is shorter
  (:func:`history_start`, counted as ``merged["history_cut_at_tie"]``). A
  window left with no history is not asked (``dropped["history_all_tied"]``).

These are plain functions of a user's time-ordered items and timestamps, so a
label can be re-derived from the dataset alone (the oracle's route).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["event_end", "event_starts", "history_start", "next_event_items"]


def event_starts(ptr: np.ndarray, times: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """True where flat position ``p`` starts a timestamp of its user (it is a next event's first item)."""
    positions = np.asarray(positions, dtype=np.int64)
    users = np.searchsorted(ptr, positions, side="right") - 1
    first = positions == ptr[users]
    previous = np.maximum(positions - 1, 0)
    return np.asarray(first | (times[positions] != times[previous]), dtype=bool)


def event_end(user_end: int, times: np.ndarray, p: int) -> int:
    """One past the last flat position of the next event starting at ``p`` (within the user's span)."""
    end = p + 1
    while end < user_end and times[end] == times[p]:
        end += 1
    return end


def history_start(user_start: int, times: np.ndarray, p: int, length: int) -> int:
    """Where the shown history before position ``p`` starts: ``length`` items back, at a time boundary.

    When the item at the cut shares its timestamp with the one before it, the
    cut moves forward to the next change of timestamp (never past ``p``).
    """
    start = max(user_start, p - length)
    while user_start < start < p and times[start] == times[start - 1]:
        start += 1
    return start


def next_event_items(items: Sequence[str], times: Sequence[int], offset: int) -> list[str]:
    """The next event at ``offset`` of one user's time-ordered ``items``: every item with that timestamp.

    The dataset-side form of :func:`event_end` (ids and timestamps of one user,
    no index space), for code that re-derives a label from the log.
    """
    t = times[offset]
    return [item for item, when in zip(items, times, strict=True) if when == t]
