"""The active profile's prompt-cache state as the tray and the window show it (no Qt: cheap to import)."""

from __future__ import annotations

import time
from collections.abc import Callable
from enum import StrEnum


class CacheState(StrEnum):
    UNKNOWN = "unknown"
    HIT = "hit"
    PARTIAL = "partial"
    MISS = "miss"


def verify_state(verdict: object, replay_error: str | None = None) -> CacheState:
    """One judgement of a verify run for its card and the tray alike: the server's verdict, except that
    a run whose Claude Code-shaped replay did not finish (it timed out, or the server refused it) is no
    clean success: a hit is then told as partial (amber), never green beside a failed check."""
    text = str(getattr(verdict, "value", verdict) or "").upper().rsplit(".", 1)[-1]
    state = {"HIT": CacheState.HIT, "PARTIAL": CacheState.PARTIAL, "MISS": CacheState.MISS}.get(
        text, CacheState.UNKNOWN)
    return CacheState.PARTIAL if replay_error and state == CacheState.HIT else state


class VerifyTraffic:
    """Which of the requests the server log reports are a verify's own, so they never count as the user's.

    While a verify runs, every request the log reports is its own; when it ends, it says how many it made
    the server process (``VerifyResult.requests_sent``, one it gave up waiting for included: the server
    b11434 was seen finishing such a request 25 s later), and that many, less those already seen, are
    still owed to it — for ``grace_s`` at most, as a server may cancel an abandoned request instead (it
    then reports none), and a user's request after that is the user's.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.running = False
        self.seen = 0
        self.owed = 0
        self._clock = clock
        self._owed_until = 0.0

    def started(self) -> None:
        self.running, self.seen, self.owed = True, 0, 0

    def finished(self, sent: int | None, grace_s: float = 30.0) -> None:
        self.running = False
        self.owed = max(0, sent - self.seen) if sent is not None else 0
        self.seen = 0
        self._owed_until = self._clock() + grace_s

    def users(self, batch: list[tuple[str, int]]) -> list[str]:
        """The verdicts of a batch of ``(verdict, requests)`` that are the user's, oldest first."""
        theirs: list[str] = []
        if self.owed and self._clock() > self._owed_until:
            self.owed = 0
        for verdict, count in batch:
            if self.running:
                self.seen += count
                continue
            taken = min(self.owed, count)
            self.owed -= taken
            if count > taken:
                theirs.append(verdict)
        return theirs
