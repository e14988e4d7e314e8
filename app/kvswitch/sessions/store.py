"""The sessions index: one SQLite file in KV Switch's data directory, rebuilt from the clients' files.

Nothing in it is the only copy of anything: deleting it costs one full read on the next pass. It holds
each file's mark (size, mtime, inode, offset) and its reader's state, one row per call, one row per
session's metadata, and a digest of each Claude request shape. Created 0600 (titles are the user's
prompts), in WAL mode so a window can read while a worker indexes.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kvswitch.sessions.lines import FileMark
from kvswitch.sessions.model import Call, Counts

SCHEMA_VERSION = 1
INDEX_NAME = "sessions.db"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS files(path TEXT PRIMARY KEY, client TEXT NOT NULL, session_id TEXT NOT NULL,
    size INTEGER, mtime_ns INTEGER, inode INTEGER, offset INTEGER, state TEXT, notes TEXT DEFAULT '[]');
CREATE TABLE IF NOT EXISTS sessions(client TEXT NOT NULL, session_id TEXT NOT NULL, project TEXT DEFAULT '',
    title TEXT DEFAULT '', first_time REAL, last_time REAL, versions TEXT DEFAULT '[]', client_totals TEXT,
    PRIMARY KEY(client, session_id));
CREATE TABLE IF NOT EXISTS calls(client TEXT NOT NULL, session_id TEXT NOT NULL, call_id TEXT NOT NULL,
    file TEXT NOT NULL, time REAL, model TEXT, version TEXT, fresh INTEGER DEFAULT 0,
    cache_read INTEGER DEFAULT 0, cache_write_5m INTEGER DEFAULT 0, cache_write_1h INTEGER DEFAULT 0,
    output INTEGER DEFAULT 0, agent TEXT, lane TEXT, shape TEXT, message_count INTEGER,
    changed_message INTEGER, events TEXT, PRIMARY KEY(client, session_id, call_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS calls_by_file ON calls(file);
CREATE INDEX IF NOT EXISTS files_by_session ON files(client, session_id);
CREATE TABLE IF NOT EXISTS shapes(hash TEXT PRIMARY KEY, digest TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
"""
_CALL_COLUMNS = (
    "client",
    "session_id",
    "call_id",
    "file",
    "time",
    "model",
    "version",
    "fresh",
    "cache_read",
    "cache_write_5m",
    "cache_write_1h",
    "output",
    "agent",
    "lane",
    "shape",
    "message_count",
    "changed_message",
    "events",
)
_USAGE = ("fresh", "cache_read", "cache_write_5m", "cache_write_1h", "output")
_INSERT_CALL = (
    f"INSERT OR REPLACE INTO calls({','.join(_CALL_COLUMNS)}) VALUES ({','.join('?' * len(_CALL_COLUMNS))})"
)
_ADD_USAGE = (
    f"UPDATE calls SET {', '.join(f'{k} = {k} + ?' for k in _USAGE)} "
    "WHERE client = ? AND session_id = ? AND call_id = ?"
)
#: a later line of the same answer carries the final counts: it replaces the earlier line's
_UPDATE_USAGE = (
    f"UPDATE calls SET {', '.join(f'{k} = ?' for k in _USAGE)}, model = COALESCE(NULLIF(?, ''), model) "
    "WHERE client = ? AND session_id = ? AND call_id = ?"
)


def open_index(path: Path) -> sqlite3.Connection:
    """The index at ``path``, created 0600 with its tables; an index of another schema, or one SQLite
    cannot read (a power loss under ``synchronous=OFF``, another program's file), is started anew: it
    is only ever a cache of the clients' files."""
    try:
        return _open(path)
    except sqlite3.DatabaseError:
        for stale in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            stale.unlink(missing_ok=True)
        return _open(path)


def _open(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600))
    db = sqlite3.connect(path, timeout=10, check_same_thread=False)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        # no fsync: the index is rebuilt from the clients' files if a power loss damages it, and the
        # checkpoint's fsync on close was a sixth of a re-read's time (benchmarks/sessions.py)
        db.execute("PRAGMA synchronous=OFF")
        found = db.execute("SELECT name FROM sqlite_master WHERE name='meta'").fetchone()
        version = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone() if found else None
        if version is not None and version[0] == str(SCHEMA_VERSION):
            return db  # the usual case: no write at all (a re-read's whole pass is tens of milliseconds)
        if found:
            for table in ("files", "sessions", "calls", "shapes", "meta"):
                db.execute(f"DROP TABLE IF EXISTS {table}")
        db.executescript(_SCHEMA)
        db.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        db.commit()
    except sqlite3.Error:
        db.close()
        raise
    return db


class IndexWriter:
    """The readers' sink: calls go to SQLite at once, session metadata is gathered and written per file."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.file = ""
        self.touched: set[tuple[str, str]] = set()
        self._sessions: dict[tuple[str, str], dict[str, Any]] = {}

    # --- the Sink protocol -------------------------------------------------------------------------
    def call(self, call: Call) -> None:
        self.touched.add((call.client, call.session_id))
        self.db.execute(
            _INSERT_CALL,
            (
                call.client,
                call.session_id,
                call.call_id,
                self.file,
                call.time,
                call.model,
                call.version,
                call.fresh,
                call.cache_read,
                call.cache_write_5m,
                call.cache_write_1h,
                call.output,
                call.agent,
                call.lane,
                call.shape,
                call.message_count,
                call.changed_message,
                ",".join(call.events),
            ),
        )

    def usage(self, client: str, session_id: str, call_id: str, values: Counts, model: str) -> None:
        self.touched.add((client, session_id))
        self.db.execute(
            _UPDATE_USAGE,
            (*(values.get(k, 0) for k in _USAGE), model, client, session_id, call_id),
        )

    def add_usage(
        self, client: str, session_id: str, call_id: str, values: Counts, shared: list[str]
    ) -> None:
        """Counts the client's totals gave a call beyond its own lines; ``shared``: the turn's other
        usage-less calls, whose tokens these include (marked, so the turn table says so)."""
        self.touched.add((client, session_id))
        self.db.execute(_ADD_USAGE, (*(values.get(k, 0) for k in _USAGE), client, session_id, call_id))
        self.db.execute(
            "UPDATE calls SET events = trim(events || ',turn_counts', ',') WHERE client = ? AND "
            "session_id = ? AND call_id = ? AND instr(events, 'turn_counts') = 0",
            (client, session_id, call_id),
        )
        for other in shared:
            self.db.execute(
                "UPDATE calls SET events = trim(events || ',shared_counts', ',') "
                "WHERE client = ? AND session_id = ? AND call_id = ?",
                (client, session_id, other),
            )

    def session(self, client: str, session_id: str, **fields: Any) -> None:
        entry = self._sessions.setdefault((client, session_id), {"versions": set()})
        self.touched.add((client, session_id))
        times = list(fields.pop("times", []))
        if fields.get("time") is not None:
            times.append(fields.pop("time"))
        fields.pop("time", None)
        for when in times:
            entry["first"] = min(entry.get("first", when), when)
            entry["last"] = max(entry.get("last", when), when)
        if fields.get("version"):
            entry["versions"].add(fields.pop("version"))
        fields.pop("version", None)
        for key in ("project", "title"):
            if fields.get(key) and not entry.get(key):
                entry[key] = fields[key]
        if "client_totals" in fields:
            entry["client_totals"] = fields["client_totals"]

    def shape(self, shape_hash: str, digest: Mapping[str, Any]) -> None:
        self.db.execute("INSERT OR IGNORE INTO shapes VALUES (?, ?)", (shape_hash, json.dumps(digest)))

    # --- bookkeeping -------------------------------------------------------------------------------
    def flush_sessions(self) -> None:
        """Merge the gathered metadata into the sessions table (first/last widen, a title is kept)."""
        for (client, session_id), entry in self._sessions.items():
            row = self.db.execute(
                "SELECT project, title, first_time, last_time, versions, client_totals FROM "
                "sessions WHERE client = ? AND session_id = ?",
                (client, session_id),
            ).fetchone()
            project, title, first, last, versions, totals = row or ("", "", None, None, "[]", None)
            merged = sorted(set(json.loads(versions or "[]")) | entry["versions"])
            first = (
                min(x for x in (first, entry.get("first")) if x is not None)
                if first is not None or entry.get("first") is not None
                else None
            )
            last = (
                max(x for x in (last, entry.get("last")) if x is not None)
                if last is not None or entry.get("last") is not None
                else None
            )
            totals = json.dumps(entry["client_totals"]) if "client_totals" in entry else totals
            self.db.execute(
                "INSERT OR REPLACE INTO sessions VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    client,
                    session_id,
                    project or entry.get("project", ""),
                    title or entry.get("title", ""),
                    first,
                    last,
                    json.dumps(merged[-20:]),
                    totals,
                ),
            )
        self._sessions.clear()

    def forget_file(self, path: str) -> None:
        """Drop what an earlier pass read from ``path`` (it was replaced, shrank or is gone)."""
        self.db.execute("DELETE FROM calls WHERE file = ?", (path,))
        self.db.execute("DELETE FROM files WHERE path = ?", (path,))

    def forget_session_calls(self, client: str, session_id: str) -> None:
        self.db.execute("DELETE FROM calls WHERE client = ? AND session_id = ?", (client, session_id))


def all_marks(db: sqlite3.Connection) -> dict[str, tuple[str, int, int, int]]:
    """Every file's (client, size, mtime_ns, inode), in one query: a pass over thousands of unchanged
    files compares each file's stat with these plain tuples (building a ``FileMark`` per row cost a
    fifth of a re-read's time on 5,000 files)."""
    return {row[0]: (row[1], row[2], row[3], row[4]) for row in db.execute(
        "SELECT path, client, size, mtime_ns, inode FROM files")}


def file_mark(db: sqlite3.Connection, path: str) -> tuple[FileMark | None, dict[str, Any] | None]:
    row = db.execute(
        "SELECT size, mtime_ns, inode, offset, state FROM files WHERE path = ?", (path,)
    ).fetchone()
    if row is None:
        return None, None
    try:
        state = json.loads(row[4]) if row[4] else None
    except ValueError:
        state = None
    return FileMark(row[0], row[1], row[2], row[3]), state if isinstance(state, dict) else None


def save_mark(
    db: sqlite3.Connection,
    path: str,
    client: str,
    session_id: str,
    mark: FileMark,
    state: Mapping[str, Any] | None,
    notes: Iterable[str],
) -> None:
    db.execute(
        "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            path,
            client,
            session_id,
            mark.size,
            mark.mtime_ns,
            mark.inode,
            mark.offset,
            json.dumps(state) if state is not None else None,
            json.dumps(list(notes)[:20]),
        ),
    )

