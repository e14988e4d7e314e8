"""The rolling hit-rate alert of a gateway session (pure: usage rows in, an alert or ``None`` out).

What the tray says when a session's prompt cache stops working: over the session's last N requests that
had something to reuse (a COLD request is not a fault and is left out), the share of the reusable tokens
the server actually reused. Below the threshold (``AppSettings.cache_alert_threshold``, 80% by default)
the alert names the reason that cost the most re-processed tokens, so the user knows what to fix.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from kvswitch.gateway.cache_truth_reasons import COLD

DEFAULT_THRESHOLD = 0.8
DEFAULT_REQUESTS = 10


class _Row(Protocol):
    session: str | None
    verdict: str | None
    reason: str | None
    reusable_tokens: int | None
    cached_tokens: int | None


@dataclass(frozen=True, slots=True)
class CacheAlert:
    session: str
    #: reused / reusable tokens over the window
    hit_rate: float
    requests: int
    #: the reason that lost the most tokens in the window, and how many it lost
    reason: str | None
    lost_tokens: int

    def message(self) -> str:
        why = f"; mostly {self.reason.replace('_', ' ')} ({self.lost_tokens} tokens)" if self.reason else ""
        return (f"session {self.session[:13]}: the server reused {self.hit_rate:.0%} of the reusable prompt "
                f"over its last {self.requests} requests{why}")


def rolling_alert(rows: Iterable[_Row], session: str, threshold: float = DEFAULT_THRESHOLD,
                  requests: int = DEFAULT_REQUESTS) -> CacheAlert | None:
    """The alert for ``session`` from its rows (oldest first), or ``None`` while its rate is at or above
    ``threshold`` (or nothing was reusable yet)."""
    window = [row for row in rows if row.session == session and row.verdict and row.verdict != COLD
              and (row.reusable_tokens or 0) > 0][-requests:]
    if not window:
        return None
    reusable = sum(row.reusable_tokens or 0 for row in window)
    reused = sum(min(row.cached_tokens or 0, row.reusable_tokens or 0) for row in window)
    rate = reused / reusable if reusable else 1.0
    if rate >= threshold:
        return None
    lost: dict[str, int] = {}
    for row in window:
        missing = (row.reusable_tokens or 0) - min(row.cached_tokens or 0, row.reusable_tokens or 0)
        if row.reason and missing > 0:
            lost[row.reason] = lost.get(row.reason, 0) + missing
    reason = max(lost, key=lambda name: lost[name]) if lost else None
    return CacheAlert(session, rate, len(window), reason, lost.get(reason, 0) if reason else 0)


def alerts(rows: Iterable[_Row], threshold: float = DEFAULT_THRESHOLD,
           requests: int = DEFAULT_REQUESTS) -> list[CacheAlert]:
    """Every session's alert, in the order the sessions first appear."""
    listed = list(rows)
    sessions = list(dict.fromkeys(row.session for row in listed if row.session))
    found = (rolling_alert(listed, session, threshold, requests) for session in sessions)
    return [alert for alert in found if alert is not None]
