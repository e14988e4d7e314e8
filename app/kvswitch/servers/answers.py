"""Cache numbers read from a server's answers (a JSON body or a stream's events), whatever the API.

Servers disagree on where they report prompt-cache reuse, and some omit a field when it is zero; each
server module declares its readers. Kept here, below the verify layer, because the gateway reads the
same numbers from the traffic it forwards.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from typing import Any

from kvswitch import servers
from kvswitch.core.strictparse import loads as strict_json
from kvswitch.servers.base import Reading

#: most trusted first: a per-request number from the server beats a shared counter or a log line
SOURCE_PRIORITY: tuple[str, ...] = servers.source_priority()


def readings_from_payload(payload: Mapping[str, Any]) -> list[Reading]:
    """Cache numbers in one JSON object (a full answer or one stream event), whatever the API."""
    obj: Mapping[str, Any] = payload
    # Messages stream: message_start carries {"message": {"usage": ...}}; Responses: {"response": {...}}
    for wrapper in ("message", "response"):
        inner = payload.get(wrapper)
        if isinstance(inner, Mapping) and ("usage" in inner or "timings" in inner):
            obj = inner
    found: list[Reading] = []
    for reader in servers.answer_readers():
        found.extend(reader(obj))
    return found


def merge_stream_readings(events: Iterable[Mapping[str, Any]]) -> list[Reading]:
    """Fold the readings of a whole stream: the last value per source wins, except that a zero
    ``usage.cache_read_input_tokens`` in a later Messages ``message_delta`` never hides the start's."""
    latest: dict[str, Reading] = {}
    for event in events:
        for reading in readings_from_payload(event):
            old = latest.get(reading.source)
            if old is not None and reading.source == "usage.cache_read_input_tokens" and not reading.prompt:
                continue
            latest[reading.source] = reading
    return order_readings(latest.values())


def order_readings(readings: Iterable[Reading]) -> list[Reading]:
    def rank(r: Reading) -> int:
        for i, name in enumerate(SOURCE_PRIORITY):
            if r.source.startswith(name):
                return i
        return len(SOURCE_PRIORITY)

    return sorted(readings, key=rank)


def best_reading(readings: Iterable[Reading]) -> Reading | None:
    """The most trusted reading that actually counts cached tokens."""
    for reading in order_readings(readings):
        if reading.cached is not None:
            return reading
    return None


def answer_events(sample: bytes) -> list[dict[str, Any]]:
    """The JSON objects in an answer: each ``data:`` line of a stream, else the whole body."""
    events: list[dict[str, Any]] = []
    for line in sample.splitlines():
        text = line.strip()
        if text.startswith(b"data:"):
            text = text[5:].strip()
        if text.startswith(b"{"):
            with contextlib.suppress(ValueError):
                item = strict_json(text)
                if isinstance(item, dict):
                    events.append(item)
    if not events:
        with contextlib.suppress(ValueError):
            whole = strict_json(sample)
            if isinstance(whole, dict):
                events.append(whole)
    return events


def response_reading(sample: bytes) -> Reading | None:
    """The most trusted cache reading in an answer's bytes (a whole body or a stream)."""
    return best_reading(merge_stream_readings(answer_events(sample)))
