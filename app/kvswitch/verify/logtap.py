"""The server log's view of the probe's requests, through the log engine when it is available.

Two ways in: the GUI already follows the log and passes ``log_events`` (the events seen so far); the
CLI has only the profile, so the tap opens the profile's log source (file, dated directory, journald
unit) at its end before the cold request and feeds what arrives afterwards to a fresh ``LogAnalyzer``.
A ``command`` source is never started here: that would launch a server. The log is corroborating
evidence only: a missing log engine, file or permission just yields no reading.
"""

from __future__ import annotations

import contextlib
import importlib
import time
from collections.abc import Callable, Sequence
from typing import Any

from kvswitch.core.models import Profile
from kvswitch.verify.evidence import Reading

MAX_POLLS = 256  # read budget per check (each poll reads a bounded chunk)


def _event_numbers(event: Any) -> tuple[int, int] | None:
    cached = getattr(event, "cached_tokens", None)
    prompt = getattr(event, "prompt_tokens", None)
    if isinstance(event, dict):
        cached, prompt = event.get("cached_tokens"), event.get("prompt_tokens")
    if isinstance(cached, int) and isinstance(prompt, int):
        return cached, prompt
    return None


class LogTap:
    """Collects the cache events the server logged between ``start()`` and ``events()``; ``close()`` after."""

    def __init__(self, profile: Profile, log_events: Callable[[], Sequence[Any]] | None = None):
        self.profile = profile
        self.log_events = log_events
        self._baseline = 0
        self._reader: Any = None
        self._analyzer: Any = None
        self._found: list[Any] = []
        self._line_no = 0

    def start(self) -> None:
        if self.log_events is not None:
            with contextlib.suppress(Exception):  # the caller's callback must never break verify
                self._baseline = len(self.log_events())
            return
        source = self.profile.log
        if source is None or source.kind == "command":
            return
        try:
            logs = importlib.import_module("kvswitch.logs")
            sources = importlib.import_module("kvswitch.logs.sources")
            self._reader = sources.open_source(source, start_at_end=True, tail_lines=0)
            self._analyzer = logs.LogAnalyzer(self.profile.kind.value)
            self._drain()  # opens the source at its current end; nothing before the probe counts
            self._found.clear()
        except Exception:  # noqa: BLE001 - no log engine or an unreadable source: no log evidence
            self.close()

    def close(self) -> None:
        if self._reader is not None:
            with contextlib.suppress(Exception):
                self._reader.close()
        self._reader = None

    def _drain(self) -> None:
        for _ in range(MAX_POLLS):
            lines = self._reader.read_lines()
            if not lines:
                return
            for line in lines:
                self._line_no += 1
                self._found.extend(self._analyzer.feed(line, self._line_no).events)

    def events(self, expected: int = 2, wait: float = 1.0) -> list[Any]:
        """New events since ``start()``; waits up to ``wait`` s for the server to finish logging."""
        if self.log_events is None and self._reader is None:
            return []
        deadline = time.monotonic() + wait
        while True:
            found = self._new_events()
            if len(found) >= expected or time.monotonic() >= deadline:
                return found
            time.sleep(0.05)

    def _new_events(self) -> list[Any]:
        if self.log_events is not None:
            try:
                events = list(self.log_events())
            except Exception:  # noqa: BLE001 - a broken callback means no log evidence, not a failed verify
                return []
            return events[self._baseline :] if len(events) >= self._baseline else events
        try:
            self._drain()
        except Exception:  # noqa: BLE001
            return list(self._found)
        return list(self._found)

    def reading(self, events: Sequence[Any], prompt_hint: int | None) -> Reading | None:
        """The event of the warm request: the last one logged (of about the probe's size, if known)."""
        numbered = [(e, n) for e in events if (n := _event_numbers(e)) is not None]
        if not numbered:
            return None
        if prompt_hint:
            # other clients may share the server: keep requests of about the probe's size, take the last
            similar = [item for item in numbered if abs(item[1][1] - prompt_hint) <= 0.1 * prompt_hint]
            numbered = similar or numbered
        cached, prompt = numbered[-1][1]
        return Reading("log", cached, prompt)
