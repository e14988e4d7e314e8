"""The gateway's ear on the servers' logs: for every profile that follows its server's log (a file, a
directory of dated logs or a systemd unit), a thread reads the new lines and hands the ones in which the
server says it threw its cache away (the log engine's reasons of a miss, such as "forcing full prompt
re-processing") to ``gateway.server_notes``, where the live cache record finds them.

It lives here, above both the log engine and the gateway, because neither may import the other. A
profile whose log is a ``command`` is skipped: that source starts the server itself, and the gateway
must never start a second one. Reading starts at the end of each log (what was said before the gateway
started is about requests it never saw). Any failure is logged once and leaves that profile
without notes until it names another log; the requests it serves are never touched.
"""

from __future__ import annotations

import contextlib
import logging
import threading
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
        self._lock = threading.Lock()
        self._stop = threading.Event()
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
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        with self._lock:
            for followed in self._followed.values():
                _close(followed.reader)
            self._followed.clear()

    # -- reading ------------------------------------------------------------------------------------
    def catch_up(self, profile: str) -> None:
        """Read what ``profile``'s log has now (the gateway asks before it judges a re-processed request)."""
        with self._lock:
            followed = self._followed.get(profile)
            if followed is not None:
                self._read(profile, followed)

    def _run(self) -> None:
        waited = 0.0
        while not self._stop.wait(self.poll_s):
            waited += self.poll_s
            if waited >= PROFILES_S:
                waited = 0.0
                self._refresh()
            with self._lock:
                for name, followed in list(self._followed.items()):
                    self._read(name, followed)

    def _read(self, profile: str, followed: _Followed) -> None:
        from kvswitch.logs.classify import forced_reprocessing  # noqa: PLC0415 - the log engine, once reading
        from kvswitch.logs.text import clean_line  # noqa: PLC0415

        try:
            for line in followed.reader.read_lines():
                text = clean_line(line)
                meaning = forced_reprocessing(text, followed.parsers)
                if meaning is not None:
                    self.notes.add(profile, text, meaning, followed.advice)
        except Exception as exc:  # noqa: BLE001 - a log that cannot be read costs its notes, nothing else
            self._give_up(profile, followed.source, exc)

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
