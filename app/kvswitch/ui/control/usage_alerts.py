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
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication

from kvswitch.ui.control.log_alerts import RECENT, ReuseAlerts
from kvswitch.ui.control.reason_words import reason_text
from kvswitch.ui.i18n import fill

if TYPE_CHECKING:
    from kvswitch.gateway.truth.alerts import CacheAlert, OpeningAlert

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


#: a session named once is named again only after this long (the tray must not nag every poll)
SESSION_THROTTLE_S = 600.0
#: sessions whose opening the tray remembers having seen (older ones are forgotten first)
_SESSIONS_KEPT = 1024


class SessionHitAlerts:
    """The tray's side of the gateway's two alerts (``gateway.truth.alerts``, the server's own
    numbers): the rolling session alert (reused / reusable tokens over the session's last requests that
    had something to reuse) and the cross-conversation one (a profile's new conversations re-processing
    what they share with the one before: Claude Code's attribution block). It keeps each session's last
    rows and each profile's last openings (a session's first judged row the tray saw), asks the gateway's
    rules, names a low session or profile at most once per ``SESSION_THROTTLE_S`` and says the costliest
    reason in the UI language. ``feed_rows`` takes ``UsageRow``s oldest first and returns the texts."""

    def __init__(self, threshold: float | None = None, requests: int | None = None, clock: Any = None):
        import time  # noqa: PLC0415

        # the gateway's rule is loaded with the first alert object, after the window has painted
        from kvswitch.gateway.truth.alerts import (  # noqa: PLC0415
            DEFAULT_OPENINGS,
            DEFAULT_REQUESTS,
            DEFAULT_THRESHOLD,
        )

        self.threshold = DEFAULT_THRESHOLD if threshold is None else threshold
        self.requests = DEFAULT_REQUESTS if requests is None else requests
        self.openings = DEFAULT_OPENINGS
        self._clock = clock or time.monotonic
        self._recent: dict[str, deque[Any]] = {}
        self._named: dict[str, float] = {}
        #: sessions whose first judged row was seen, and each profile's last openings
        self._opened_sessions: dict[str, None] = {}
        self._openings: dict[str, deque[Any]] = {}

    def feed_rows(self, rows: Iterable[Any]) -> list[str]:
        from kvswitch.gateway.truth.alerts import opening_alert, rolling_alert  # noqa: PLC0415

        touched: dict[str, Any] = {}
        profiles: dict[str, Any] = {}
        for row in rows:
            session = getattr(row, "session", None)
            if not session or (row.status or 0) >= 400:
                continue
            recent = self._recent.setdefault(session, deque(maxlen=self.requests * 4))
            recent.append(row)
            touched[session] = row
            if row.verdict and session not in self._opened_sessions:
                self._opened_sessions[session] = None
                if len(self._opened_sessions) > _SESSIONS_KEPT:
                    self._opened_sessions.pop(next(iter(self._opened_sessions)))
                if row.verdict != "COLD" and (row.reusable_tokens or 0) > 0:
                    profile = str(row.profile or "?")
                    self._openings.setdefault(profile, deque(maxlen=self.openings)).append(row)
                    profiles[profile] = row
        now = self._clock()
        texts = []
        for profile, row in profiles.items():
            opened = opening_alert(self._openings[profile], profile, self.threshold, self.openings)
            key = "\0profile:" + profile  # never a session id
            if opened is None or now - self._named.get(key, -SESSION_THROTTLE_S) < SESSION_THROTTLE_S:
                continue
            self._named[key] = now
            texts.append(self._opening_message(opened, row))
        for session, row in touched.items():
            alert = rolling_alert(self._recent[session], session, self.threshold, self.requests)
            if alert is None or now - self._named.get(session, -SESSION_THROTTLE_S) < SESSION_THROTTLE_S:
                continue
            self._named[session] = now
            texts.append(self._message(alert, row))
        return texts

    def _message(self, alert: CacheAlert, row: Any) -> str:
        text = QCoreApplication.translate(
            "SessionHitAlerts", "Session %1 (%2, %3): the last %4 requests hit %5 of their prompt, below %6. "
                                "Likely cause: %7.")
        session = alert.session
        short = session if len(session) <= 12 else session[:8] + "…"
        values = (short, str(row.client_name or row.client or "?"), str(row.profile or "?"),
                  str(alert.requests), f"{alert.hit_rate:.0%}", f"{self.threshold:.0%}",
                  reason_text(alert.reason))
        return fill(text, *values)

    def _opening_message(self, alert: OpeningAlert, row: Any) -> str:
        translate = QCoreApplication.translate
        text = translate("SessionHitAlerts", "New conversations on profile %1 (%2) reused %3 of the prompt "
                                             "they share with the one before, below %4. Likely cause: %5.")
        values = (alert.profile, str(row.client_name or row.client or "?"), f"{alert.hit_rate:.0%}",
                  f"{self.threshold:.0%}", reason_text(alert.reason))
        text = fill(text, *values)
        if alert.looks_like == "attribution_block":
            text += " " + translate("SessionHitAlerts", "Claude Code's attribution block (system[0]) differs "
                                                        "per conversation.")
        if alert.fix:
            fix = ", ".join(f"{key}={value}" for key, value in alert.fix.items())
            text += " " + translate("SessionHitAlerts", "Fix: set %1 in the profile's environment.").replace(
                "%1", fix)
        return text
