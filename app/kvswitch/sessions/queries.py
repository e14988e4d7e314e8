"""Reading the index: the session list (filtered), one session's calls, a session found by id or prefix."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import Any

from kvswitch.sessions.model import Call, SessionFilter, SessionSummary
from kvswitch.sessions.prices import Prices

_SESSION = (
    "SELECT client, session_id, project, title, first_time, last_time, versions, client_totals FROM sessions"
)
_CALL = (
    "SELECT client, session_id, call_id, time, model, version, fresh, cache_read, cache_write_5m, "
    "cache_write_1h, output, agent, lane, shape, message_count, changed_message, events FROM calls"
)


class _Sums:
    """A session's calls summed and priced as they stream by."""

    def __init__(self) -> None:
        self.calls = self.subagent_calls = 0
        self.counts = dict.fromkeys(("fresh", "cache_read", "cache_write_5m", "cache_write_1h", "output"), 0)
        self.cost = 0.0
        self.models: dict[str, None] = {}
        self.unpriced: set[str] = set()

    def add(self, call: Call, prices: Prices) -> None:
        self.calls += 1
        self.subagent_calls += bool(call.agent)
        for name in self.counts:
            self.counts[name] += getattr(call, name)
        if call.model:
            self.models[call.model] = None
        cost = prices.cost(call)
        if cost is None:
            if call.model:
                self.unpriced.add(call.model)
        else:
            self.cost += cost


class SessionNotFound(LookupError):
    """No session (or more than one) matches the id given; the message says which."""


def _where(filters: SessionFilter) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    values: list[Any] = []
    if filters.client:
        clauses.append("client = ?")
        values.append(filters.client)
    if filters.project:
        clauses.append("instr(lower(project), lower(?)) > 0")
        values.append(filters.project)
    if filters.since is not None:
        clauses.append("last_time >= ?")
        values.append(filters.since)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", values


def list_sessions(db: sqlite3.Connection, filters: SessionFilter, prices: Prices) -> list[SessionSummary]:
    """Every session that matches, newest first, its calls summed and priced."""
    where, values = _where(filters)
    rows = db.execute(f"{_SESSION}{where} ORDER BY last_time DESC", values).fetchall()
    if not rows:
        return []
    wanted = {(row[0], row[1]) for row in rows}
    sums: dict[tuple[str, str], _Sums] = {}
    for call in _calls(db, "", [], wanted if len(wanted) < 500 else None):
        key = (call.client, call.session_id)
        if key in wanted:
            sums.setdefault(key, _Sums()).add(call, prices)
    notes = _file_notes(db)
    return [_summary(row, sums.get((row[0], row[1])), notes.get((row[0], row[1]), [])) for row in rows]


def _calls(
    db: sqlite3.Connection, where: str, values: list[Any], sessions: set[tuple[str, str]] | None
) -> Iterator[Call]:
    if sessions is not None:
        for client, session_id in sorted(sessions):
            yield from _calls(db, " WHERE client = ? AND session_id = ?", [client, session_id], None)
        return
    for row in db.execute(_CALL + where, values):
        yield Call(
            row[0],
            row[1],
            row[2],
            row[3] or 0.0,
            model=row[4] or "",
            version=row[5] or "",
            fresh=row[6] or 0,
            cache_read=row[7] or 0,
            cache_write_5m=row[8] or 0,
            cache_write_1h=row[9] or 0,
            output=row[10] or 0,
            agent=row[11] or "",
            lane=row[12] or "",
            shape=row[13] or "",
            message_count=row[14] or 0,
            changed_message=row[15],
            events=tuple(e for e in (row[16] or "").split(",") if e),
        )


def session_calls(db: sqlite3.Connection, client: str, session_id: str) -> list[Call]:
    return list(
        _calls(db, " WHERE client = ? AND session_id = ? ORDER BY time, call_id", [client, session_id], None)
    )


def shapes_of(db: sqlite3.Connection, hashes: set[str]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for shape_hash in hashes:
        row = db.execute("SELECT digest FROM shapes WHERE hash = ?", (shape_hash,)).fetchone()
        if row is not None:
            found[shape_hash] = json.loads(row[0])
    return found


def summary_of(db: sqlite3.Connection, client: str, session_id: str, prices: Prices) -> SessionSummary:
    rows = db.execute(f"{_SESSION} WHERE client = ? AND session_id = ?", (client, session_id)).fetchall()
    if not rows:
        raise SessionNotFound(f"no session {session_id}")
    sums = _Sums()
    for call in session_calls(db, client, session_id):
        sums.add(call, prices)
    return _summary(rows[0], sums, _file_notes(db, client, session_id).get((client, session_id), []))


def find_session(db: sqlite3.Connection, text: str) -> tuple[str, str]:
    """(client, id) of the one session whose id is ``text`` or starts with it."""
    text = text.strip()
    if not text:
        raise SessionNotFound("give a session id (kvswitch sessions lists them)")
    exact = db.execute("SELECT client, session_id FROM sessions WHERE session_id = ?", (text,)).fetchall()
    if len(exact) == 1:
        return exact[0][0], exact[0][1]
    pattern = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    found = db.execute(
        "SELECT client, session_id FROM sessions WHERE session_id LIKE ? ESCAPE '\\' LIMIT 6", (pattern,)
    ).fetchall()
    if not found:
        raise SessionNotFound(f"no session {text!r} in the index (kvswitch sessions lists them)")
    if len(found) > 1:
        shown = ", ".join(f"{row[0]} {row[1]}" for row in found[:5])
        raise SessionNotFound(f"{text!r} matches more than one session ({shown}): give more of the id")
    return found[0][0], found[0][1]


def _file_notes(
    db: sqlite3.Connection, client: str | None = None, session_id: str | None = None
) -> dict[tuple[str, str], list[str]]:
    query = "SELECT client, session_id, path, notes FROM files WHERE notes IS NOT NULL AND notes != '[]'"
    values: list[Any] = []
    if client is not None:
        query += " AND client = ? AND session_id = ?"
        values = [client, session_id]
    found: dict[tuple[str, str], list[str]] = {}
    for row_client, row_session, path, notes in db.execute(query, values):
        for text in json.loads(notes):
            found.setdefault((row_client, row_session), []).append(f"{path.rsplit('/', 1)[-1]}: {text}")
    return found


def _summary(row: tuple[Any, ...], sums: _Sums | None, notes: list[str]) -> SessionSummary:
    client, session_id, project, title, first, last, versions, totals = row
    sums = sums or _Sums()
    counts = sums.counts
    notes = list(notes)
    if totals:
        own = json.loads(totals)
        mine = {
            "fresh": counts["fresh"],
            "cache_read": counts["cache_read"],
            "cache_write": counts["cache_write_5m"] + counts["cache_write_1h"],
            "output": counts["output"],
        }
        differ = [
            f"{key} {own.get(key, 0):,} vs {mine[key]:,}" for key in mine if own.get(key, 0) != mine[key]
        ]
        if differ:
            notes.append(
                "Claude Code's own totals (cost-state) differ from its calls' sum: " + ", ".join(differ)
            )
    return SessionSummary(
        client=client,
        session_id=session_id,
        project=project or "",
        title=title or "",
        first_time=first,
        last_time=last,
        versions=tuple(json.loads(versions or "[]")),
        models=tuple(sums.models),
        calls=sums.calls,
        subagent_calls=sums.subagent_calls,
        fresh=counts["fresh"],
        cache_read=counts["cache_read"],
        cache_write_5m=counts["cache_write_5m"],
        cache_write_1h=counts["cache_write_1h"],
        output=counts["output"],
        cost=round(sums.cost, 6),
        unpriced=tuple(sorted(sums.unpriced)),
        notes=tuple(notes),
    )
