"""Scrapes a server's ``/metrics`` off the GUI thread, for the live panel's request table.

Some servers log no per-request cache line at default verbosity (``servers``: ``Metrics.live_events``),
so for their profiles the panel follows the counters too: a daemon thread scrapes every ``interval``
seconds (``kvswitch.logs.parsers.request_counters.MetricsReader``, one HTTP GET, never on the GUI thread)
and leaves the events for the panel's timer, with the same ``take()`` contract as the log followers
(``log_worker.LogBatch``). The scrape is cheap (a text page of a few tens of KB).

Behind a router (``verify.instances``: it lists its instances itself) the URL's page is some instance's
in turn, and the differences of two instances' counters are no request's: the thread then asks the router
for its instances once and follows each instance's own page with its own reader.

With a cache tier connected to the followed server (its marker on the server's page), each reader also
scrapes the tier's own ``/metrics`` every time it reads the server's (``logs.parsers.tier_counters``), and
each event carries the tier split of its interval (``CacheEvent.tiers``, worded by ``servers.tier_words``).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from typing import TYPE_CHECKING, Any

from kvswitch.ui.logs.log_worker import LogBatch

if TYPE_CHECKING:
    from kvswitch.core.models import Profile
    from kvswitch.logs.model import CacheEvent

log = logging.getLogger("kvswitch.ui.logs")

INTERVAL_S = 1.0


def metrics_url(profile: Profile | None) -> str | None:
    """Where the panel reads a profile's counters: only for a server whose log lacks the numbers."""
    if profile is None or not profile.base_url:
        return None
    from kvswitch import servers  # noqa: PLC0415 - after the first paint: the panel binds later
    from kvswitch.core.prometheus import metrics_url as page_url  # noqa: PLC0415

    try:
        server = servers.get(profile.kind)
    except (KeyError, ValueError):
        return None
    return page_url(profile.base_url) if server.metrics.live_events else None


class MetricsFollower:
    """A daemon thread scraping one ``/metrics`` URL; ``take()`` hands over its events and status."""

    def __init__(self, url: str, *, interval: float = INTERVAL_S, max_pending_events: int = 5000):
        from kvswitch.logs.parsers.request_counters import MetricsReader  # noqa: PLC0415

        self.url = url
        self.interval = interval
        self.reader = MetricsReader(url)
        #: one reader per instance behind a router, else just ``reader``
        self.readers = [self.reader]
        self._events: deque[CacheEvent] = deque(maxlen=max_pending_events)
        self._status: str | None = None
        self._shown_status: str | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="kvswitch-metrics-follower", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def take(self) -> LogBatch:
        with self._lock:
            status = self._status if self._status != self._shown_status else None
            self._shown_status = self._status
            batch = LogBatch(events=list(self._events), status=status)
            self._events.clear()
        return batch

    def _run(self) -> None:
        self._follow_instances()
        while not self._stop.is_set():
            events: list[CacheEvent] = []
            for reader in self.readers:
                try:
                    events += reader.poll()
                except Exception:  # a broken scrape must end nothing: the next one tries again
                    log.exception("scraping %s failed", reader.url)
            with self._lock:
                self._events.extend(events)
                problems = [r.status for r in self.readers if r.status and not r.status.startswith("reading")]
                self._status = problems[0] if problems else self.readers[0].status
            self._stop.wait(self.interval)

    def _follow_instances(self) -> None:
        """Behind a router, one reader per instance it lists (one GET to the router, on this thread)."""
        import httpx  # noqa: PLC0415 - the follower thread alone needs these

        from kvswitch.core import http_client  # noqa: PLC0415
        from kvswitch.core.http import NetworkLimitError  # noqa: PLC0415
        from kvswitch.core.strictparse import loads  # noqa: PLC0415
        from kvswitch.logs.parsers.request_counters import MetricsReader  # noqa: PLC0415
        from kvswitch.verify.instances import detect_instances  # noqa: PLC0415

        root = self.url.removesuffix("/metrics")

        def get(path: str) -> tuple[int, Any]:
            try:
                with http_client.request("GET", root + path, timeout=5.0, limit=1 << 20,
                                         what=root + path) as answer:
                    return answer.status, loads(answer.read()) if answer.status == 200 else None
            except (NetworkLimitError, OSError, ValueError, httpx.HTTPError):
                return 0, None

        found = detect_instances(get, None)
        if found is not None:
            self.readers = [MetricsReader(url + "/metrics") for url in found.urls]
