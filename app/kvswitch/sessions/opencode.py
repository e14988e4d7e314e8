"""OpenCode's SQLite database (``$XDG_DATA_HOME/opencode/opencode.db``, 1.2 and later).

Measured on 1.18.33: ``session`` (``id, parent_id, directory, title, version, time_updated``),
``message`` (``data`` JSON: ``modelID``, ``providerID``, ``time``) and ``part`` (``data`` JSON); each
step of an answer is a ``step-finish`` part with that step's ``tokens`` (``input`` without the cached
part, ``cache.read``, ``cache.write``, ``output``), so a call is a step. The database is opened
read-only (``mode=ro``) with a short busy timeout: while OpenCode holds a write lock the pass notes it
and the next one reads it. A session is read again only when its ``time_updated`` moved; a child
session (a subagent's, ``parent_id``) is rolled into its parent.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from kvswitch.core.redact import mask_text
from kvswitch.sessions.counts import count, short_text
from kvswitch.sessions.model import Call

CLIENT = "opencode"
_STEPS = """
SELECT p.id, p.time_created, p.data, m.data FROM part p JOIN message m ON m.id = p.message_id
WHERE p.session_id = ? AND p.data LIKE '%"step-finish"%' ORDER BY p.time_created, p.id
"""


class Busy(Exception):
    """OpenCode is writing its database right now: read it on the next pass."""


def connect(path: Path) -> sqlite3.Connection:
    """The database, read-only: never created, never written. OpenCode keeps it in WAL mode, and SQLite
    opening a WAL database even read-only creates its ``-wal`` and ``-shm`` files when they are absent
    (OpenCode not running); then it is opened ``immutable`` (nothing to read from a log that is not
    there, no file made). While OpenCode runs they exist, and it is read through them."""
    uri = "file:" + str(path).replace("?", "%3f").replace("#", "%23") + "?mode=ro"
    if not Path(f"{path}-wal").exists():
        uri += "&immutable=1"
    return sqlite3.connect(uri, uri=True, timeout=0.5, check_same_thread=False)


def changed_sessions(db: sqlite3.Connection, seen: dict[str, int]) -> list[tuple[Any, ...]]:
    """(id, parent, directory, title, version, created, updated) of sessions that moved since ``seen``."""
    try:
        rows = db.execute(
            "SELECT id, parent_id, directory, title, version, time_created, time_updated FROM session"
        ).fetchall()
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise Busy(str(exc)) from None
        raise
    return [row for row in rows if isinstance(row[0], str) and seen.get(row[0]) != row[6]]


def root_of(session: str, parents: dict[str, str | None]) -> str:
    """The top session a (sub)session rolls into (a loop in the parents stops at the first repeat)."""
    seen = {session}
    while parents.get(session) and parents[session] not in seen:
        session = parents[session] or session
        seen.add(session)
    return session


def steps(
    db: sqlite3.Connection, session: str, root: str, version: str, note: Callable[[str], None]
) -> Iterator[Call]:
    """One call per ``step-finish`` part of ``session``, filed under ``root``."""
    for part_id, created, part_data, message_data in db.execute(_STEPS, (session,)):
        try:
            part = json.loads(part_data)
            message = json.loads(message_data)
        except (TypeError, ValueError, RecursionError):
            note(f"part {short_text(part_id, 60)} is not JSON: skipped")
            continue
        if not isinstance(part, dict) or part.get("type") != "step-finish" or not isinstance(message, dict):
            continue
        tokens = part.get("tokens")
        cache = tokens.get("cache") if isinstance(tokens, dict) else None
        when = created / 1000 if isinstance(created, int | float) and created > 0 else 0.0
        yield Call(
            CLIENT,
            root,
            short_text(part_id, 128),
            when,
            model=short_text(message.get("modelID"), 200),
            version=version,
            agent="" if session == root else session,
            fresh=count(tokens, "input", note),
            cache_read=count(cache, "read", note),
            cache_write_5m=count(cache, "write", note),
            output=count(tokens, "output", note),
        )


def session_fields(row: tuple[Any, ...]) -> dict[str, Any]:
    """The session table's own fields as this package's session metadata."""
    _id, _parent, directory, title, version, created, updated = row
    fields: dict[str, Any] = {"project": short_text(directory, 4096), "version": short_text(version, 40)}
    if isinstance(title, str) and title.strip():
        fields["title"] = mask_text(" ".join(title.split()))[:200]
    for stamp in (created, updated):
        if isinstance(stamp, int | float) and stamp > 0:
            fields.setdefault("times", []).append(stamp / 1000)
    return fields


def first_prompt(db: sqlite3.Connection, session: str) -> str:
    """The session's first user prompt (masked), "" when it has none."""
    for (data,) in db.execute(
        "SELECT p.data FROM part p JOIN message m ON m.id = p.message_id WHERE p.session_id = ? AND "
        'm.data LIKE \'%"role":"user"%\' AND p.data LIKE \'%"type":"text"%\' '
        "ORDER BY p.time_created, p.id LIMIT 5",
        (session,),
    ):
        try:
            part = json.loads(data)
        except (TypeError, ValueError, RecursionError):
            continue
        text = part.get("text") if isinstance(part, dict) and part.get("synthetic") is not True else None
        if isinstance(text, str) and text.strip():
            return mask_text(" ".join(text.split()))[:200]
    return ""
