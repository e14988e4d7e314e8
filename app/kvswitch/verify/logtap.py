"""The server log's view of the probe's requests, through the log engine when it is available.

Two ways in: the GUI already follows the log and passes ``log_events`` (the events seen so far); the
CLI has only the profile, so the tap remembers the log file's size before the cold request and feeds
what was appended afterwards to a fresh ``LogAnalyzer``. Either way the log is corroborating
evidence: it is never required, and a missing log engine or file just yields no reading.
"""

from __future__ import annotations

import contextlib
import importlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kvswitch.core.models import Profile
from kvswitch.verify.evidence import Reading


def _event_numbers(event: Any) -> tuple[int, int] | None:
    cached = getattr(event, "cached_tokens", None)
    prompt = getattr(event, "prompt_tokens", None)
    if isinstance(event, dict):
        cached, prompt = event.get("cached_tokens"), event.get("prompt_tokens")
    if isinstance(cached, int) and isinstance(prompt, int):
        return cached, prompt
    return None


class LogTap:
    """Collects the cache events the server logged between ``start()`` and ``events()``."""

    def __init__(self, profile: Profile, log_events: Callable[[], Sequence[Any]] | None = None):
        self.profile = profile
        self.log_events = log_events
        self._baseline = 0
        self._offset: int | None = None
        self._path: Path | None = None
        if log_events is None and profile.log is not None and profile.log.kind == "file" and profile.log.path:
            self._path = Path(profile.log.path).expanduser()

    def start(self) -> None:
        if self.log_events is not None:
            with contextlib.suppress(Exception):  # the caller's callback must never break verify
                self._baseline = len(self.log_events())
        elif self._path is not None:
            with contextlib.suppress(OSError):
                self._offset = self._path.stat().st_size

    def events(self, expected: int = 2, wait: float = 1.0) -> list[Any]:
        """New events since ``start()``; waits up to ``wait`` s for the server to finish logging."""
        if self.log_events is None and (self._path is None or self._offset is None):
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
        if self._path is None or self._offset is None:
            return []
        try:
            analyzer_mod = importlib.import_module("kvswitch.logs")
        except ImportError:
            return []
        try:
            with self._path.open("rb") as handle:
                handle.seek(self._offset)
                data = handle.read(16 << 20)
        except OSError:
            return []
        analyzer = analyzer_mod.LogAnalyzer(self.profile.kind.value)
        found: list[Any] = []
        for number, raw in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
            found.extend(analyzer.feed(raw, number).events)
        found.extend(analyzer.flush())
        return found

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
