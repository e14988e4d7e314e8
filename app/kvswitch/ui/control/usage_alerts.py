"""The low-reuse alert, fed from the gateway's usage rows instead of a server log.

A server log exists only for a local server; the gateway records every request with the upstream's own
token counts, so the same alert works for cloud vendors. The counting is ``ReuseAlerts``' (a run of
``requests`` below ``threshold``, at most one alert per ``THROTTLE_S``); a row too small for a vendor to
cache at all (under ``MIN_CACHEABLE`` prompt tokens) or one that failed counts as neither a hit nor a miss.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QCoreApplication

from kvswitch.ui.control.log_alerts import RECENT, ReuseAlerts

#: the smallest prompt cloud vendors cache (the Messages API: 1024 tokens); smaller ones prove nothing
MIN_CACHEABLE = 1024


@dataclass
class _RowPoint:
    """What ``ReuseAlerts.feed`` reads of a request."""

    reuse_ratio: float


class GatewayReuseAlerts(ReuseAlerts):
    """``feed_rows`` takes ``UsageRow``s oldest first and returns an alert text or None."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._profiles: deque[str] = deque(maxlen=RECENT)

    def feed_rows(self, rows: Iterable[Any]) -> str | None:
        alert = None
        for row in rows:
            prompt = row.input_tokens or 0
            if prompt < MIN_CACHEABLE or (row.status or 0) >= 400:
                continue
            self._profiles.append(str(row.profile or "?"))
            ratio = (row.cached_tokens or 0) / prompt
            alert = self.feed(_RowPoint(ratio), "hit" if ratio >= self.threshold else "miss") or alert  # type: ignore[arg-type]
        return alert

    def _message(self) -> str:
        """No log to diagnose: name the profiles the low requests went through and what to run."""
        translate = QCoreApplication.translate
        text = translate("GatewayReuseAlerts", "The last %1 requests through the gateway (%2) reused less "
                                               "than %3 % of their prompt.")
        names = ", ".join(dict.fromkeys(list(self._profiles)[-self.requests:]))
        text = text.replace("%1", str(self.requests)).replace("%2", names)
        text = text.replace("%3", f"{self.threshold * 100:.0f}")
        return text + " " + translate("GatewayReuseAlerts", "Open the Usage tab or run Verify to see why.")


#: the requests of a session the rolling hit rate is taken over (COLD ones, with nothing to reuse, left out)
SESSION_WINDOW = 5
#: a session named once is named again only after this long (the tray must not nag every poll)
SESSION_THROTTLE_S = 600.0


def reason_text(reason: str | None) -> str:
    """The gateway's reason code as the tray says it, in the UI language."""
    translate = QCoreApplication.translate
    words = {
        "cold": translate("CacheReasons", "a new conversation (nothing to reuse)"),
        "prefix_changed": translate("CacheReasons", "the prompt's prefix changed"),
        "evicted": translate("CacheReasons", "the server dropped the cached prefix (evicted)"),
        "expired": translate("CacheReasons", "the vendor's cache expired"),
        "server": translate("CacheReasons", "the server forced re-processing"),
        "unknown": translate("CacheReasons", "no reason could be told"),
    }
    return words.get(reason or "unknown", reason or words["unknown"])


class SessionHitAlerts:
    """Per session, the hit rate over its last ``SESSION_WINDOW`` requests (cached / prompt tokens, the
    server's own numbers in the gateway's record); below ``threshold`` the tray names the session and
    the latest reason. ``feed_rows`` takes ``UsageRow``s oldest first and returns the alert texts."""

    def __init__(self, threshold: float = 0.8, window: int = SESSION_WINDOW, clock: Any = None):
        import time  # noqa: PLC0415

        self.threshold = threshold
        self.window = window
        self._clock = clock or time.monotonic
        self._recent: dict[str, deque[tuple[int, int, str | None]]] = {}
        self._named: dict[str, float] = {}

    def feed_rows(self, rows: Iterable[Any]) -> list[str]:
        low: dict[str, str] = {}
        for row in rows:
            session = getattr(row, "session", None)
            prompt = row.input_tokens or 0
            failed = (row.status or 0) >= 400
            if not session or (row.verdict or "").upper() == "COLD" or prompt <= 0 or failed:
                continue
            recent = self._recent.setdefault(session, deque(maxlen=self.window))
            recent.append((prompt, row.cached_tokens or 0, row.reason))
            if len(recent) < min(self.window, 3):
                continue
            rate = sum(c for _, c, _ in recent) / sum(p for p, _, _ in recent)
            if rate < self.threshold:
                reason = next((r for _, _, r in reversed(recent) if r), None)
                low[session] = self._message(session, row, rate, reason)
            else:
                low.pop(session, None)
        now = self._clock()
        alerts = []
        for session, text in low.items():
            if now - self._named.get(session, -SESSION_THROTTLE_S) >= SESSION_THROTTLE_S:
                self._named[session] = now
                alerts.append(text)
        return alerts

    def _message(self, session: str, row: Any, rate: float, reason: str | None) -> str:
        text = QCoreApplication.translate(
            "SessionHitAlerts", "Session %1 (%2, %3): the last %4 requests hit %5 of their prompt, below %6. "
                                "Likely cause: %7.")
        short = session if len(session) <= 12 else session[:8] + "…"
        values = (short, str(row.client_name or row.client or "?"), str(row.profile or "?"),
                  str(self.window), f"{rate:.0%}", f"{self.threshold:.0%}", reason_text(reason))
        for number, value in enumerate(values, 1):
            text = text.replace(f"%{number}", value)
        return text
