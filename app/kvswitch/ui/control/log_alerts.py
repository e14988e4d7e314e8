"""Tell the user, in the tray, when the followed server keeps losing the cache inside a conversation.

One low request proves little (a new conversation, a compaction); ``requests`` in a row that reuse less
than ``threshold`` of their prompt do. Cold and shared-prefix requests (``events_model``) are expected
and neither count nor break a run. The message names the likely cause from the log engine's own
diagnosis (``kvswitch.logs.diagnose``). At most one alert per ``THROTTLE_S``, so a broken setup does
not flood the desktop.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QCoreApplication

from kvswitch.ui.control import engine_text

if TYPE_CHECKING:
    from kvswitch.logs.model import CacheEvent


class ListedRequests(Protocol):
    """What the alert reads of the log panel's table (``CacheEventsModel``): its rows and their verdicts."""

    def rowCount(self) -> int: ...  # noqa: N802 - Qt's name

    def verdict_at(self, row: int) -> str: ...


THROTTLE_S = 60.0
#: the diagnosis looks at this many of the latest requests
RECENT = 50


class ReuseAlerts:
    """Fed the requests the panel lists (with their display verdicts); returns an alert text or None."""

    def __init__(self, threshold: float = 0.5, requests: int = 3,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.threshold = threshold
        self.requests = requests
        self.enabled = True
        self._clock = clock
        self._run = 0
        self._last_alert: float | None = None
        self._recent: deque[CacheEvent] = deque(maxlen=RECENT)

    def reset(self) -> None:
        self._run = 0
        self._recent.clear()

    def feed_listed(self, events: list[CacheEvent], model: ListedRequests) -> str | None:
        """Feed requests just added to ``model`` (its last rows), with the verdicts it shows for them."""
        first = model.rowCount() - len(events)
        alert = None
        for offset, event in enumerate(events):
            row = first + offset
            alert = self.feed(event, model.verdict_at(row) if row >= 0 else event.verdict) or alert
        return alert

    def feed(self, event: CacheEvent, shown_verdict: str) -> str | None:
        self._recent.append(event)
        if shown_verdict in ("cold", "shared_prefix"):
            return None
        if event.reuse_ratio >= self.threshold:
            self._run = 0
            return None
        self._run += 1
        if not self.enabled or self._run < self.requests:
            return None
        now = self._clock()
        if self._last_alert is not None and now - self._last_alert < THROTTLE_S:
            return None
        self._last_alert = now
        self._run = 0
        return self._message()

    def _message(self) -> str:
        from kvswitch.logs.diagnose import diagnose  # noqa: PLC0415 - loaded with the first alert

        translate = QCoreApplication.translate
        text = translate("ReuseAlerts", "The last %1 requests reused less than %2 % of their prompt.")
        text = text.replace("%1", str(self.requests)).replace("%2", f"{self.threshold * 100:.0f}")
        found = diagnose(list(self._recent))
        if found is None:
            return text + " " + translate("ReuseAlerts", "Open the Cache log or run Verify to see why.")
        cause = translate("ReuseAlerts", "Likely cause: %1")
        cause = cause.replace("%1", engine_text.translate(found.message))
        if found.fix_env:
            fix = ", ".join(f"{k}={v}" for k, v in found.fix_env.items())
            cause += " " + translate("ReuseAlerts", "Fix: add %1 to the profile's env.").replace("%1", fix)
        return f"{text} {cause}"
