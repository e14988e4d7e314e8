"""Each profile's hit rate through the gateway over the last days, for its card.

The gateway's usage database is the truth (the upstream's own token counts); a card paints often, so
this is a read of it made in the background — at start, and whenever the gateway poll saw new rows —
and ``get`` answers from that read. Hit rate here is cached / prompt tokens, as the Usage tab says it.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from kvswitch.ui.control import tasks

if TYPE_CHECKING:
    from kvswitch.core.paths import AppPaths

log = logging.getLogger("kvswitch.ui.control.usage_digest")

#: the window of usage a card's hit rate covers
DIGEST_DAYS = 7


class UsageDigest(QObject):
    """``get(name)``: ``{"requests", "hit_rate", ...}`` for a profile seen in the last ``DIGEST_DAYS``.

    Signals:
        changed(): a read finished (the cards repaint).
    """

    changed = Signal()

    def __init__(self, paths: AppPaths, parent: QObject | None = None):
        super().__init__(parent)
        self._paths = paths
        self._totals: dict[str, dict[str, float]] = {}
        self._task: tasks.BackgroundTask | None = None

    def get(self, name: str) -> dict[str, float] | None:
        return self._totals.get(name)

    def reload(self) -> None:
        if self._task is not None and self._task.running:
            return
        paths = self._paths

        def read(_cancel: threading.Event, _progress: Any) -> dict[str, dict[str, float]]:
            from kvswitch.gateway import control  # noqa: PLC0415 - aiohttp and httpx load on a worker

            if not control.usage_db_path(paths).exists():
                return {}
            return control.usage_summary(paths, time.time() - DIGEST_DAYS * 86400)

        self._task = tasks.run_in_background(self, read, on_success=self._on_read,
                                             on_failure=lambda exc: log.warning("usage digest: %s", exc))

    def _on_read(self, totals: object) -> None:
        self._totals = dict(totals) if isinstance(totals, dict) else {}
        self.changed.emit()
