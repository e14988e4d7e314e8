"""Reading the usage file: totals, requests, sessions and the hit-rate trend, aggregated in SQL.

Everything here opens the file read-only (``schema.open_reader``) and either aggregates in SQLite
or streams rows from a cursor, so a million rows cost the reader a scan, not a million Python objects
(issue 28: the list-everything reader took 31 s and 1 GB). These are the functions the CLI
(``kvswitch usage``, ``kvswitch sessions``) and the window call; they raise ``UsageFileError`` (naming
the file) when the file is not a usage database, and return nothing when there is no file yet.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kvswitch.usage import rollup
from kvswitch.usage.readback import BAD, SECRET_TEXT_COLUMNS, Tally, bad, clean, hide_secrets, select_list
from kvswitch.usage.schema import COLUMNS, UsageRow, has_table, open_reader
from kvswitch.usage.session_totals import SessionSummary
from kvswitch.usage.session_totals import iter_session_summaries as _iter_sessions

#: an answer that failed: an error noted, no status, or an HTTP error status
_FAILED = "(error IS NOT NULL OR status IS NULL OR status >= 400)"


@dataclass(frozen=True)
class UsageFilter:
    """Which requests: from ``since`` to ``until`` (epoch seconds), of one profile, client (the route,
    ``claude``/``codex``/``pinned``, or the client's own name), session or verdict; ``None``: any."""

    since: float | None = None
    until: float | None = None
    profile: str | None = None
    client: str | None = None
    session: str | None = None
    verdict: str | None = None

    def where(self, present: set[str] | None = None) -> tuple[str, list[Any]]:
        """The SQL condition and its arguments (columns an older file lacks match nothing)."""
        parts: list[str] = ["1"]
        args: list[Any] = []
        if self.since is not None:
            parts.append("time >= ?")
            args.append(self.since)
        if self.until is not None:
            parts.append("time < ?")
            args.append(self.until)
        if self.profile is not None:
            parts.append("profile = ?")
            args.append(self.profile)
        if self.client is not None:
            has_name = present is None or "client_name" in present
            parts.append("(client = ? OR client_name = ?)" if has_name else "client = ?")
            args += [self.client, self.client] if has_name else [self.client]
        for name, value in (("session", self.session), ("verdict", self.verdict)):
            if value is not None:
                if present is not None and name not in present:
                    parts.append("0")
                    continue
                parts.append(f"{name} = ?")
                args.append(value.upper() if name == "verdict" else value)
        return " AND ".join(parts), args

    @property
    def reaches_daily(self) -> bool:
        """Whether the daily summaries can answer it (they have no session or verdict)."""
        return self.session is None and self.verdict is None


def _reader(db: Path) -> sqlite3.Connection | None:
    """A read-only connection, or ``None`` when there is no file yet (nothing recorded)."""
    try:
        missing = not db.exists() and not db.is_symlink()
    except OSError:
        missing = False  # a folder that cannot be entered: open_reader says so, naming the file
    return None if missing else open_reader(db)


def _narrowed(connection: sqlite3.Connection, filters: UsageFilter) -> UsageFilter:
    """``filters`` without a ``since`` that reaches past the oldest row. With one, SQLite walks the time
    index and fetches each row from it; when the span covers the whole file (a file of the last day's
    million rows, ``--since 1d``), a plain scan in row order is several times faster."""
    if filters.since is None:
        return filters
    oldest = connection.execute("SELECT MIN(time) FROM requests").fetchone()[0]  # the index's first entry
    if oldest is not None and not isinstance(oldest, int | float):
        return filters  # text or bytes another program wrote sort after every number: no row has one
    return replace(filters, since=None) if oldest is None or filters.since <= oldest else filters


def _present(connection: sqlite3.Connection) -> set[str]:
    return {row[1] for row in connection.execute("PRAGMA table_info(requests)")}


def iter_rows(db: Path, filters: UsageFilter = UsageFilter(), chunk: int = 2000,
              tally: Tally | None = None) -> Iterator[UsageRow]:
    """Every matching request, oldest first, read ``chunk`` rows at a time (never all at once)."""
    for values in iter_values(db, filters, chunk, tally):
        yield UsageRow(*values)


def iter_values(db: Path, filters: UsageFilter = UsageFilter(), chunk: int = 2000,
                tally: Tally | None = None) -> Iterator[tuple[Any, ...]]:
    """Like ``iter_rows`` but the column tuples in ``COLUMNS`` order (the CSV/JSON writers' path).

    Each value is one KV Switch writes or ``None`` (``readback``: ``tally`` counts the others), and
    the error and failover texts are shown with the known secrets masked (rows stored before they
    were masked on the way in)."""
    connection = _reader(db)
    if connection is None:
        return
    try:
        present = _present(connection)
        where, args = _narrowed(connection, filters).where(present)
        sql = f"SELECT {select_list(COLUMNS, present)} FROM requests WHERE {where} ORDER BY id"
        cursor = connection.execute(sql, args)
        while batch := cursor.fetchmany(chunk):
            yield from _shown_values(batch, tally)
    finally:
        connection.close()


_SECRET_AT = tuple(COLUMNS.index(name) for name in SECRET_TEXT_COLUMNS)


def _shown_values(batch: list[tuple[Any, ...]], tally: Tally | None) -> Iterator[tuple[Any, ...]]:
    """The rows of ``select_list`` with each ``BAD`` value as ``None`` (counted in ``tally``) and the
    secrets in the error texts masked; a row with neither is handed over as it is."""
    error_at, failover_at = _SECRET_AT
    for values in batch:
        if BAD in values:  # compared in C: nearly free on the rows that have none
            if tally is not None:
                tally.bad_values += values.count(BAD)
            values = tuple(None if value == BAD else value for value in values)
        if values[error_at] is None and values[failover_at] is None:
            yield values
            continue
        shown = list(values)
        for at in _SECRET_AT:
            if shown[at] is not None:
                shown[at] = hide_secrets(shown[at])
        yield tuple(shown)


def query(db: Path, since: float | None = None, profile: str | None = None) -> list[UsageRow]:
    """Rows, oldest first, from ``since`` (epoch seconds) on, for one profile or all (a list: for the
    window's day view and the tests; the CLI streams with ``iter_rows``)."""
    return list(iter_rows(db, UsageFilter(since=since, profile=profile)))


def requests_page(db: Path, filters: UsageFilter = UsageFilter(), limit: int = 200, offset: int = 0,
                  tally: Tally | None = None) -> list[UsageRow]:
    """One page of the request log for the window: the ``limit`` requests before the ``offset`` newest,
    oldest first (offset 0 is the newest page)."""
    connection = _reader(db)
    if connection is None:
        return []
    try:
        present = _present(connection)
        where, args = _narrowed(connection, filters).where(present)
        rows = connection.execute(f"SELECT {select_list(COLUMNS, present)} FROM requests WHERE {where} "
                                  "ORDER BY id DESC LIMIT ? OFFSET ?", [*args, limit, offset]).fetchall()
    finally:
        connection.close()
    return [UsageRow(*values) for values in _shown_values(rows[::-1], tally)]


def summary(db: Path, filters: UsageFilter = UsageFilter(),
            tally: Tally | None = None) -> dict[str, dict[str, float]]:
    """Per profile: requests, errors, input/cached/output tokens, cost and hit rate, summed by SQLite
    over the request rows and, for older days, the daily summaries retention left. A value another
    program wrote that KV Switch never would is left out of the sums (``readback``; ``tally`` counts
    those of the rows read)."""
    totals: dict[str, dict[str, float]] = {}
    connection = _reader(db)
    if connection is None:
        return totals
    try:
        connection.execute("BEGIN")  # one snapshot: the rollup and the rows it is checked against
        found = _request_sums(connection, filters)
        if filters.reaches_daily and has_table(connection, "daily"):
            daily_where, daily_args = _daily_where(filters)
            found += connection.execute(
                f"SELECT profile, {rollup.stored_sums()} FROM daily WHERE {daily_where} GROUP BY profile",
                daily_args).fetchall()
    finally:
        connection.close()
    for profile, requests, errors, input_tokens, cached, output, cost, bad_values in found:
        if tally is not None and bad_values:
            tally.bad_values += bad_values
        name = profile if isinstance(profile, str) and profile else "?"
        entry = totals.setdefault(name, {"requests": 0, "errors": 0, "input_tokens": 0,
                                                   "cached_tokens": 0, "output_tokens": 0, "cost": 0.0})
        for key, value in (("requests", requests), ("errors", errors), ("input_tokens", input_tokens),
                           ("cached_tokens", cached), ("output_tokens", output), ("cost", cost)):
            entry[key] += value or 0
    for entry in totals.values():
        entry["hit_rate"] = entry["cached_tokens"] / entry["input_tokens"] if entry["input_tokens"] else 0.0
    return totals


#: the request rows' sums, each value cleaned (``readback``), then how many values were not clean
_SUMS = (f"COUNT(*), SUM(CASE WHEN {_FAILED} THEN 1 ELSE 0 END), COALESCE(SUM({clean('input_tokens')}), 0), "
         f"COALESCE(SUM({clean('cached_tokens')}), 0), COALESCE(SUM({clean('output_tokens')}), 0), "
         f"COALESCE(SUM({clean('cost')}), 0.0), "
         f"SUM({bad(('input_tokens', 'cached_tokens', 'output_tokens', 'cost'))})")


def _request_sums(connection: sqlite3.Connection, filters: UsageFilter) -> list[tuple[Any, ...]]:
    """The request rows' sums per profile: from the hourly rollup plus the edge hours' rows when it can
    answer (a filter of time and profile only), else summed over the rows."""
    if filters.client is None and filters.session is None and filters.verdict is None:
        found = rollup.summary_rows(connection, filters.since, filters.until, filters.profile, _SUMS)
        if found is not None:
            return found
    where, args = _narrowed(connection, filters).where(_present(connection))
    # GROUP BY the bare column, so that SQLite reads the totals index already grouped
    return connection.execute(f"SELECT profile, {_SUMS} FROM requests WHERE {where} GROUP BY profile",
                              args).fetchall()


def _daily_where(filters: UsageFilter) -> tuple[str, list[Any]]:
    parts: list[str] = ["1"]
    args: list[Any] = []
    if filters.since is not None:
        parts.append("day >= ?")
        args.append(filters.since - filters.since % 86400)
    if filters.until is not None:
        parts.append("day < ?")
        args.append(filters.until)
    for name, value in (("profile", filters.profile), ("client", filters.client)):
        if value is not None:
            parts.append(f"{name} = ?")
            args.append(value)
    return " AND ".join(parts), args


def summarize(rows: Iterable[UsageRow]) -> dict[str, dict[str, float]]:
    """Per profile, from rows already read (the window's day view; ``summary`` is the SQL form)."""
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


def iter_session_summaries(db: Path, filters: UsageFilter = UsageFilter(),
                           tally: Tally | None = None) -> Iterator[SessionSummary]:
    """One summary per session and client, the most recently active last, streamed from SQLite
    (``session_totals``): ``kvswitch sessions`` on a million sessions never holds them all."""
    connection = _reader(db)
    if connection is None:
        return
    try:
        present = _present(connection)
        if not {"session", "verdict", "reusable_tokens", "client_name", "reason"} <= present:
            return  # a file from before the cache record: no session was ever told
        where, args = _narrowed(connection, filters).where(present)
        yield from _iter_sessions(connection, where, args, tally)
    finally:
        connection.close()


def session_summaries(db: Path, filters: UsageFilter = UsageFilter()) -> list[SessionSummary]:
    """Every session's summary as a list (the window's table; the CLI streams them)."""
    return list(iter_session_summaries(db, filters))


@dataclass
class TrendPoint:
    start: float
    requests: int
    prompt_tokens: int
    cached_tokens: int
    #: the slice's times to first token, summed, and how many requests had one (the chart's mean line)
    ttft_ms_sum: float = 0.0
    ttft_n: int = 0

    @property
    def hit_rate(self) -> float:
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


def hit_rate_trend(db: Path, bucket_seconds: float, filters: UsageFilter = UsageFilter()) -> list[TrendPoint]:
    """Requests and cached/prompt tokens per ``bucket_seconds`` (from the epoch, UTC), oldest first."""
    if bucket_seconds <= 0:
        raise ValueError("bucket_seconds must be positive")
    connection = _reader(db)
    if connection is None:
        return []
    try:
        where, args = _narrowed(connection, filters).where(_present(connection))
        found = connection.execute(
            f"SELECT CAST({clean('time')} / ? AS INTEGER) * ?, COUNT(*), "
            f"COALESCE(SUM({clean('input_tokens')}), 0), "
            f"COALESCE(SUM({clean('cached_tokens')}), 0), COALESCE(SUM({clean('ttft_ms')}), 0.0), "
            f"COUNT({clean('ttft_ms')}) FROM requests WHERE {where} AND {clean('time')} IS NOT NULL "
            "GROUP BY 1 ORDER BY 1",
            [bucket_seconds, bucket_seconds, *args]).fetchall()
    finally:
        connection.close()
    return [TrendPoint(float(start), requests, prompt, cached, ttft_sum, ttft_n)
            for start, requests, prompt, cached, ttft_sum, ttft_n in found]


@dataclass(frozen=True)
class FilterChoices:
    """What the window's filters offer over a period: every client, profile and session seen."""

    oldest: float | None
    clients: list[str]
    profiles: list[str]
    #: the most recently active first
    sessions: list[str]


def filter_choices(db: Path, since: float | None = None, sessions_limit: int = 500) -> FilterChoices:
    """The distinct clients (their own names, else the gateway's route), profiles and sessions since
    ``since``, from SQLite (the window never lists every row to fill three combo boxes)."""
    connection = _reader(db)
    if connection is None:
        return FilterChoices(None, [], [], [])
    try:
        present = _present(connection)
        where, args = _narrowed(connection, UsageFilter(since=since)).where(present)
        oldest = connection.execute(f"SELECT MIN({clean('time')}) FROM requests WHERE {where}",
                                    args).fetchone()[0]
        client = "COALESCE(client_name, client)" if "client_name" in present else "client"
        clients = [r[0] for r in connection.execute(
            f"SELECT DISTINCT {client} FROM requests WHERE {where} AND {client} IS NOT NULL", args)]
        profiles = [r[0] for r in connection.execute(
            f"SELECT DISTINCT profile FROM requests WHERE {where} AND profile IS NOT NULL", args)]
        sessions = [] if "session" not in present else [r[0] for r in connection.execute(
            f"SELECT session FROM requests WHERE {where} AND session IS NOT NULL GROUP BY session "
            "ORDER BY MAX(id) DESC LIMIT ?", [*args, sessions_limit])]
    finally:
        connection.close()
    return FilterChoices(oldest, sorted(map(str, clients)), sorted(map(str, profiles)),
                         list(map(str, sessions)))


__all__ = ["COLUMNS", "SessionSummary", "Tally", "TrendPoint", "UsageFilter", "hit_rate_trend",
           "iter_rows", "iter_session_summaries", "iter_values", "query", "requests_page",
           "session_summaries", "summarize", "summary"]
