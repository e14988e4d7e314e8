"""What a server said, outside its answers, about re-processing a prompt: the ``server`` reason.

A local server may say in its log that it threw its cache away itself, for instance "forcing full
prompt re-processing due to lack of cache data (likely due to SWA or hybrid/recurrent memory ...)" on
a sliding-window or recurrent model that has no checkpoint to roll back to. Its answer carries no such
word, so the live cache record would call that request ``evicted`` or ``unknown``. When the profile
follows the server's log, whatever reads that log (``kvswitch.commands.server_notes``, above both the
log engine and the gateway) hands such lines here, and the record of a request that was re-processed
while one was said names the server's own words.

A note belongs to the request it was read during (from the request's arrival to its judgement): the
line is printed as the server starts on the prompt, before the first token. Each note is claimed by one
request at most. Bounded: the newest ``PER_PROFILE`` notes of each followed profile.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from kvswitch.core.redact import mask_text
from kvswitch.core.text import printable

log = logging.getLogger("kvswitch.gateway.truth.server_notes")

#: notes kept per profile (a request claims the ones read while it ran; older ones are of no use)
PER_PROFILE = 16
#: the longest stretch of the server's words kept
NOTE_CHARS = 300


@dataclass(frozen=True, slots=True)
class ServerNote:
    """One line in which the server says it re-processed (or will re-process) a prompt whole."""

    #: ``time.monotonic()`` when the line was read
    read_at: float
    #: the line's words, masked and on one line
    text: str
    #: what the log engine calls it ("full re-processing forced: SWA or hybrid/recurrent model ...")
    meaning: str | None = None
    #: what the server's own module says avoids it (``servers.<kind>``: its switches)
    advice: str | None = None


class ServerNotes:
    """Notes per profile, handed in from a log reader's thread and claimed by the gateway's records.

    ``catch_up`` (set by the reader) reads what the log has now, so a note printed just before a short
    request ended is not missed for the reader's polling interval; ``on_close`` stops the reader (the
    gateway's ``control`` calls ``close`` when the gateway stops, or fails to start).
    """

    def __init__(self, catch_up: Callable[[str], None] | None = None,
                 on_close: Callable[[], None] | None = None, clock: Callable[[], float] = time.monotonic):
        self.catch_up = catch_up
        self.on_close = on_close
        self.clock = clock
        self._notes: dict[str, deque[ServerNote]] = {}
        self._followed: frozenset[str] = frozenset()
        self._lock = threading.Lock()

    def close(self) -> None:
        """Stop the reader (once; later calls do nothing)."""
        on_close, self.on_close = self.on_close, None
        if on_close is not None:
            on_close()

    def follow(self, profiles: set[str] | frozenset[str]) -> None:
        """The profiles whose server log is read now (the others' notes are dropped)."""
        with self._lock:
            self._followed = frozenset(profiles)
            for name in [name for name in self._notes if name not in self._followed]:
                del self._notes[name]

    def follows(self, profile: str | None) -> bool:
        return profile is not None and profile in self._followed

    def add(self, profile: str, text: str, meaning: str | None = None, advice: str | None = None) -> None:
        words = mask_text(printable(text.strip(), multiline=False))[:NOTE_CHARS]
        note = ServerNote(self.clock(), words, meaning, advice)
        with self._lock:
            if profile in self._followed:
                self._notes.setdefault(profile, deque(maxlen=PER_PROFILE)).append(note)

    def claim(self, profile: str | None, since: float) -> ServerNote | None:
        """The first unclaimed note of ``profile`` read at or after ``since`` (a ``time.monotonic()``
        value: when the request arrived), taken so that no other request gets it; None if the server
        said nothing of the kind meanwhile."""
        if not self.follows(profile):
            return None
        assert profile is not None
        if self.catch_up is not None:
            try:
                self.catch_up(profile)
            except Exception:  # noqa: BLE001 - a log that cannot be read now: what was read still counts
                log.debug("server notes: catching up on %s failed", profile, exc_info=True)
        with self._lock:
            notes = self._notes.get(profile)
            for note in notes or ():
                if note.read_at >= since:
                    notes.remove(note)  # type: ignore[union-attr]
                    return note
        return None
