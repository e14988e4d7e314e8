"""Where a session lost its cache, turn by turn, and the cause its files prove.

Each call is compared with the previous call of its lane (the same agent and kind of request; a
subagent's first call with the main thread's call before it). A call that re-read less than half of
what the previous call had sent (and at least ``MIN_LOST_TOKENS`` less) lost the cache. The causes are
those the files show, most direct first: the conversation was compacted, the model switched, the system
prompt or tools changed (Claude's ``shapeHash``: which blocks and tools, from the two shapes), an earlier
message changed (Claude's message hashes), the session was resumed in a new process, the client's version
changed, the call came after the cache's lifetime (5 minutes, or 1 hour when the previous writes were
1-hour writes), or it is a subagent's first call. None of these: "unknown".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from kvswitch.sessions.model import Call, Loss, Turn
from kvswitch.sessions.prices import Prices

#: a call that re-reads under this share of the previous call's prompt lost the cache
LOSS_SHARE = 0.5
#: ... and only when that is at least this many tokens (a few tokens short is not a loss worth naming)
MIN_LOST_TOKENS = 1024
LIFETIME_5M, LIFETIME_1H = 300.0, 3600.0


def session_turns(
    calls: Sequence[Call], prices: Prices, shapes: Mapping[str, Mapping[str, Any]]
) -> list[Turn]:
    """The turn table: every call in time order with its cost and, where it lost the cache, the loss."""
    last: dict[tuple[str, str], Call] = {}
    one_hour: set[tuple[str, str]] = set()
    main: Call | None = None
    turns: list[Turn] = []
    #: per lane, the usage-less calls whose counts a later call holds: their events and first changed message
    carried: dict[tuple[str, str], tuple[tuple[str, ...], int | None]] = {}
    #: per lane, how many calls a turn's counts cover, and the fewest new tokens a turn so far needed
    covered: dict[tuple[str, str], int] = {}
    warmest: dict[tuple[str, str], int] = {}
    for index, found in enumerate(sorted(calls, key=lambda c: (c.time, c.call_id))):
        key = (found.agent, found.lane)
        call = found
        if found.prompt and key in carried:  # what happened before the usage-less calls it counts for
            events, changed = carried.pop(key)
            call = replace(
                found,
                events=tuple(dict.fromkeys((*events, *found.events))),
                changed_message=changed if changed is not None else found.changed_message,
            )
        previous = last.get(key)
        first_of_subagent = previous is None and bool(call.agent)
        if first_of_subagent:
            previous = main
        loss = None
        if previous is not None:
            loss = _loss(
                previous,
                call,
                prices,
                shapes,
                key in one_hour,
                first_of_subagent,
                warmest.get(key, previous.fresh + previous.cache_write),
                covered.pop(key, 0) + 1,
            )
        turns.append(Turn(index, found, prices.cost(found) or 0.0, loss))
        if not call.prompt:  # its counts are in a later call's (``shared_counts``): nothing to compare with
            events, changed = carried.get(key, ((), None))
            carried[key] = ((*events, *call.events), changed if changed is not None else call.changed_message)
            covered[key] = covered.get(key, 0) + 1
            continue
        covered.pop(key, None)
        new = call.fresh + call.cache_write
        warmest[key] = min(warmest.get(key, new), new)
        last[key] = call
        if call.cache_write_1h:
            one_hour.add(key)
        if not call.agent:
            main = call
    return turns


def _loss(
    previous: Call,
    call: Call,
    prices: Prices,
    shapes: Mapping[str, Mapping[str, Any]],
    hour_writes: bool,
    first_of_subagent: bool,
    warm: int = 0,
    requests: int = 1,
) -> Loss | None:
    if "turn_counts" in call.events:
        # the counts are a whole turn's (the client's totals; its requests, some without a line of their
        # own): a turn that processed more than half of a request's prompt new lost what the session's
        # warmest turn so far processed less
        new, requests = call.fresh + call.cache_write, max(1, requests)
        lost, reusable = new - min(new, warm), call.prompt // requests
        if lost < MIN_LOST_TOKENS or new <= LOSS_SHARE * reusable:
            return None
    else:
        reusable = min(previous.prompt, call.prompt)
        lost = reusable - call.cache_read
        if lost < MIN_LOST_TOKENS or call.cache_read >= LOSS_SHARE * reusable:
            return None
    causes: list[str] = []
    words: list[str] = []
    if "compacted" in call.events:
        causes.append("compacted")
        words.append("the conversation was compacted")
    if previous.model and call.model and previous.model != call.model:
        causes.append("model_switched")
        words.append(f"the model switched from {previous.model} to {call.model}")
    if previous.shape and call.shape and previous.shape != call.shape:
        causes.append("system_changed")
        words.append(shape_change(shapes.get(previous.shape), shapes.get(call.shape)))
    if call.changed_message is not None:
        causes.append("messages_changed")
        words.append(f"earlier message {call.changed_message + 1} was sent differently")
    if "new_process" in call.events:
        causes.append("new_process")
        words.append("the session was resumed in a new process")
    if previous.version and call.version and previous.version != call.version:
        causes.append("version_changed")
        words.append(f"the client changed from {previous.version} to {call.version}")
    lifetime = LIFETIME_1H if hour_writes else LIFETIME_5M
    idle = call.time - previous.time
    if previous.time and call.time and idle > lifetime:
        causes.append("idle")
        words.append(f"idle {_span(idle)}, past the cache's {_span(lifetime)} lifetime")
    if first_of_subagent:
        causes.append("subagent")
        words.append(f"a subagent's first call ({call.agent})")
    if not causes:
        causes.append("unknown")
        words.append("the files show no cause")
    as_new = prices.cost_of(call.model, lost, 0, 0, 0, 0, call.time) or 0.0
    as_read = prices.cost_of(call.model, 0, lost, 0, 0, 0, call.time) or 0.0
    detail = f"{lost:,} of {reusable:,} tokens processed again: " + "; ".join(words)
    return Loss(tuple(causes), detail, lost, max(0.0, as_new - as_read))


def shape_change(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> str:
    """Which system blocks and tools differ between two request shapes, in words."""
    if not before or not after:
        return "the system prompt or tools changed (shape not recorded)"
    parts: list[str] = []
    old_system = {entry[0]: entry[1] for entry in before.get("system", [])}
    new_system = {entry[0]: (entry[1], entry[2]) for entry in after.get("system", [])}
    changed = [
        f"#{index + 1}" + (f" ({label!r})" if label else "")
        for index, (digest, label) in sorted(new_system.items())
        if old_system.get(index) != digest
    ]
    changed += [f"#{index + 1} (removed)" for index in sorted(set(old_system) - set(new_system))]
    if changed:
        parts.append(
            "system block " + ", ".join(changed[:5]) + (" …" if len(changed) > 5 else "") + " changed"
        )
    old_tools, new_tools = dict(before.get("tools", {})), dict(after.get("tools", {}))
    added = sorted(set(new_tools) - set(old_tools))
    removed = sorted(set(old_tools) - set(new_tools))
    altered = sorted(name for name in set(new_tools) & set(old_tools) if new_tools[name] != old_tools[name])
    for label, names in (("added", added), ("removed", removed), ("changed", altered)):
        if names:
            parts.append(f"tools {label}: " + ", ".join(names[:8]) + (" …" if len(names) > 8 else ""))
    return "; ".join(parts) or "the system prompt or tools changed"


def _span(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"
