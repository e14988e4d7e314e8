"""The gateway's usage writer: one thread, a bounded queue, and failures that are counted, not raised.

The answer must never depend on the bookkeeping (issue 28): a full disk, a database another program
holds locked, a file gone bad under the gateway, or a row with absurd values must not cut, delay or
fail a client's answer. So the event loop only ever calls ``submit`` (``put_nowait``: it never blocks;
when the queue is full the row is dropped and counted), and one thread writes the rows in batches.
A failure is logged once per run of failures (the app log, ``kvswitch.gateway.usage``), counted in
``counters()`` (the gateway's status JSON: ``usage_errors``, ``usage_dropped``), and the next success
says how many rows were lost. The file is opened at start; one that cannot serve is set aside
(``schema.set_aside``) and a new one started, and ``notice`` says so for the user.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import sqlite3
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from kvswitch.usage import rollup
from kvswitch.usage.retention import Retention, apply_retention
from kvswitch.usage.schema import (
    COLUMNS,
    UsageFileError,
    UsageRow,
    clean_values,
    connect,
    ensure_indexes,
    set_aside,
)

log = logging.getLogger("kvswitch.gateway.usage")

_INSERT = f"INSERT INTO requests ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
_STOP = object()
#: rows written in one transaction at most (a burst is one commit, not hundreds)
_BATCH = 500
#: how often retention runs while the gateway is up (it also runs once at start)
_RETENTION_EVERY_S = 6 * 3600


@dataclass
class _Pending:
    row: UsageRow
    done: Future[bool]


class UsageStore:
    """Appends rows on one background thread; ``close()`` writes what was handed over, then stops.

    ``busy_timeout``: how long a write waits for another connection's lock before the batch counts as
    failed. ``capacity``: rows waiting at most; more are dropped (and counted) rather than held.
    """

    def __init__(self, db: Path, *, retention: Retention | None = None, busy_timeout: float = 5.0,
                 capacity: int = 10_000):
        self.db = db
        self.busy_timeout = busy_timeout
        self.retention = retention or Retention()
        #: what the user must be told about the file (set aside, or usage not recorded), else None
        self.notice: str | None = None
        self.written = self.errors = self.dropped = 0
        self._failing: str | None = None  # the error of the current run of failures
        self._lost_in_run = 0
        self._writing_since: float | None = None
        self._queue: queue.Queue[_Pending | object] = queue.Queue(maxsize=capacity)
        self._open_later = False
        self._connection = self._open()
        self._next_retention = 0.0
        self._thread = threading.Thread(target=self._run, name="kvswitch-usage", daemon=True)
        self._thread.start()

    # -- the event loop's side (never blocks) --------------------------------------------------------
    def submit(self, row: UsageRow) -> Future[bool] | None:
        """Hand ``row`` to the writer; a future that becomes True once it is stored (False: not stored),
        or ``None`` when the queue was full and the row was dropped."""
        done: Future[bool] = Future()
        try:
            self._queue.put_nowait(_Pending(row, done))
        except queue.Full:
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 1000 == 0:
                log.warning("usage rows dropped: %d so far (the writer is behind; %s)", self.dropped,
                            self._failing or "the disk is slow")
            return None
        return done

    def healthy(self, within: float) -> bool:
        """True while the writer keeps up: its last write succeeded and none has run past ``within``
        seconds. A caller may then wait that long for its row; otherwise it should not wait at all."""
        if self._connection is None or self._failing is not None:
            return False  # (opening a locked file later counts as not keeping up)
        since = self._writing_since
        return since is None or time.monotonic() - since < within

    def add(self, row: UsageRow) -> bool:
        """Store ``row`` and wait for it (for callers off the event loop); True when it was stored."""
        done = self.submit(row)
        return done is not None and done.result(timeout=self.busy_timeout + 30)

    def counters(self) -> dict[str, int | str | None]:
        """For the gateway's status: rows stored, failed and dropped since start, and any notice."""
        return {"usage_written": self.written, "usage_errors": self.errors, "usage_dropped": self.dropped,
                "usage_waiting": self._queue.qsize(), "usage_notice": self.notice}

    def close(self, timeout: float = 15.0) -> None:
        """Write the rows handed over (for at most ``timeout`` seconds), then close the file."""
        try:
            self._queue.put(_STOP, timeout=timeout)
        except queue.Full:
            log.warning("usage writer still behind at exit: %d rows not stored", self._queue.qsize())
            return
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.warning("usage writer did not finish within %.0f s: %d rows not stored", timeout,
                        self._queue.qsize())
            return
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    # -- opening -------------------------------------------------------------------------------------
    def _open(self) -> sqlite3.Connection | None:
        """The file, or a new one in place of a broken file (kept as ``…broken-<time>``), or None."""
        try:
            return connect(self.db, self.busy_timeout)
        except UsageFileError as broken:
            first = broken
        if first.locked:  # another program's lock on a good file: the writer opens it once it is free
            self._open_later = True
            log.warning("%s is locked by another program; rows wait for it (or are counted as lost)", self.db)
            return None
        try:
            kept = set_aside(self.db)
        except OSError as exc:
            self._tell(f"usage is not recorded: {first.db} {first.why}, and it cannot be set aside "
                       f"({exc.strerror or exc}); move it away and restart the gateway")
            return None
        try:
            connection = connect(self.db, self.busy_timeout)
        except UsageFileError as exc:
            self._tell(f"usage is not recorded: {first.db} {first.why}; it was kept as {kept.name}, but a "
                       f"new one cannot be started ({exc.why})")
            return None
        self._tell(f"{first.db} {first.why}; it was kept as {kept} and a new usage database was started")
        return connection

    def _tell(self, message: str) -> None:
        self.notice = message
        log.warning("%s", message)

    # -- the writer thread ---------------------------------------------------------------------------
    def _run(self) -> None:
        if self._connection is not None:
            try:
                ensure_indexes(self._connection)
            except sqlite3.Error as exc:  # a lock or a full disk: the summary is slower, nothing else
                with contextlib.suppress(sqlite3.Error):
                    self._connection.rollback()
                log.warning("usage totals index or rollup not built (%s); the summary scans the table",
                            _described(exc))
        self._maybe_apply_retention()  # once at start, off the gateway's start-up path
        while True:
            batch = [self._queue.get()]
            while len(batch) < _BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            pending = [item for item in batch if isinstance(item, _Pending)]
            if pending:
                self._write(pending)
            self._maybe_apply_retention()
            if len(pending) < len(batch):
                return

    def _write(self, pending: list[_Pending]) -> None:
        if self._connection is None and self._open_later:
            self._open_later = False
            self._connection = self._open()
        connection = self._connection
        if connection is None:
            self._failed(pending, self.notice or "usage is not recorded")
            return
        self._writing_since = time.monotonic()
        try:
            try:
                values = [clean_values(item.row) for item in pending]
                connection.executemany(_INSERT, values)
                _roll_up(connection, values)
                connection.commit()
            except sqlite3.Error as exc:
                with contextlib.suppress(sqlite3.Error):
                    connection.rollback()
                if _damaged(exc):
                    self._reopen_damaged(exc)
                self._failed(pending, _described(exc))
                return
        finally:
            self._writing_since = None
        self.written += len(pending)
        if self._failing is not None:
            log.warning("usage rows are stored again (%d were lost: %s)", self._lost_in_run, self._failing)
            self._failing, self._lost_in_run = None, 0
        for item in pending:
            item.done.set_result(True)

    def _failed(self, pending: list[_Pending], why: str) -> None:
        self.errors += len(pending)
        self._lost_in_run += len(pending)
        if self._failing is None:
            row = pending[0].row
            log.warning("usage row not stored (%s): %s %s status %s; further failures are only counted "
                        "(gateway status: usage_errors)", why, row.profile, row.model, row.status)
            self._failing = why
        for item in pending:
            item.done.set_result(False)

    def _reopen_damaged(self, exc: sqlite3.Error) -> None:
        """The file went bad under the gateway: close it, set it aside, start a new one."""
        if self._connection is not None:
            with contextlib.suppress(sqlite3.Error):
                self._connection.close()
        log.warning("%s became unreadable (%s)", self.db, exc)
        self._connection = self._open()

    def _maybe_apply_retention(self) -> None:
        now = time.monotonic()
        if self._connection is None or now < self._next_retention:
            return
        self._next_retention = now + _RETENTION_EVERY_S
        try:
            moved = apply_retention(self._connection, self.retention, time.time())
        except sqlite3.Error as exc:
            with contextlib.suppress(sqlite3.Error):
                self._connection.rollback()
            log.warning("usage retention did not run (%s); it is tried again in 6 hours", _described(exc))
            return
        if moved:
            log.info("usage retention: %d request rows older than %d days rolled into daily summaries",
                     moved, self.retention.keep_requests_days)


def _roll_up(connection: sqlite3.Connection, values: list[tuple[object, ...]]) -> None:
    """Add the batch to the hourly rollup, in its transaction. A rollup that cannot take it (a sum past
    int64) is marked stale rather than failing the rows: readers then scan them, and it is rebuilt at
    the next open."""
    try:
        rollup.add(connection, values, len(values))
    except (OverflowError, sqlite3.IntegrityError, sqlite3.DataError) as exc:
        log.warning("usage rollup not updated (%s); the summary scans the rows until it is rebuilt", exc)
        rollup.forget(connection)
    except sqlite3.OperationalError as exc:
        if "overflow" not in str(exc):
            raise
        log.warning("usage rollup not updated (%s); the summary scans the rows until it is rebuilt", exc)
        rollup.forget(connection)


def _damaged(exc: sqlite3.Error) -> bool:
    text = str(exc)
    return "malformed" in text or "not a database" in text


def _described(exc: sqlite3.Error) -> str:
    text = str(exc)
    if "full" in text:
        return f"the disk is full: {text}"
    if "locked" in text or "busy" in text:
        return f"another program holds the database locked: {text}"
    return text
