"""Server-sent events in and out, for the bridges' streaming converters.

Upstream bytes arrive in arbitrary pieces (a chunk may end in the middle of a line or of a UTF-8
character), so events are cut only at their blank-line boundary; one event larger than
``MAX_EVENT_BYTES`` is refused instead of buffered without bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kvswitch.core.strictparse import loads_json
from kvswitch.gateway.bridges.base import json_bytes

#: far above any real delta (a whole tool call's arguments fit many times over)
MAX_EVENT_BYTES = 8 * 1024 * 1024


class StreamError(ValueError):
    """The upstream's stream cannot be read (an oversized event, a data line that is not JSON)."""


@dataclass(frozen=True)
class SseEvent:
    event: str | None
    data: str


class SseReader:
    """Cuts a byte stream into events (``event:`` and ``data:`` fields; comments and ids ignored)."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, chunk: bytes) -> list[SseEvent]:
        self._buffer = (self._buffer + chunk).replace(b"\r\n", b"\n")
        events: list[SseEvent] = []
        while True:
            end = self._buffer.find(b"\n\n")
            if end < 0:
                break
            raw, self._buffer = self._buffer[:end], self._buffer[end + 2 :]
            event = _parse_event(raw)
            if event is not None:
                events.append(event)
        if len(self._buffer) > MAX_EVENT_BYTES:
            self._buffer = b""
            raise StreamError(f"an upstream event is larger than {MAX_EVENT_BYTES} bytes")
        return events

    def close(self) -> list[SseEvent]:
        """The stream ended: an event not followed by its blank line still counts."""
        raw, self._buffer = self._buffer.strip(b"\n"), b""
        event = _parse_event(raw) if raw else None
        return [event] if event is not None else []


def _parse_event(raw: bytes) -> SseEvent | None:
    name: str | None = None
    data: list[str] = []
    for line in raw.decode("utf-8", errors="replace").split("\n"):
        if not line or line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
    if not data and name is None:
        return None
    return SseEvent(name, "\n".join(data))


def parse_object(text: str, where: str) -> dict[str, Any]:
    """One JSON object from an upstream (strict: no NaN, bounded nesting); ``StreamError`` otherwise."""
    try:
        value = loads_json(where, text)
    except Exception as exc:  # JSONDecodeError or the strict parser's refusal, both one message
        raise StreamError(f"{where}: not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise StreamError(f"{where}: expected a JSON object")
    return value


def encode_event(name: str | None, payload: dict[str, Any]) -> bytes:
    """One SSE event (``event:`` line only when named), compact JSON, UTF-8."""
    head = f"event: {name}\n" if name else ""
    return head.encode() + b"data: " + json_bytes(payload, compact=True) + b"\n\n"
