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
