"""Claude Code's cumulative ``cost-state`` line: the counts a call's own lines did not carry.

Measured on 2.1.332 against the test tier's local server (build b11434): when an answer is empty, Claude
Code writes no ``assistant`` line for it (or a ``<synthetic>`` one with no usage), so the call's
``api-request`` line is all the transcript has of it; yet the ``cost-state`` line written after the turn
holds the session's running totals per model (restored and continued by a resumed process), which equalled
the server's own numbers. The difference between two ``cost-state`` lines, less what the turn's
``assistant`` lines already gave, is the turn's unrecorded usage; it goes to the turn's last call that had
none (its earlier usage-less calls are marked ``shared_counts``: their tokens are in that call's). Where
every call carried its usage (the vendor's API), nothing is left and nothing is added, so a subagent's
usage, which the main file's totals include, is never counted twice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kvswitch.sessions.counts import count
from kvswitch.sessions.model import Counts

_KEYS = (
    ("fresh", "inputTokens"),
    ("cache_read", "cacheReadInputTokens"),
    ("cache_write_5m", "cacheCreationEphemeral5mInputTokens"),
    ("cache_write_1h", "cacheCreationEphemeral1hInputTokens"),
    ("output", "outputTokens"),
)
#: the calls of one turn a state keeps (a turn of more calls keeps its last ones)
MAX_WAITING = 500


def totals_of(usage: Mapping[str, Any], note: Callable[[str], None]) -> dict[str, list[int]]:
    """``modelUsage`` as {model: [fresh, read, write 5m, write 1h, output]} (a write without a lifetime
    split is taken as 5 minutes)."""
    found: dict[str, list[int]] = {}
    for model, entry in list(usage.items())[:100]:
        values = [count(entry, key, note) for _name, key in _KEYS]
        written = count(entry, "cacheCreationInputTokens", note)
        if values[2] + values[3] < written:
            values[2] = written - values[3]
        found[str(model)[:200]] = values
    return found


def waiting_call(state: dict[str, Any], call_id: str, model: str) -> None:
    """A call was made: it waits for its usage (an assistant line, or the turn's cost-state)."""
    waiting = state.setdefault("waiting", [])
    waiting.append([call_id, model, None])
    del waiting[:-MAX_WAITING]


def call_usage(state: dict[str, Any], call_id: str, values: Counts) -> None:
    """An assistant line gave the call's usage (a later line of the same answer replaces it)."""
    for entry in state.get("waiting", []):
        if entry[0] == call_id:
            entry[2] = [values.get(name, 0) for name, _key in _KEYS]


def unrecorded(
    state: dict[str, Any], totals: dict[str, list[int]]
) -> list[tuple[str | None, str, Counts, list[str]]]:
    """What the turn's calls used beyond their own lines: (call that gets it, or None when the transcript
    has no line for the call at all (2.1.332 writes none for /compact's summary request), the model, the
    counts, calls whose tokens it also holds). Resets the turn."""
    before: dict[str, list[int]] = state.get("totals", {})
    waiting: list[list[Any]] = state.get("waiting", [])
    given: list[tuple[str | None, str, Counts, list[str]]] = []
    taken: set[str] = set()
    for model, now in totals.items():
        old = before.get(model, [0] * len(_KEYS))
        delta = [n - o for n, o in zip(now, old, strict=True)]
        if any(value < 0 for value in delta):
            delta = now  # the totals started again (a process that did not restore them)
        for entry in waiting:
            if entry[2] is not None and entry[1] == model:
                delta = [d - v for d, v in zip(delta, entry[2], strict=True)]
        left = [max(0, value) for value in delta]
        empty = [entry for entry in waiting if entry[2] is None and entry[0] not in taken]
        chosen = [entry for entry in empty if entry[1] == model] or empty
        if not any(left):
            continue
        counts: Counts = {
            "fresh": left[0],
            "cache_read": left[1],
            "cache_write_5m": left[2],
            "cache_write_1h": left[3],
            "output": left[4],
        }
        if not chosen:
            given.append((None, model, counts, []))
            continue
        taken.update(entry[0] for entry in chosen)
        given.append((chosen[-1][0], model, counts, [entry[0] for entry in chosen[:-1]]))
    state["totals"] = totals
    state["waiting"] = []
    return given
