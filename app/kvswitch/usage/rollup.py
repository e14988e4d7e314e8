"""The hourly rollup: per UTC hour and profile, the sums ``kvswitch usage`` shows, kept beside the rows.

Issue 28 asks for the summary of a million rows in under 2 s; a plain ``sqlite3`` shell summing the
same columns over the same million rows took 3 s on the 2-core machine, so no scan of ``requests`` can
meet it. The writer thread (``usage.store``) adds each batch's sums to ``hourly`` in the transaction
that inserts the rows, and the summary reads whole hours from ``hourly`` and only the partial hours at
the window's edges from ``requests`` (through the time index): a day is 24 × profiles rows.

``hourly_state.last_id`` is the ``requests`` id the rollup covers up to. A reader trusts the rollup
only while it equals the table's AUTOINCREMENT sequence (``sqlite_sequence``), which every insert
moves, this version's or an older one's; otherwise (a file an older KV Switch wrote to, a rollup never
built) it scans the rows as before, and the writer rebuilds the rollup when it next opens the file.
Retention drops the hours it rolls into ``daily`` in the same transaction (``prune``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from kvswitch.usage.readback import clean, total, total_real

HOUR = 3600

SCHEMA = """
CREATE TABLE IF NOT EXISTS hourly (
  hour REAL NOT NULL, profile TEXT,
  requests INTEGER NOT NULL, errors INTEGER NOT NULL, input_tokens INTEGER NOT NULL,
  cached_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, cost REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS hourly_hour ON hourly(hour, profile);
CREATE TABLE IF NOT EXISTS hourly_state (last_id INTEGER NOT NULL);
"""
#: the hour a time falls in, rounded down also for a (nonsensical) negative time; ``bucket`` is the same
#: in Python: the largest multiple of 3600 not above ``time``, so "hour >= H" is exactly "time >= H"
_BUCKET_SQL = ("(CAST(time / 3600 AS INTEGER) - (time < CAST(time / 3600 AS INTEGER) * 3600)) * 3600")
_FAILED_SQL = "(error IS NOT NULL OR status IS NULL OR status >= 400)"
_REBUILD = f"""
INSERT INTO hourly (hour, profile, requests, errors, input_tokens, cached_tokens, output_tokens, cost)
SELECT {_BUCKET_SQL}, profile, COUNT(*), SUM(CASE WHEN {_FAILED_SQL} THEN 1 ELSE 0 END),
       COALESCE(SUM({clean("input_tokens")}), 0), COALESCE(SUM({clean("cached_tokens")}), 0),
       COALESCE(SUM({clean("output_tokens")}), 0), COALESCE(SUM({clean("cost")}), 0.0)
FROM requests GROUP BY 1, 2
"""
_ADD = ("UPDATE hourly SET requests = requests + ?, errors = errors + ?, input_tokens = input_tokens + ?, "
        "cached_tokens = cached_tokens + ?, output_tokens = output_tokens + ?, cost = cost + ? "
        "WHERE hour = ? AND profile IS ?")
_NEW = ("INSERT INTO hourly (requests, errors, input_tokens, cached_tokens, output_tokens, cost, hour, "
        "profile) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
#: the positions in ``schema.COLUMNS`` of what the rollup sums
_TIME, _PROFILE, _STATUS, _INPUT, _CACHED, _OUTPUT, _COST, _ERROR = 0, 2, 5, 6, 7, 8, 13, 14


def stored_sums() -> str:
    """The SELECT list summing a table of sums (``hourly``, ``daily``) as the summary reads it: requests,
    errors, input, cached and output tokens, cost, then 0 values found bad (``readback.total``: a
    value another program wrote there is skipped, and no sum overflows)."""
    counts = ", ".join(total(name) for name in ("requests", "errors", "input_tokens", "cached_tokens",
                                                 "output_tokens"))
    return f"{counts}, {total_real('cost')}, 0"


def bucket(epoch: float) -> int:
    hours = int(epoch / HOUR)
    if epoch < hours * HOUR:
        hours -= 1
    return hours * HOUR


def sequence(connection: sqlite3.Connection) -> int:
    """The last ``requests`` id ever given (0 before the first row)."""
    found = connection.execute("SELECT seq FROM sqlite_sequence WHERE name = 'requests'").fetchone()
    return int(found[0]) if found and found[0] is not None else 0


def covered(connection: sqlite3.Connection) -> int | None:
    """The id the rollup covers up to, or None when it was never built (or is being rebuilt)."""
    found = connection.execute("SELECT last_id FROM hourly_state").fetchone()
    return None if found is None else int(found[0])


def current(connection: sqlite3.Connection) -> bool:
    """Whether the rollup covers every row: the readers' test before they use it."""
    if not _has(connection, "hourly") or not _has(connection, "hourly_state"):
        return False
    return covered(connection) == sequence(connection)


def ensure(connection: sqlite3.Connection) -> bool:
    """Rebuild the rollup when it does not cover every row (a file from before it, or one an older
    version wrote to); True when it was rebuilt. The writer thread calls it once at open: a full scan
    (about 3 s on a million rows), never on the gateway's start-up path."""
    if covered(connection) == sequence(connection):
        return False
    with connection:
        rebuild(connection)
    return True


def rebuild(connection: sqlite3.Connection) -> None:
    """Sum every row again (inside the caller's transaction)."""
    connection.execute("DELETE FROM hourly")
    connection.execute(_REBUILD)
    connection.execute("DELETE FROM hourly_state")
    connection.execute("INSERT INTO hourly_state (last_id) VALUES (?)", (sequence(connection),))


def add(connection: sqlite3.Connection, rows: Iterable[tuple[Any, ...]], count: int) -> None:
    """Add the ``count`` rows just inserted (their cleaned values, ``COLUMNS`` order) to the rollup, in
    the caller's transaction. When the rollup did not cover the rows before them (another writer), it
    is rebuilt instead; a rollup never built stays so (``ensure`` builds it)."""
    # one statement in the common case: the rollup covered every row before these (their ids follow on
    # from it, AUTOINCREMENT within this write transaction) and now covers them too
    if not connection.execute("UPDATE hourly_state SET last_id = last_insert_rowid() "
                              "WHERE last_id = last_insert_rowid() - ?", (count,)).rowcount:
        if covered(connection) is not None:
            rebuild(connection)  # another program's rows came between: sum them all again
        return  # (a rollup never built stays so: ``ensure`` builds it)
    sums: dict[tuple[int, Any], list[Any]] = {}
    for values in rows:
        status = values[_STATUS]
        failed = values[_ERROR] is not None or status is None or status >= 400
        entry = sums.get((bucket(values[_TIME]), values[_PROFILE]))
        if entry is None:
            entry = sums[(bucket(values[_TIME]), values[_PROFILE])] = [0, 0, 0, 0, 0, 0.0]
        entry[0] += 1
        entry[1] += failed
        entry[2] += values[_INPUT] or 0
        entry[3] += values[_CACHED] or 0
        entry[4] += values[_OUTPUT] or 0
        entry[5] += values[_COST] or 0.0
    for (hour, profile), entry in sums.items():
        if not connection.execute(_ADD, (*entry, hour, profile)).rowcount:
            connection.execute(_NEW, (*entry, hour, profile))


def forget(connection: sqlite3.Connection) -> None:
    """Mark the rollup as not covering the rows (readers scan them; the writer rebuilds it at open)."""
    connection.execute("DELETE FROM hourly_state")


def prune(connection: sqlite3.Connection, cutoff: float) -> None:
    """Drop the hours before ``cutoff`` (a UTC midnight) with the rows retention deletes."""
    if _has(connection, "hourly"):
        connection.execute("DELETE FROM hourly WHERE hour < ?", (cutoff,))


def summary_rows(connection: sqlite3.Connection, since: float | None, until: float | None,
                 profile: str | None, raw_sums: str) -> list[tuple[Any, ...]] | None:
    """Per-profile sums over ``[since, until)`` as (profile, requests, errors, input, cached, output,
    cost, values found bad) rows, possibly several per profile: whole hours from the rollup, the
    partial hours at the edges from ``requests`` (``raw_sums`` is the SELECT list). None when the
    rollup cannot answer."""
    if not current(connection):
        return None
    first = None if since is None else bucket(since) + (HOUR if bucket(since) < since else 0)
    last = None if until is None else bucket(until)
    if first is not None and last is not None and first >= last:
        return None  # the window is inside one hour: the rows answer it directly, through the index
    found: list[tuple[Any, ...]] = []
    parts, args = _profile(profile)
    hours, hour_args = list(parts), list(args)
    if first is not None:
        hours.append("hour >= ?")
        hour_args.append(first)
    if last is not None:
        hours.append("hour < ?")
        hour_args.append(last)
    found += connection.execute(
        f"SELECT profile, {stored_sums()} FROM hourly WHERE {' AND '.join(hours)} GROUP BY profile",
        hour_args).fetchall()
    edges: list[tuple[float | None, float | None]] = [(since, first)] if since is not None else []
    if until is not None:
        edges.append((last, until))
    for start, end in edges:
        found += connection.execute(
            f"SELECT profile, {raw_sums} FROM requests WHERE time >= ? AND time < ? AND "
            f"{' AND '.join(parts)} GROUP BY profile", [start, end, *args]).fetchall()
    return found


def _profile(profile: str | None) -> tuple[list[str], list[Any]]:
    return (["1"], []) if profile is None else (["profile = ?"], [profile])


def _has(connection: sqlite3.Connection, name: str) -> bool:
    return connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                              (name,)).fetchone() is not None
