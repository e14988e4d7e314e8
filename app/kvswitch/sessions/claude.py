"""Claude Code's transcripts: ``<config>/projects/<enc-cwd>/<session>.jsonl`` and its subagents' files.

Measured on 2.1.332: each API call writes one ``api-request`` line (``id``, ``querySource``, ``shapeHash``,
``params.model``, and the messages as hashes: ``tail`` after the first ``keep`` of request ``base``'s),
one ``api-request-shape`` line per distinct system-and-tools shape, ``assistant`` lines naming the
request (``requestRef``) with ``message.usage``, and a cumulative ``cost-state`` line per turn. Older
versions wrote only ``assistant`` lines, one per content block, sharing ``message.id`` + ``requestId``:
those are one call, counted from the last line written. Subagent files
(``<session>/subagents/agent-<id>.jsonl``) and sidechain lines are rolled into their session, marked.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from kvswitch.core.redact import mask_text
from kvswitch.sessions import claude_totals
from kvswitch.sessions.counts import count, epoch, mapping, short_text, text_of
from kvswitch.sessions.model import Call, Counts

CLIENT = "claude"
_SHAPE_HASH = re.compile(rb'"shapeHash":"([0-9a-fA-F]{1,128})"')
#: request ids whose message hashes a file's state keeps, for the next request's ``base``
_KEPT_REQUESTS = 6


class Sink(Protocol):
    """Where a reader puts what it found (the index store, or a list in a test)."""

    def call(self, call: Call) -> None: ...
    def usage(self, client: str, session_id: str, call_id: str, values: Counts, model: str) -> None: ...
    def add_usage(
        self, client: str, session_id: str, call_id: str, values: Counts, shared: list[str]
    ) -> None: ...
    def session(self, client: str, session_id: str, **fields: Any) -> None: ...
    def shape(self, shape_hash: str, digest: Mapping[str, Any]) -> None: ...


def usage_values(usage: Any, note: Callable[[str], None]) -> Counts:
    """A Messages API ``usage`` as this package's counts (``input_tokens`` excludes cache reads and
    writes; the write is split by lifetime when the client says so, else taken as 5 minutes)."""
    written = count(usage, "cache_creation_input_tokens", note)
    split = usage.get("cache_creation") if isinstance(usage, Mapping) else None
    one_hour = count(split, "ephemeral_1h_input_tokens", note)
    five = count(split, "ephemeral_5m_input_tokens", note) if isinstance(split, Mapping) else written
    if five + one_hour < written:
        five = written - one_hour
    return {
        "fresh": count(usage, "input_tokens", note),
        "cache_read": count(usage, "cache_read_input_tokens", note),
        "cache_write_5m": five,
        "cache_write_1h": one_hour,
        "output": count(usage, "output_tokens", note),
    }


def shape_digest(shape: Any) -> dict[str, Any]:
    """A shape's system blocks and tools as short hashes (the full text is in the client's file)."""

    def digest(value: Any) -> str:
        return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]

    shape = shape if isinstance(shape, Mapping) else {}
    system = shape.get("system") if isinstance(shape.get("system"), list) else []
    tools = shape.get("tools") if isinstance(shape.get("tools"), list) else []
    return {
        "system": [
            [index, digest(block), short_text(block.get("text") if isinstance(block, Mapping) else None, 60)]
            for index, block in enumerate(system[:200])
        ],
        "tools": {
            short_text(tool.get("name"), 100) or f"#{index}": digest(tool)
            for index, tool in enumerate(tools[:1000])
            if isinstance(tool, Mapping)
        },
    }


def _first_change(before: list[str] | None, now: list[str]) -> int | None:
    """The first of ``before``'s messages that ``now`` does not repeat in place; None when ``now`` starts
    with all of them (or there is nothing to compare: no earlier call, or this call's list is unknown)."""
    if not before or not now:
        return None
    for index, digest in enumerate(before):
        if index >= len(now) or now[index] != digest:
            return index
    return None


class ClaudeReader:
    """Reads one Claude transcript's lines in order; ``state`` survives between passes (JSON)."""

    def __init__(self, sink: Sink, session_id: str, agent: str, state: dict[str, Any] | None = None) -> None:
        self.sink = sink
        self.session_id = session_id
        self.agent = agent
        self.state: dict[str, Any] = (
            state
            if state is not None
            else {"requests": {}, "lanes": [], "last": {}, "pending": [], "titled": False}
        )

    def skips(self, raw: bytes) -> bool:
        """Lines no count or cause is read from, told from their bytes without parsing them: attachments
        and request blobs (two thirds of a 2.1.332 transcript's bytes), and a shape already indexed.
        Claude Code writes compact JSON, and a top-level key is never escaped."""
        head = raw[:300]
        if head.startswith(b'{"type":"api-request-blob"'):
            return True
        if head.startswith(b'{"type":"api-request-shape"'):
            found = _SHAPE_HASH.search(head)
            return found is not None and found.group(1).decode() in self.state.setdefault("shapes", [])
        return b'"attachment":{' in head[:120] and b'"type":"attachment"' in raw

    def feed(self, line: dict[str, Any], note: Callable[[str], None]) -> None:
        kind = line.get("type")
        when = epoch(line.get("timestamp"))
        if when is not None:
            self.state["last_time"] = when
            self.sink.session(CLIENT, self.session_id, time=when)
        if kind == "api-request":
            self._request(line, when, note)
        elif kind == "assistant":
            self._assistant(line, when, note)
        elif kind == "user":
            self._user(line)
        elif kind == "api-request-shape" and isinstance(line.get("shapeHash"), str):
            self.sink.shape(line["shapeHash"][:128], shape_digest(line.get("shape")))
            shapes = self.state.setdefault("shapes", [])
            shapes.append(line["shapeHash"][:128])
            del shapes[:-50]
        elif kind == "system" and line.get("subtype") == "compact_boundary":
            self.state["pending"] = sorted(set(self.state["pending"]) | {"compacted"})
        elif kind == "cost-state" and not self.agent:
            self._cost_state(line, note)

    def _request(self, line: Mapping[str, Any], when: float | None, note: Callable[[str], None]) -> None:
        call_id = short_text(line.get("id"), 128)
        if not call_id:
            return
        params = mapping(line.get("params"))
        lane = short_text(line.get("querySource"), 60)
        tail = (
            [h for h in line.get("tail", []) if isinstance(h, str)]
            if isinstance(line.get("tail"), list)
            else []
        )
        base, keep = line.get("base"), line.get("keep")
        requests: dict[str, list[str]] = self.state["requests"]
        events = list(self.state["pending"])
        if isinstance(base, str) and base in requests and isinstance(keep, int) and keep >= 0:
            messages = requests[base][:keep] + tail
        elif isinstance(base, str):
            messages = []  # its base was never seen: the earlier messages are unknown, not changed
        else:
            messages = tail
            if lane in self.state["lanes"]:
                events.append("new_process")
        changed = _first_change(requests.get(self.state["last"].get(lane, "")), messages)
        self.state["last"][lane] = call_id
        requests[call_id] = messages[:4000]
        while len(requests) > _KEPT_REQUESTS:
            requests.pop(next(iter(requests)))
        if lane not in self.state["lanes"]:
            self.state["lanes"].append(lane)
        self.state["pending"] = []
        self.sink.call(
            Call(
                CLIENT,
                self.session_id,
                call_id,
                when or 0.0,
                model=short_text(params.get("model"), 200),
                version=short_text(line.get("version"), 40),
                agent=self.agent,
                lane=lane,
                shape=short_text(line.get("shapeHash"), 128),
                message_count=len(messages),
                changed_message=changed,
                events=tuple(events),
            )
        )
        claude_totals.waiting_call(self.state, call_id, short_text(params.get("model"), 200))
        self.sink.session(CLIENT, self.session_id, version=short_text(line.get("version"), 40))

    def _assistant(self, line: Mapping[str, Any], when: float | None, note: Callable[[str], None]) -> None:
        message = mapping(line.get("message"))
        model = short_text(message.get("model"), 200)
        if model == "<synthetic>" or not isinstance(message.get("usage"), Mapping):
            return
        values = usage_values(message["usage"], note)
        ref = short_text(line.get("requestRef"), 128)
        if ref:  # 2.1.3xx: the request's own line made the call; the last assistant line's usage is final
            self.sink.usage(CLIENT, self.session_id, ref, values, model)
            claude_totals.call_usage(self.state, ref, values)
            return
        key = f"{short_text(message.get('id'), 128)}:{short_text(line.get('requestId'), 128)}"
        if key == ":":
            return
        agent = self.agent or ("sidechain" if line.get("isSidechain") is True else "")
        self.sink.call(
            Call(
                CLIENT,
                self.session_id,
                key,
                when or 0.0,
                model=model,
                version=short_text(line.get("version"), 40),
                agent=agent,
                **values,
            )
        )
        self.sink.session(
            CLIENT,
            self.session_id,
            version=short_text(line.get("version"), 40),
            project=short_text(line.get("cwd"), 4096),
        )

    def _user(self, line: Mapping[str, Any]) -> None:
        project = short_text(line.get("cwd"), 4096)
        if project and not self.agent:
            self.sink.session(CLIENT, self.session_id, project=project)
        if (
            self.state["titled"]
            or self.agent
            or line.get("isSidechain") is True
            or line.get("isMeta") is True
        ):
            return
        message = mapping(line.get("message"))
        text = text_of(message.get("content")).strip()
        if text and not text.startswith("<"):
            self.state["titled"] = True
            self.sink.session(CLIENT, self.session_id, title=mask_text(" ".join(text.split()))[:200])

    def _cost_state(self, line: Mapping[str, Any], note: Callable[[str], None]) -> None:
        """The client's running totals: what the turn's calls used beyond their own lines goes to them
        (``claude_totals``), and the totals are kept to cross-check the calls' sum."""
        usage = line.get("modelUsage")
        if not isinstance(usage, Mapping):
            return
        totals = claude_totals.totals_of(usage, note)
        when = epoch(line.get("timestamp")) or self.state.get("last_time") or 0.0
        for call_id, model, counts, shared in claude_totals.unrecorded(self.state, totals):
            if call_id is not None:
                self.sink.add_usage(CLIENT, self.session_id, call_id, counts, shared)
                continue
            # the client counted a call its transcript has no line for: kept, so totals stay whole
            unseen = f"unrecorded@{when:.3f}@{model}"
            self.sink.call(
                Call(
                    CLIENT,
                    self.session_id,
                    unseen,
                    when,
                    model=model,
                    agent=self.agent,
                    lane="unrecorded",
                    events=("unrecorded",),
                    **counts,
                )
            )
        summed = [sum(values[index] for values in totals.values()) for index in range(5)]
        self.sink.session(
            CLIENT,
            self.session_id,
            client_totals={
                "fresh": summed[0],
                "cache_read": summed[1],
                "cache_write": summed[2] + summed[3],
                "output": summed[4],
            },
        )
