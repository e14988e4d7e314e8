"""The ``log scan --jsonl`` lines, formatted straight from the scanner's records.

A big log has millions of requests, so the per-request cost is what a scan costs: a whole-block ``Row``
becomes its JSON line in one f-string (no ``CacheEvent``, no dict, no ``json.dumps``), and each batch
becomes one string written at once. The text is exactly ``json.dumps(event.to_json())`` (tested).
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from kvswitch.logs.diagnose import Diagnosis
from kvswitch.logs.fastscan import Record, row_event
from kvswitch.logs.model import CacheEvent

#: events kept for the diagnosis (it only looks at the latest run), so memory never grows with the file
DIAGNOSIS_WINDOW = 64

_JSON_TEXT_CACHE: dict[str | None, str] = {}


def json_text(value: str | None) -> str:
    """JSON of a short string that repeats a lot (server names, reasons), memoised (bounded)."""
    found = _JSON_TEXT_CACHE.get(value)
    if found is None:
        found = json.dumps(value)
        if len(_JSON_TEXT_CACHE) < 4096:
            _JSON_TEXT_CACHE[value] = found
    return found


def _json_number(value: int | float | None) -> str:
    """What ``json.dumps`` writes for a finite number (its ``repr``), without its overhead."""
    return "null" if value is None else repr(value)


def json_line(
    last: int,
    server: str,
    slot: str,
    task: str,
    request_id: str,
    prompt: int,
    cached: int,
    new: int,
    prompt_ms: str,
    ratio: str,
    verdict: str,
    first: int,
    reason: str,
    timestamp: str,
) -> str:
    """The one Python writer of a cache event's JSON line (the str arguments are JSON text already):
    exactly ``json.dumps(event.to_json())`` plus a newline; the C scanner writes the same bytes (tested)."""
    return (
        f'{{"line": {last}, "server": {server}, "slot": {slot}, "task": {task}, '
        f'"request_id": {request_id}, "prompt_tokens": {prompt}, "cached_tokens": {cached}, '
        f'"new_tokens": {new}, "prompt_ms": {prompt_ms}, '
        f'"reuse_ratio": {ratio}, "verdict": "{verdict}", "first_line": {first}, "last_line": {last}, '
        f'"reason": {reason}, "timestamp": {timestamp}}}\n'
    )


def event_json_line(event: CacheEvent) -> str:
    """``json.dumps(event.to_json())`` plus a newline, several times faster."""
    return json_line(
        event.last_line,
        json_text(event.server),
        _json_number(event.slot),
        _json_number(event.task),
        json_text(event.request_id),
        event.prompt_tokens,
        event.cached_tokens,
        event.new_tokens,
        _json_number(event.prompt_ms),
        _json_number(round(event.reuse_ratio, 4)),
        event.verdict,
        event.first_line,
        json_text(event.reason),
        json_text(event.timestamp),
    )


@dataclass(slots=True)
class Totals:
    """The summary line's numbers; totals of slices of a file add up to those of the whole file."""

    hits: int = 0
    partial: int = 0
    misses: int = 0
    prompt: int = 0
    cached: int = 0
    new: int = 0
    recent: deque[CacheEvent] = field(default_factory=lambda: deque(maxlen=DIAGNOSIS_WINDOW))
    #: the last JSON lines of a scan that writes its lines in bulk, without events (see ``keep_tail``)
    tail: bytes = b""

    @property
    def requests(self) -> int:
        return self.hits + self.partial + self.misses

    def latest(self) -> list[CacheEvent]:
        """The last ``DIAGNOSIS_WINDOW`` events, for the diagnosis."""
        events = list(self.recent)
        events += [CacheEvent.from_json(json.loads(line)) for line in self.tail.splitlines()]
        return events[-DIAGNOSIS_WINDOW:]

    def add_counts(self, counts: tuple[int, int, int, int, int, int]) -> None:
        """Count lines written in bulk: (hits, partial, misses, prompt, cached, new tokens)."""
        hits, partial, misses, prompt, cached, new = counts
        self.hits += hits
        self.partial += partial
        self.misses += misses
        self.prompt += prompt
        self.cached += cached
        self.new += new

    def keep_tail(self, text: bytes) -> None:
        """Remember the last ``DIAGNOSIS_WINDOW`` lines of everything written so far, ``text`` last."""
        tail = _last_lines(text)
        if len(tail) == len(text):  # no more lines than the window: the earlier ones still count
            tail = _last_lines(self.tail + text)
        self.tail = tail

    def add(self, event: CacheEvent) -> None:
        verdict = event.verdict
        if verdict == "hit":
            self.hits += 1
        elif verdict == "partial":
            self.partial += 1
        else:
            self.misses += 1
        self.prompt += event.prompt_tokens
        self.cached += event.cached_tokens
        self.new += event.new_tokens
        self.recent.append(event)

    def to_json(self, diagnosis: Diagnosis | None) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "hits": self.hits,
            "partial": self.partial,
            "misses": self.misses,
            "prompt_tokens": self.prompt,
            "cached_tokens": self.cached,
            "new_tokens": self.new,
            "reuse_ratio": round(self.cached / self.prompt, 4) if self.prompt else 0.0,
            "diagnosis": None
            if diagnosis is None
            else {
                "code": diagnosis.code,
                "message": diagnosis.message,
                "fix_env": diagnosis.fix_env,
            },
        }


def _last_lines(text: bytes) -> bytes:
    start = len(text)
    for _ in range(DIAGNOSIS_WINDOW + 1):  # the newline before the window's first line
        start = text.rfind(b"\n", 0, start)
        if start < 0:
            return text
    return text[start + 1 :]


#: JSON text of recurring floats (prompt times, reuse ratios): ``repr`` and ``round`` cost more than a lookup
_MS_TEXT: dict[float, str] = {}
_RATIO_TEXT: dict[float, str] = {0.0: "0.0", 1.0: "1.0"}
_MEMO_LIMIT = 1 << 14


def format_records(records: list[Record], server: str, totals: Totals, remember: bool = True) -> str:
    """The JSON lines of a batch (events and rows alike), counted into ``totals``; ``remember=False``:
    the caller keeps the text's tail instead of the events (``Totals.keep_tail``)."""
    server_json = json_text(server)
    ms_text, ratio_text = _MS_TEXT, _RATIO_TEXT
    parts: list[str] = []
    append = parts.append
    hits = partial = misses = prompt_sum = cached_sum = new_sum = 0
    for record in records:
        if type(record) is tuple:
            slot, task, cached, new, prompt_ms, first, last, reason, verdict = record
            prompt = cached + new
            ratio = cached / prompt if prompt > 0 else 0.0
            ratio_json = ratio_text.get(ratio)
            if ratio_json is None:
                ratio_json = ratio_text[ratio] = repr(round(ratio, 4))
            ms_json = ms_text.get(prompt_ms)
            if ms_json is None:
                ms_json = ms_text[prompt_ms] = repr(prompt_ms)
            reason_json = "null" if reason is None else json_text(reason)
            append(
                json_line(
                    last,
                    server_json,
                    str(slot),
                    str(task),
                    "null",
                    prompt,
                    cached,
                    new,
                    ms_json,
                    ratio_json,
                    verdict,
                    first,
                    reason_json,
                    "null",
                )
            )
        else:
            event = _as_event(record, server)
            append(event_json_line(event))
            prompt, cached, new, verdict = (
                event.prompt_tokens,
                event.cached_tokens,
                event.new_tokens,
                event.verdict,
            )
        prompt_sum += prompt
        cached_sum += cached
        new_sum += new
        if verdict == "hit":
            hits += 1
        elif verdict == "miss":
            misses += 1
        else:
            partial += 1
    if len(ms_text) > _MEMO_LIMIT or len(ratio_text) > _MEMO_LIMIT:  # bounded memory on any log
        ms_text.clear()
        ratio_text.clear()
    totals.add_counts((hits, partial, misses, prompt_sum, cached_sum, new_sum))
    if remember:
        totals.recent.extend(_as_event(record, server) for record in records[-DIAGNOSIS_WINDOW:])
    return "".join(parts)


def _as_event(record: Record, server: str) -> CacheEvent:
    return record if isinstance(record, CacheEvent) else row_event(server, record)
