"""The gateway's ear on the servers' logs: for every profile that follows its server's log (a file, a
directory of dated logs or a systemd unit), a thread reads the new lines and hands the ones in which the
server says it threw its cache away (the log engine's reasons of a miss, such as "forcing full prompt
re-processing") to ``gateway.server_notes``, where the live cache record finds them.

It lives here, above both the log engine and the gateway, because neither may import the other. A
profile whose log is a ``command`` is skipped: that source starts the server itself, and the gateway
must never start a second one. Reading starts at the end of each log (what was said before the gateway
started is about requests it never saw). Any failure is logged once and leaves that profile
without notes until it names another log; the requests it serves are never touched.

Only the thread reads (issue 39). The gateway's judgement asks for a pass (``catch_up``) and waits for
it at most ``CATCH_UP_WAIT_S``; it never takes a lock the thread holds while opening or reading, so a
log that stalls (a FIFO put in its place blocked ``open()`` for good, and with it every request and the
signals that stop the gateway) costs that log's notes only. A file that is no regular file is never
opened (``logs.sources``). A pass reads small slices, handing the GIL back in between, and a flood
(``PASS_BYTES`` or ``FLOOD_LINES`` in one pass) is skipped to the log's end: a 57 MB burst of short
lines, read and classified on the event loop, stalled requests ~5 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kvswitch.core.paths import AppPaths
from kvswitch.gateway.truth.server_notes import ServerNotes

if TYPE_CHECKING:
    from kvswitch.core.models import LogSource, Profile
    from kvswitch.core.store import ProfileStore
    from kvswitch.logs.parsers import ParseFn
    from kvswitch.logs.sources import LogReader

log = logging.getLogger("kvswitch.gateway.truth.server_notes")

#: how often the logs are read (a note also comes in at once when a request's judgement asks for it)
POLL_S = 0.1
#: how often the profiles are looked at again (a profile given a log, or its log moved)
PROFILES_S = 2.0
#: the log source kinds read here (a ``command`` source would start the server)
FOLLOWED_KINDS = ("file", "directory", "journald")
#: how long the gateway's event loop waits for the pass it asked for (a pass over quiet logs takes
#: well under a millisecond); a reader in the middle of a pass is not waited for: its notes come in at
#: its next pass
CATCH_UP_WAIT_S = 0.02
#: the same wait for a caller that is not an event loop (a test, a script): it may wait for the pass
CATCH_UP_WAIT_OFF_LOOP_S = 2.0
#: one read of a file log: split and decoded in ~2 ms for 32 KB of the shortest lines, the GIL handed
#: back to the gateway's event loop between two reads
SLICE_BYTES = 32 << 10
#: most bytes one pass reads of a log; a pass that reads them all, or more than ``FLOOD_LINES`` lines,
#: met a flood (a real server at ``-lv 4`` writes far less between two passes)
PASS_BYTES = 4 << 20
#: lines looked at in a flood (the newest; about 7 µs each, in chunks of ``CHUNK_LINES``); the rest of
#: the flood is skipped, and the thread rests ``poll_s`` before its next pass
FLOOD_LINES = 20_000
CHUNK_LINES = 200
#: how long ``stop`` waits for the thread to end its pass
STOP_WAIT_S = 2.0


@dataclass
class _Followed:
    source: LogSource
    kind: str
    reader: LogReader
    parsers: list[ParseFn]
    #: what the server's module says avoids a forced re-processing (its own switches)
    advice: str | None


class ServerLogNotes:
    """Follows the profiles' server logs on one daemon thread; ``notes`` is what the gateway reads."""

    def __init__(self, paths: AppPaths, poll_s: float = POLL_S):
        self.paths = paths
        self.poll_s = poll_s
        self.notes = ServerNotes(catch_up=self.catch_up, on_close=self.stop)
        self._followed: dict[str, _Followed] = {}
        #: ``_followed`` and ``_failed``: the thread's, while it opens and reads (never the event loop's)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._wake = threading.Event()
        #: passes begun and ended, for ``catch_up`` to wait for one begun after it asked
        self._passes = threading.Condition()
        self._begun = self._ended = 0
        #: the last status said of each profile's log (each said once)
        self._said: dict[str, str] = {}
        #: profiles whose log flooded a pass (said once)
        self._flooded: set[str] = set()
        #: the last pass was cut short by its time budget: the thread rests before the next one
        self._flooding = False
        self._thread: threading.Thread | None = None
        self._store: ProfileStore | None = None
        #: the log each profile's reading failed on: not opened again until the profile names another
        self._failed: dict[str, LogSource] = {}

    # -- lifetime -----------------------------------------------------------------------------------
    def start(self) -> ServerLogNotes:
        self._refresh()
        self._thread = threading.Thread(target=self._run, name="kvswitch-server-notes", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread; the readers are closed by it at its end (or here, when it is not running),
        so a reader stuck in a read never holds the gateway's stop."""
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread.is_alive():
            thread.join(timeout=STOP_WAIT_S)
            if thread.is_alive():
                log.warning("server notes: the log reader did not stop within %.0f s; left behind",
                            STOP_WAIT_S)
                return
        if self._lock.acquire(timeout=STOP_WAIT_S):
            try:
                self._close_all()
            finally:
                self._lock.release()

    def _close_all(self) -> None:
        for followed in self._followed.values():
            _close(followed.reader)
        self._followed.clear()

    # -- reading ------------------------------------------------------------------------------------
    def catch_up(self, profile: str) -> None:
        """Have the thread read what the logs have now (the gateway asks before it judges a re-processed
        request), waiting at most ``CATCH_UP_WAIT_S`` on an event loop: never reading here, never
        waiting for a lock the thread holds while it reads."""
        thread = self._thread
        if thread is None or not thread.is_alive():
            return
        try:
            asyncio.get_running_loop()
            wait = CATCH_UP_WAIT_S
        except RuntimeError:  # not on an event loop
            wait = CATCH_UP_WAIT_OFF_LOOP_S
        with self._passes:
            busy = self._begun > self._ended or self._flooding  # mid-pass or resting: not waited for
            wanted = self._begun + 1  # a pass begun after this call: it sees what the log has now
            self._wake.set()
            if not busy or wait > CATCH_UP_WAIT_S:
                self._passes.wait_for(lambda: self._ended >= wanted or self._stop.is_set(), timeout=wait)

    def _run(self) -> None:
        waited = 0.0
        try:
            while not self._stop.is_set():
                started = time.monotonic()
                if self._flooding:  # resting, asked or not (``catch_up`` does not wait meanwhile)
                    self._stop.wait(self.poll_s)
                else:
                    self._wake.wait(self.poll_s)
                self._wake.clear()
                if self._stop.is_set():
                    break
                with self._passes:
                    self._begun += 1
                    self._flooding = False
                waited += time.monotonic() - started
                if waited >= PROFILES_S:
                    waited = 0.0
                    self._refresh()
                with self._lock:
                    for name, followed in list(self._followed.items()):
                        if self._stop.is_set():
                            break
                        self._read(name, followed)
                with self._passes:
                    self._ended = self._begun
                    self._passes.notify_all()
        finally:
            with self._lock:
                self._close_all()
            with self._passes:
                self._passes.notify_all()

    def _read(self, profile: str, followed: _Followed) -> None:
        """One pass over ``profile``'s log: reads of ``SLICE_BYTES`` until it has no more or a flood is
        met (``PASS_BYTES``, ``FLOOD_LINES``), then the lines read looked at, ``CHUNK_LINES`` at a
        time with the GIL handed back in between. A flood is skipped: its newest ``FLOOD_LINES``
        lines are looked at, the reader starts again at the log's end, and the thread rests."""
        from kvswitch.logs.classify import forced_reprocessing  # noqa: PLC0415 - the log engine, once reading
        from kvswitch.logs.text import clean_line  # noqa: PLC0415

        try:
            lines: list[str] = []
            read_count = 0
            for _ in range(PASS_BYTES // SLICE_BYTES):
                read = followed.reader.read_lines()
                read_count += len(read)
                lines.extend(read)
                del lines[:-FLOOD_LINES]  # the newest kept
                if not read or self._stop.is_set() or read_count > FLOOD_LINES:
                    break
                time.sleep(0)  # hand the GIL to the event loop between two slices
            else:
                read_count = FLOOD_LINES + 1  # read ``PASS_BYTES`` and there is more: a flood too
            self._tell(profile, followed.reader.status)
            if read_count > FLOOD_LINES:
                self._flooding = True
                self._skip_flood(profile, followed)
            for start in range(0, len(lines), CHUNK_LINES):
                for line in lines[start:start + CHUNK_LINES]:
                    text = clean_line(line)
                    meaning = forced_reprocessing(text, followed.parsers)
                    if meaning is not None:
                        self.notes.add(profile, text, meaning, followed.advice)
                time.sleep(0)
        except Exception as exc:  # noqa: BLE001 - a log that cannot be read costs its notes, nothing else
            self._give_up(profile, followed.source, exc)

    def _skip_flood(self, profile: str, followed: _Followed) -> None:
        """Start ``profile``'s file log again at its end: what a flood wrote meanwhile is about requests
        long gone (read behind, a note would be claimed by a request it is not about)."""
        from kvswitch.logs.sources import open_source  # noqa: PLC0415

        if not hasattr(followed.reader, "read_budget"):  # a journal: read on, as far as it goes
            return
        if profile not in self._flooded:
            self._flooded.add(profile)
            log.warning("server notes: the log of profile %s floods; what it writes beyond %d lines or "
                        "%d MB a pass is skipped", profile, FLOOD_LINES, PASS_BYTES >> 20)
        _close(followed.reader)
        followed.reader = open_source(followed.source, start_at_end=True, tail_lines=0)
        followed.reader.read_budget = SLICE_BYTES  # type: ignore[attr-defined]

    def _tell(self, profile: str, status: str) -> None:
        """Say once what is wrong with a profile's log (a FIFO, a device); fine states quietly."""
        if self._said.get(profile) == status:
            return
        self._said[profile] = status
        if status.startswith(("not a", "permission denied", "cannot")):
            log.warning("server notes: the log of profile %s: %s", profile, status)

    # -- the profiles -------------------------------------------------------------------------------
    def _refresh(self) -> None:
        try:
            profiles = self._changed_profiles()
            if profiles is None:
                return
            wanted = {p.name: (p.log, p.kind.value) for p in profiles if _readable(p)}
        except Exception as exc:  # noqa: BLE001 - a broken store: the gateway says so itself
            log.debug("server notes: profiles not read (%s)", exc)
            return
        from kvswitch.logs.parsers import parsers_for  # noqa: PLC0415
        from kvswitch.logs.sources import open_source  # noqa: PLC0415

        with self._lock:
            for name in [n for n, f in self._followed.items() if wanted.get(n) != (f.source, f.kind)]:
                _close(self._followed.pop(name).reader)
            for name, (source, kind) in wanted.items():
                if name in self._followed or self._failed.get(name) == source or source is None:
                    continue
                try:
                    reader = open_source(source, start_at_end=True, tail_lines=0)
                except Exception as exc:  # noqa: BLE001
                    self._give_up(name, source, exc)
                    continue
                if hasattr(reader, "read_budget"):  # a file or directory follower
                    reader.read_budget = SLICE_BYTES
                self._followed[name] = _Followed(source, kind, reader, parsers_for(kind), _advice(kind))
            self.notes.follow(set(self._followed))

    def _changed_profiles(self) -> list[Profile] | None:
        """The profiles when their file changed since the last look (the first look included)."""
        from kvswitch.core.store import ProfileStore  # noqa: PLC0415 - pydantic, only with the gateway

        if self._store is None:
            self._store = ProfileStore(self.paths)
        elif not self._store.refresh():
            return None
        return self._store.profiles()

    def _give_up(self, profile: str, source: LogSource, exc: BaseException) -> None:
        if self._failed.get(profile) != source:
            log.warning("server notes: the log of profile %s is not read (%s: %s)", profile,
                        type(exc).__name__, exc)
        self._failed[profile] = source
        followed = self._followed.pop(profile, None)
        if followed is not None:
            _close(followed.reader)
        self.notes.follow(set(self._followed))


def _advice(kind: str) -> str | None:
    from kvswitch import servers  # noqa: PLC0415

    server = servers.find(kind)
    return server.advice.forced_reprocess if server is not None else None


def _readable(profile: Profile) -> bool:
    return profile.log is not None and profile.log.kind in FOLLOWED_KINDS


def _close(reader: LogReader) -> None:
    with contextlib.suppress(Exception):  # closing a reader that already failed
        reader.close()


def started(paths: AppPaths) -> ServerNotes:
    """The notes for a gateway (``make_server(notes=...)``), their reader running; ``close`` stops it."""
    return ServerLogNotes(paths).start().notes
