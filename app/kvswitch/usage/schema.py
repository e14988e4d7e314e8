"""The usage file's shape: the row, the tables, opening it to write (the gateway) or to read (everyone
else), and what to do when the file at that path is not a usage database.

Writing opens read-write and creates the file 0600; a file that cannot serve (not SQLite, another
program's schema, a directory, read-only) raises ``UsageFileError`` naming the file, and the gateway
sets it aside (``set_aside``: renamed, kept for the user) and starts a new one. Reading opens
``mode=ro`` through SQLite's URI form, so ``kvswitch usage`` and the window never create, migrate or
lock the file; columns an older file lacks read as ``NULL``.
"""

from __future__ import annotations

import contextlib
import math
import os
import sqlite3
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from kvswitch.usage import rollup
from kvswitch.usage.readback import MAX_TIME, SECRET_TEXT_COLUMNS, hide_secrets

COLUMNS = ("time", "client", "profile", "upstream", "model", "status", "input_tokens", "cached_tokens",
           "output_tokens", "ttft_ms", "tokens_per_s", "duration_ms", "failover", "cost", "error",
           "client_name", "client_version", "session", "agent", "session_source", "reusable_tokens",
           "verdict", "reason", "reason_detail", "notes", "tiers")
#: columns added after the first release: ``connect`` adds them to an older file (the live cache record,
#: then ``notes``: the upstream's counts that were not sane, then ``tiers``: the prompt by cache tier)
ADDED_COLUMNS: dict[str, str] = {
    "client_name": "TEXT", "client_version": "TEXT", "session": "TEXT", "agent": "TEXT",
    "session_source": "TEXT", "reusable_tokens": "INTEGER", "verdict": "TEXT", "reason": "TEXT",
    "reason_detail": "TEXT", "notes": "TEXT", "tiers": "TEXT",
}
CACHE_COLUMNS = {name: kind for name, kind in ADDED_COLUMNS.items() if name not in ("notes", "tiers")}
#: the first release's columns: a ``requests`` table without one of them is not ours
BASE_COLUMNS = tuple(name for name in COLUMNS if name not in ADDED_COLUMNS)
_INTEGER = {"status", "input_tokens", "cached_tokens", "output_tokens", "reusable_tokens"}
_REAL = {"time", "ttft_ms", "tokens_per_s", "duration_ms", "cost"}
#: text longer than this is cut (a client-sent model name can be megabytes); evidence gets more room
_TEXT_LIMIT = 1000
_LONG_TEXT = {"failover": 4000, "error": 4000, "reason_detail": 16000, "notes": 2000, "tiers": 2000}
_INT64 = 2**63 - 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS requests (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  time REAL NOT NULL, client TEXT, profile TEXT, upstream TEXT, model TEXT, status INTEGER,
  input_tokens INTEGER, cached_tokens INTEGER, output_tokens INTEGER, ttft_ms REAL, tokens_per_s REAL,
  duration_ms REAL, failover TEXT, cost REAL, error TEXT
);
CREATE INDEX IF NOT EXISTS requests_time ON requests(time);
CREATE TABLE IF NOT EXISTS daily (
  day REAL NOT NULL, client TEXT, profile TEXT, model TEXT,
  requests INTEGER NOT NULL, errors INTEGER NOT NULL, input_tokens INTEGER NOT NULL,
  cached_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, cost REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS daily_day ON daily(day);
"""
_SESSION_INDEX = "CREATE INDEX IF NOT EXISTS requests_session ON requests(session, id)"
#: every column the per-profile totals read, in profile order: the summary scans this narrow index
#: (about a fifth of the table's bytes) already grouped, instead of the wide rows plus a sort; measured
#: on a million rows, half the CPU of the same query on the table (benchmarks/usage_scale.py)
_TOTALS_INDEX = ("CREATE INDEX IF NOT EXISTS requests_totals ON requests(profile, time, status, "
                 "input_tokens, cached_tokens, output_tokens, cost, error)")


@dataclass
class UsageRow:
    #: ``None`` only when read back from a file another program wrote (``readback``)
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
    #: counts the upstream reported that were not sane, with their raw values (``usage.answer``)
    notes: str | None = None
    #: the prompt's tokens by cache tier as JSON text (the server kind's ``TierSplit.to_json``), from the
    #: server's and its cache tier's own counter deltas around the request; None when not known (``notes``)
    tiers: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["time"] = local_time(self.time)  # "?" for a time no calendar shows
        return data


def local_time(epoch: float) -> str:
    """The local time of ``epoch``; ``"?"`` for one no calendar shows (another program's value)."""
    if not isinstance(epoch, int | float) or not 0 <= epoch <= MAX_TIME:
        return "?"
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(epoch))


class UsageFileError(Exception):
    """The file at the usage path cannot serve as the usage database; the message names it and why."""

    def __init__(self, db: Path, why: str, *, locked: bool = False):
        super().__init__(f"{db}: {why}")
        self.db, self.why = db, why
        #: another connection holds the file locked: not broken, try again later
        self.locked = locked


def clean_values(row: UsageRow) -> tuple[Any, ...]:
    """The row's values as SQLite can always bind them: integers within int64, finite reals, bounded text.

    Counts were validated when parsed (``answer.sane_count``); this is the last guard, for
    fields set elsewhere (a client-sent ``model`` may be a JSON object, a status anything), so that one
    odd row can never make the insert fail. The error and failover texts are an upstream's words, which
    may echo a key (a 401 body "the token … is not valid"): they are stored with every secret masked
    (``readback.hide_secrets``), whichever of the gateway's paths set them.
    """
    values: list[Any] = []
    for name in COLUMNS:
        value = getattr(row, name)
        if value is None:
            values.append(None)
        elif name in _INTEGER:
            ok = isinstance(value, int) and not isinstance(value, bool) and -_INT64 <= value <= _INT64
            values.append(value if ok else None)
        elif name in _REAL:
            ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
            values.append(float(value) if ok else (time.time() if name == "time" else None))
        else:
            text = value if isinstance(value, str) else None
            if text is not None:
                text = text.encode("utf-8", "replace").decode("utf-8")
                if name in SECRET_TEXT_COLUMNS:  # masked before the cut: a cut key is no longer known
                    text = hide_secrets(text[:65536])
                text = text[:_LONG_TEXT.get(name, _TEXT_LIMIT)]
            values.append(text)
    return tuple(values)


def connect(db: Path, busy_timeout: float = 5.0) -> sqlite3.Connection:
    """Open (and create, 0600) the usage database to write it; ``UsageFileError`` when it cannot be."""
    try:
        return _connect(db, busy_timeout)
    except OSError as exc:  # a folder on the way that cannot be entered, a file that cannot be read
        raise UsageFileError(db, f"cannot be opened ({exc.strerror or exc})") from None


def _connect(db: Path, busy_timeout: float) -> sqlite3.Connection:
    if db.is_dir():
        raise UsageFileError(db, "is a directory, not a usage database")
    try:
        db.parent.mkdir(parents=True, exist_ok=True)
        if not db.exists():
            fd = os.open(db, os.O_CREAT | os.O_WRONLY, 0o600)
            os.close(fd)
    except OSError as exc:
        raise UsageFileError(db, f"cannot be created ({exc.strerror or exc})") from None
    try:
        connection = sqlite3.connect(db, timeout=busy_timeout, check_same_thread=False)
    except sqlite3.Error as exc:
        raise UsageFileError(db, f"cannot be opened ({exc})") from None
    try:
        # a commit in the default rollback-journal mode waits for several fsyncs (about 20 ms here), one
        # per request; with a write-ahead log and NORMAL sync it is an append (tens of µs), still safe
        # against a crash of the gateway, and readers never block the writer. SQLite gives the -wal and
        # -shm files the database's own 0600 mode.
        _check_tables(db, connection)  # before anything writes: a file that is not ours stays as it was
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.executescript(_SCHEMA)
        connection.executescript(rollup.SCHEMA)
        present = _columns(connection, "requests")
        for name, kind in ADDED_COLUMNS.items():
            if name not in present:
                connection.execute(f"ALTER TABLE requests ADD COLUMN {name} {kind}")
        connection.execute(_SESSION_INDEX)
        connection.commit()
        _check_writable(connection)
    except sqlite3.Error as exc:
        connection.close()
        text = str(exc)
        raise UsageFileError(db, _why(exc), locked="locked" in text or "busy" in text) from None
    except UsageFileError:
        connection.close()
        raise
    return connection


def ensure_indexes(connection: sqlite3.Connection) -> None:
    """The totals index (``_TOTALS_INDEX``) and the hourly rollup (``rollup.ensure``): about 10 s
    and 3 s to build on an existing million-row file, so the writer thread builds them once at start,
    never the gateway's start-up path; readers work without them."""
    connection.execute(_TOTALS_INDEX)
    connection.commit()
    rollup.ensure(connection)


def open_reader(db: Path) -> sqlite3.Connection:
    """A read-only connection (SQLite ``mode=ro``): never creates, migrates or writes the file.

    A write-ahead-log file needs its ``-shm`` index writable even to read; when that cannot be (a
    read-only folder) and no log is pending, the file alone is the whole database and is read as
    ``immutable``. Raises ``UsageFileError`` (naming the file) for a directory or a file that is not a
    usage database.
    """
    try:
        if db.is_dir():
            raise UsageFileError(db, "is a directory, not a usage database")
        return _open_reader(db, "mode=ro")
    except OSError as exc:
        raise UsageFileError(db, f"cannot be read ({exc.strerror or exc})") from None
    except UsageFileError:
        wal = Path(str(db) + "-wal")
        with contextlib.suppress(OSError):
            if wal.exists() and wal.stat().st_size:
                raise
        try:
            return _open_reader(db, "mode=ro&immutable=1")
        except UsageFileError:
            pass
        raise


def _open_reader(db: Path, mode: str) -> sqlite3.Connection:
    try:
        connection = sqlite3.connect(f"file:{quote(str(db))}?{mode}", uri=True, timeout=5,
                                     check_same_thread=False)
    except sqlite3.Error as exc:
        raise UsageFileError(db, _why(exc)) from None
    try:
        present = _columns(connection, "requests")
        if not present:
            raise UsageFileError(db, "has no 'requests' table: not a KV Switch usage database")
        _check_tables(db, connection)
    except sqlite3.Error as exc:
        connection.close()
        raise UsageFileError(db, _why(exc)) from None
    except UsageFileError:
        connection.close()
        raise
    return connection


def column_list(connection: sqlite3.Connection, names: tuple[str, ...] = COLUMNS) -> str:
    """``names`` as a SELECT list, ``NULL`` for each column the file lacks (an older or odd file)."""
    present = _columns(connection, "requests")
    return ", ".join(name if name in present else f"NULL AS {name}" for name in names)


def has_table(connection: sqlite3.Connection, name: str) -> bool:
    return connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                              (name,)).fetchone() is not None


def set_aside(db: Path) -> Path:
    """Rename the unusable file (and its -wal/-shm) to ``NAME.broken-<UTC time>``; the new name."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = db.with_name(f"{db.name}.broken-{stamp}")
    serial = 1
    while target.exists():
        serial += 1
        target = db.with_name(f"{db.name}.broken-{stamp}-{serial}")
    os.rename(db, target)
    for suffix in ("-wal", "-shm"):
        side = Path(str(db) + suffix)
        if side.exists() and not side.is_dir():
            os.rename(side, Path(str(target) + suffix))
    return target


def _columns(connection: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}


def _check_tables(db: Path, connection: sqlite3.Connection) -> None:
    """A file whose ``requests``/``daily`` are not ours (missing columns, a view) is another schema."""
    kinds = dict(connection.execute(
        "SELECT name, type FROM sqlite_master WHERE name IN ('requests', 'daily', 'hourly', 'hourly_state')"))
    for name, kind in kinds.items():
        if kind != "table":
            raise UsageFileError(db, f"has a {kind} named {name!r}: not a KV Switch usage database")
    if "requests" in kinds:
        missing = [name for name in BASE_COLUMNS if name not in _columns(connection, "requests")]
        if missing:
            raise UsageFileError(db, "has a 'requests' table without the column(s) "
                                     f"{', '.join(missing)}: not a KV Switch usage database")
    if "daily" in kinds and "day" not in _columns(connection, "daily"):
        raise UsageFileError(db, "has a 'daily' table of another shape: not a KV Switch usage database")
    for name, column in (("hourly", "hour"), ("hourly_state", "last_id")):
        if name in kinds and column not in _columns(connection, name):
            raise UsageFileError(db, f"has a {name!r} table of another shape: not a KV Switch usage database")


def _check_writable(connection: sqlite3.Connection) -> None:
    """Write a row and roll it back: a file SQLite opened read-only (its mode, its folder, a read-only
    mount) fails here rather than on every row. A lock another program holds is not a
    broken file: the writer waits for it row by row."""
    try:
        connection.execute("BEGIN IMMEDIATE")
        connection.execute("INSERT INTO requests (time) VALUES (0)")  # SQLite allows BEGIN read-only
    except sqlite3.OperationalError as exc:
        connection.rollback()
        if "locked" in str(exc) or "busy" in str(exc):
            return
        raise
    connection.rollback()


def _why(exc: sqlite3.Error) -> str:
    text = str(exc)
    if "not a database" in text or "malformed" in text:
        return f"is damaged or not an SQLite database ({text})"
    if "readonly" in text or "read-only" in text:
        return f"cannot be written ({text})"
    if "unable to open" in text:
        return f"cannot be opened ({text})"
    return text
