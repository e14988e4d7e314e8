"""Usage per request, from the answer's own numbers, in SQLite (stdlib ``sqlite3``, 0600).

Every shape KV Switch reads is understood: a local server's ``timings`` (``prompt_n``, ``cache_n``,
``predicted_n``: the server's own count, preferred), the Messages API's ``usage`` (``input_tokens`` without
the cached part, ``cache_read_input_tokens``), OpenAI Chat's ``prompt_tokens_details.cached_tokens``
and Responses' ``input_tokens_details.cached_tokens``, in a whole body or in a stream's events.
``input_tokens`` here is the whole prompt (cached part included), so a hit rate is cached / input
whatever the vendor's convention.

Writes go through one thread (``UsageStore.add`` from the event loop hands them over), so a slow disk
never stalls a stream; readers (``kvswitch usage``, the window) open their own connection.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kvswitch.core.strictparse import loads as strict_json
from kvswitch.servers.answers import answer_events
from kvswitch.servers.base import as_int

COLUMNS = ("time", "client", "profile", "upstream", "model", "status", "input_tokens", "cached_tokens",
           "output_tokens", "ttft_ms", "tokens_per_s", "duration_ms", "failover", "cost", "error",
           "client_name", "client_version", "session", "agent", "session_source", "reusable_tokens",
           "verdict", "reason", "reason_detail")
#: the live cache record's columns (added after the first release: ``connect`` adds them to an older file)
CACHE_COLUMNS: dict[str, str] = {
    "client_name": "TEXT", "client_version": "TEXT", "session": "TEXT", "agent": "TEXT",
    "session_source": "TEXT", "reusable_tokens": "INTEGER", "verdict": "TEXT", "reason": "TEXT",
    "reason_detail": "TEXT",
}
_SCHEMA = """
CREATE TABLE IF NOT EXISTS requests (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  time REAL NOT NULL, client TEXT, profile TEXT, upstream TEXT, model TEXT, status INTEGER,
  input_tokens INTEGER, cached_tokens INTEGER, output_tokens INTEGER, ttft_ms REAL, tokens_per_s REAL,
  duration_ms REAL, failover TEXT, cost REAL, error TEXT
);
CREATE INDEX IF NOT EXISTS requests_time ON requests(time);
"""
_SESSION_INDEX = "CREATE INDEX IF NOT EXISTS requests_session ON requests(session, id)"
#: USD per million tokens (input, cached input, output) by model-id fragment, most specific first;
#: a local server costs nothing. Override or extend in ``prices.json`` in KV Switch's config dir:
#: ``{"model-id-fragment": [input, cached, output], ...}``.
DEFAULT_PRICES: dict[str, tuple[float, float, float]] = {
    "claude-opus-4": (15.0, 1.5, 75.0),
    "claude-sonnet-4": (3.0, 0.3, 15.0),
    "claude-haiku-4": (1.0, 0.1, 5.0),
    "claude-3-5-haiku": (0.8, 0.08, 4.0),
    "gpt-5": (1.25, 0.125, 10.0),
    "deepseek": (0.28, 0.028, 0.42),
}


@dataclass
class Tokens:
    input_tokens: int | None = None
    cached_tokens: int | None = None
    output_tokens: int | None = None
    tokens_per_s: float | None = None


@dataclass
class UsageRow:
    time: float
    client: str | None
    profile: str | None
    upstream: str | None
    model: str | None
    status: int | None
    input_tokens: int | None = None
    cached_tokens: int | None = None
    output_tokens: int | None = None
    ttft_ms: float | None = None
    tokens_per_s: float | None = None
    duration_ms: float | None = None
    failover: str | None = None
    cost: float | None = None
    error: str | None = None
    #: the live cache record: which client and session sent it, and what the server did with the prefix
    client_name: str | None = None
    client_version: str | None = None
    session: str | None = None
    agent: str | None = None
    #: how the session was told apart: ``header`` (the client's own id) or ``fingerprint``
    session_source: str | None = None
    #: the prompt tokens shared with the session's previous request (what the server could reuse)
    reusable_tokens: int | None = None
    #: HIT / PARTIAL / MISS / COLD (``kvswitch.core.verdicts``)
    verdict: str | None = None
    #: cold / prefix_changed / evicted / expired / server / unknown, for a request that is not a HIT
    reason: str | None = None
    #: the reason's evidence as JSON text (the first differing byte and token, the part, what ran between)
    reason_detail: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["time"] = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self.time))
        return data


def tokens_from_events(events: Iterable[Mapping[str, Any]]) -> Tokens:
    """The answer's token counts; a server's ``timings`` win over ``usage`` (the server counted them)."""
    found = Tokens()
    timings: Tokens | None = None
    for event in events:
        for obj in _objects(event):
            t = obj.get("timings")
            if isinstance(t, Mapping) and as_int(t.get("prompt_n")) is not None:
                prompt_n, cache_n = as_int(t.get("prompt_n")) or 0, as_int(t.get("cache_n")) or 0
                speed = t.get("predicted_per_second")
                timings = Tokens(prompt_n + cache_n, cache_n, as_int(t.get("predicted_n")),
                                 float(speed) if isinstance(speed, int | float) else None)
            usage = obj.get("usage")
            if isinstance(usage, Mapping):
                _merge_usage(found, usage)
    return timings or found


#: the keys an answer's token counts hang under; a stream event without either is not parsed
_COUNT_KEYS = (b'"usage"', b'"timings"')
#: how a stream's bytes begin (a JSON body, even pretty-printed, begins with ``{``)
_SSE_FIELDS = (b"data:", b"event:", b"id:", b"retry:", b":")


def tokens_from_answer(sample: bytes) -> Tokens:
    """The token counts in an answer's kept bytes (a JSON body, or a stream's head and tail).

    Of a stream only the events that can carry counts are parsed: a long answer's kept 128 KB are
    hundreds of text deltas, and parsing each of them took the event loop about 6 ms per request.
    """
    if sample.lstrip().startswith(_SSE_FIELDS):
        sample = b"\n".join(sample[start:end] for start, end in _lines_with(sample, _COUNT_KEYS))
    return tokens_from_events(answer_events(sample))


def _lines_with(data: bytes, keys: tuple[bytes, ...]) -> list[tuple[int, int]]:
    """The (start, end) of each line of ``data`` holding one of ``keys``, in order (found with
    ``bytes.find``, so the cost grows with the matches, not with the lines)."""
    spans: set[tuple[int, int]] = set()
    for key in keys:
        at = data.find(key)
        while at != -1:
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            end = len(data) if end == -1 else end
            spans.add((start, end))
            at = data.find(key, end)
    return sorted(spans)


def _objects(event: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    found = [event]
    for wrapper in ("message", "response"):
        inner = event.get(wrapper)
        if isinstance(inner, Mapping):
            found.append(inner)
    return found


def _merge_usage(found: Tokens, usage: Mapping[str, Any]) -> None:
    if "prompt_tokens" in usage or "completion_tokens" in usage:  # OpenAI Chat
        details = usage.get("prompt_tokens_details")
        found.input_tokens = as_int(usage.get("prompt_tokens")) or found.input_tokens
        if isinstance(details, Mapping) and as_int(details.get("cached_tokens")) is not None:
            found.cached_tokens = as_int(details.get("cached_tokens"))
        found.output_tokens = as_int(usage.get("completion_tokens")) or found.output_tokens
        return
    details = usage.get("input_tokens_details")
    if isinstance(details, Mapping):  # OpenAI Responses: input includes the cached part
        found.input_tokens = as_int(usage.get("input_tokens")) or found.input_tokens
        found.cached_tokens = as_int(details.get("cached_tokens"))
        found.output_tokens = as_int(usage.get("output_tokens")) or found.output_tokens
        return
    # Messages API: input_tokens excludes cache reads and writes; a message_delta repeats or omits them
    fresh = as_int(usage.get("input_tokens"))
    read = as_int(usage.get("cache_read_input_tokens"))
    written = as_int(usage.get("cache_creation_input_tokens")) or 0
    if fresh is not None or read is not None:
        total = (fresh or 0) + (read or 0) + written
        if total or found.input_tokens is None:
            found.input_tokens = total
            found.cached_tokens = read if read is not None else found.cached_tokens
    output = as_int(usage.get("output_tokens"))
    if output is not None:
        found.output_tokens = output


def load_prices(config_dir: Path) -> dict[str, tuple[float, float, float]]:
    """The default prices with the user's ``prices.json`` on top (a broken file is ignored, never fatal)."""
    prices = dict(DEFAULT_PRICES)
    with contextlib.suppress(OSError, ValueError, TypeError):
        data = strict_json((config_dir / "prices.json").read_text(encoding="utf-8"))
        for name, value in data.items():
            if isinstance(value, list) and len(value) == 3 and all(isinstance(v, int | float) for v in value):
                prices[str(name)] = (float(value[0]), float(value[1]), float(value[2]))
    return prices


def cost_of(model: str | None, tokens: Tokens, prices: Mapping[str, tuple[float, float, float]],
            local: bool) -> float | None:
    if local:
        return 0.0
    if not model:
        return None
    match = max((name for name in prices if name in model.lower()), key=len, default=None)
    if match is None:
        return None
    price_in, price_cached, price_out = prices[match]
    cached = tokens.cached_tokens or 0
    fresh = max(0, (tokens.input_tokens or 0) - cached)
    return (fresh * price_in + cached * price_cached + (tokens.output_tokens or 0) * price_out) / 1e6


def connect(db: Path) -> sqlite3.Connection:
    """Open (and create, 0600) the usage database."""
    db.parent.mkdir(parents=True, exist_ok=True)
    if not db.exists():
        fd = os.open(db, os.O_CREAT | os.O_WRONLY, 0o600)
        os.close(fd)
    connection = sqlite3.connect(db, timeout=10, check_same_thread=False)
    # a commit in the default rollback-journal mode waits for several fsyncs (about 20 ms here), one per
    # request; with a write-ahead log and NORMAL sync it is an append (tens of µs), still safe against
    # a crash of the gateway, and readers never block the writer. SQLite gives the -wal and -shm files
    # the database's own 0600 mode.
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.executescript(_SCHEMA)
    present = {row[1] for row in connection.execute("PRAGMA table_info(requests)")}
    for name, kind in CACHE_COLUMNS.items():
        if name not in present:
            connection.execute(f"ALTER TABLE requests ADD COLUMN {name} {kind}")
    connection.execute(_SESSION_INDEX)
    connection.commit()
    return connection


class UsageStore:
    """Appends rows on one background thread; ``close()`` waits for the rows handed over."""

    def __init__(self, db: Path):
        self.db = db
        self._connection = connect(db)
        self._lock = threading.Lock()

    def add(self, row: UsageRow) -> None:
        values = tuple(getattr(row, name) for name in COLUMNS)
        with self._lock:
            self._connection.execute(
                f"INSERT INTO requests ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                values,
            )
            self._connection.commit()

    def close(self) -> None:
        with self._lock:
            self._connection.close()


def query(db: Path, since: float | None = None, profile: str | None = None) -> list[UsageRow]:
    """Rows, oldest first, from ``since`` (epoch seconds) on, for one profile or all."""
    if not db.exists():
        return []
    connection = connect(db)
    try:
        sql = f"SELECT {', '.join(COLUMNS)} FROM requests WHERE time >= ?"
        args: list[Any] = [since or 0.0]
        if profile:
            sql += " AND profile = ?"
            args.append(profile)
        rows = connection.execute(sql + " ORDER BY id", args).fetchall()
    finally:
        connection.close()
    return [UsageRow(*row) for row in rows]


def summarize(rows: Iterable[UsageRow]) -> dict[str, dict[str, float]]:
    """Per profile: requests, input, cached and output tokens, cost, cache hit rate (for the window)."""
    totals: dict[str, dict[str, float]] = {}
    for row in rows:
        entry = totals.setdefault(row.profile or "?", {"requests": 0, "input_tokens": 0, "cached_tokens": 0,
                                                       "output_tokens": 0, "cost": 0.0})
        entry["requests"] += 1
        entry["input_tokens"] += row.input_tokens or 0
        entry["cached_tokens"] += row.cached_tokens or 0
        entry["output_tokens"] += row.output_tokens or 0
        entry["cost"] += row.cost or 0.0
    for entry in totals.values():
        entry["hit_rate"] = entry["cached_tokens"] / entry["input_tokens"] if entry["input_tokens"] else 0.0
    return totals
