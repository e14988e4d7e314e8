"""What the log engine hands to its users: line kinds, highlight spans and per-request cache events.

These types are the whole contract with the desktop panel and the CLI, so they stay plain (enums,
frozen dataclasses, JSON-ready dicts) and carry no parsing state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from kvswitch.core.verdicts import HIT_RATIO, MISS_RATIO, verdict_for

__all__ = ["HIT_RATIO", "MISS_RATIO", "verdict_for"]  # re-exported: the log engine's users import them here


class LineKind(StrEnum):
    HIT = "hit"
    PARTIAL = "partial"
    MISS = "miss"
    TIMING = "timing"
    REQUEST = "request"
    WARNING = "warning"
    ERROR = "error"
    OTHER = "other"


#: when two signals disagree about a line, the one a person looks for wins
KIND_PRIORITY = {
    LineKind.HIT: 7,
    LineKind.PARTIAL: 7,
    LineKind.MISS: 7,
    LineKind.ERROR: 6,
    LineKind.WARNING: 5,
    LineKind.TIMING: 4,
    LineKind.REQUEST: 3,
    LineKind.OTHER: 0,
}

Span = tuple[int, int, LineKind]


@dataclass(frozen=True, slots=True)
class ClassifiedLine:
    """One log line as shown: ``text`` is ANSI-free and ``spans`` index into it."""

    text: str
    kind: LineKind
    spans: list[Span] = field(default_factory=list)


def kind_for_verdict(verdict: str) -> LineKind:
    return {"hit": LineKind.HIT, "partial": LineKind.PARTIAL}.get(verdict, LineKind.MISS)


@dataclass(frozen=True, slots=True)
class CacheEvent:
    """One completed request and how much of its prompt the server reused.

    ``first_line``/``last_line`` are 1-based line numbers in the followed stream; ``timestamp`` is the
    wall-clock time printed by the server or its wrapper (ISO 8601 text), ``None`` when the log only has
    relative times (the text format's ``M.SS.mmm.uuu``). ``server_clock_ms`` is that relative time: the
    server's own clock (milliseconds since it started) on the line that finished the request, filled in by
    the live follower (``follow.classify_lines``) for logs without a wall-clock time, so a person can tell
    requests apart by when the server handled them; whole-file scans and ``to_json`` leave it out.
    ``requests`` is set by sources that count requests instead of reading them one by one (a server's
    ``/metrics``, read by ``logs.parsers``): how many finished requests the event sums, 1 for one
    request's own numbers; ``None`` for an event read from a log, which is always one request.
    ``tiers``: with a second cache behind the server (``Server.cache_tiers``), where the event's prompt
    tokens came from, each figure a counter's increase over the event's scrapes
    (``logs.parsers.tier_counters``, worded by ``servers.tier_words.describe_tiers``); for ``requests`` > 1
    the split of all of them together. Log events have none, and ``to_json`` leaves the key out then.
    """

    server: str
    slot: int | None
    task: int | None
    prompt_tokens: int
    cached_tokens: int
    new_tokens: int
    prompt_ms: float | None
    first_line: int
    last_line: int
    reason: str | None = None
    timestamp: str | None = None
    request_id: str | None = None
    server_clock_ms: float | None = None
    requests: int | None = None
    tiers: dict[str, Any] | None = None

    @property
    def reuse_ratio(self) -> float:
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens > 0 else 0.0

    @property
    def verdict(self) -> str:
        return verdict_for(self.cached_tokens, self.prompt_tokens)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CacheEvent:
        """The event back from its ``to_json`` (a ``log scan --jsonl`` line)."""
        return cls(
            server=data["server"], slot=data["slot"], task=data["task"], prompt_tokens=data["prompt_tokens"],
            cached_tokens=data["cached_tokens"], new_tokens=data["new_tokens"], prompt_ms=data["prompt_ms"],
            first_line=data["first_line"], last_line=data["last_line"], reason=data["reason"],
            timestamp=data["timestamp"], request_id=data["request_id"], tiers=data.get("tiers"),
        )

    def to_json(self) -> dict[str, Any]:
        data = {
            "line": self.last_line,
            "server": self.server,
            "slot": self.slot,
            "task": self.task,
            "request_id": self.request_id,
            "prompt_tokens": self.prompt_tokens,
            "cached_tokens": self.cached_tokens,
            "new_tokens": self.new_tokens,
            "prompt_ms": self.prompt_ms,
            "reuse_ratio": round(self.reuse_ratio, 4),
            "verdict": self.verdict,
            "first_line": self.first_line,
            "last_line": self.last_line,
            "reason": self.reason,
            "timestamp": self.timestamp,
        }
        if self.tiers is not None:
            data["tiers"] = self.tiers
        return data


def make_event(
    *,
    server: str,
    cached: int,
    new: int,
    first_line: int,
    last_line: int,
    slot: int | None = None,
    task: int | None = None,
    prompt_ms: float | None = None,
    reason: str | None = None,
    timestamp: str | None = None,
    request_id: str | None = None,
) -> CacheEvent:
    cached = max(cached, 0)
    new = max(new, 0)
    return CacheEvent(
        server=server,
        slot=slot,
        task=task,
        prompt_tokens=cached + new,
        cached_tokens=cached,
        new_tokens=new,
        prompt_ms=prompt_ms,
        first_line=first_line,
        last_line=last_line,
        reason=reason,
        timestamp=timestamp,
        request_id=request_id,
    )


@dataclass(frozen=True, slots=True)
class FeedResult:
    """What one fed line produced: its classification and the requests it completed (usually none)."""

    line: ClassifiedLine
    events: list[CacheEvent] = field(default_factory=list)
