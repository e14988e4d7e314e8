"""The controller's side of the local gateway: keep it running while a profile uses it, report its status,
read the usage database, and raise the low-reuse alert from the gateway's own usage rows.

A mixin of ``AppController`` (which declares the signals), so the window and the tray reach the gateway
only through the controller. Every call into ``kvswitch.gateway.control`` runs on a worker thread (it
imports aiohttp and httpx, probes over HTTP and reads SQLite); the outcome comes back on the GUI thread.
The gateway started here lives on a thread of this process: the window owns it and stops it on quit.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer, Slot

from kvswitch.core.errors import KvSwitchError
from kvswitch.ui.control import tasks
from kvswitch.ui.control.usage_alerts import GatewayReuseAlerts, SessionHitAlerts
from kvswitch.ui.control.usage_digest import UsageDigest

if TYPE_CHECKING:
    from kvswitch.core.paths import AppPaths
    from kvswitch.core.store import ProfileStore
    from kvswitch.targets.engine import Engine

log = logging.getLogger("kvswitch.ui.gateway")

#: how often the window checks that its gateway still answers (and restarts it if not)
GATEWAY_CHECK_MS = 15_000
#: a row is stored when its answer ended (a new conversation's seconds later), under the time its request
#: started: each poll reads back this far, and takes each row once
LATE_ROW_S = 900.0
#: after the server's log listed requests, the gateway's rows for them are read this much later
SOON_MS = 3_000


def _status_op(paths: AppPaths, wanted: bool, own: Any) -> Callable[[threading.Event, Any], Any]:
    """On the worker: probe the gateway; when it should run and does not answer, (re)start it here."""

    def op(cancel: threading.Event, _progress: Any) -> tuple[Any, dict[str, Any]]:
        from kvswitch.gateway import control  # noqa: PLC0415 - aiohttp and httpx load on first use

        status = control.probe_status(paths)
        status["wanted"] = wanted
        if status.get("running") or not wanted or cancel.is_set():  # cancelled: the app is quitting
            return own, status
        if own is not None:  # ours stopped answering: end what is left of it before a new one
            try:
                control.stop_background(paths, own)
            except (OSError, RuntimeError) as exc:
                log.warning("stopping the dead gateway: %s", exc)
        try:
            from kvswitch.commands.server_notes import started  # noqa: PLC0415 - reads server logs

            server = control.start_background(paths, notes=started(paths))
        except (OSError, RuntimeError, KvSwitchError) as exc:
            status["error"] = str(exc) or type(exc).__name__
            return None, status
        if cancel.is_set():  # the app quit while it started: nobody would stop it later
            control.stop_background(paths, server)
            return None, status
        log.info("gateway started at %s", server.url)
        status = control.probe_status(paths)
        status.update(wanted=True, started_here=True)
        return server, status

    return op


class GatewayControllerMixin:
    """``AppController`` supplies the paths, the store, the signals and ``raise_reuse_alert``."""

    paths: AppPaths
    if TYPE_CHECKING:
        @property
        def store(self) -> ProfileStore: ...
        @property
        def engine(self) -> Engine: ...
    gateway_status_changed: Any
    raise_reuse_alert: Callable[[str], None]
    _gateway_server: Any = None
    _gateway_task: tasks.BackgroundTask | None = None
    _gateway_timer: QTimer | None = None
    _gateway_alerts: GatewayReuseAlerts | None = None
    _usage_seen_until: float = 0.0
    #: rows taken by a poll, by (time, session, counts): polls overlap by ``LATE_ROW_S``
    _usage_taken: dict[tuple[Any, ...], float] = {}  # noqa: RUF012 - replaced per controller (watch_gateway)
    _usage_soon: QTimer | None = None
    _usage_watched_at = 0.0
    gateway_rows_recorded: Any
    verify_traffic: Any
    _session_alerts: SessionHitAlerts | None = None
    _gateway_stopped = False
    #: the latest ``probe_status`` answer (``{}`` before the first check)
    gateway_status: dict[str, Any] = {}  # noqa: RUF012 - replaced, never mutated

    _usage_digest: UsageDigest | None = None

    @property
    def usage_digest(self) -> UsageDigest:
        """Each profile's hit rate through the gateway (the cards), read in the background."""
        if self._usage_digest is None:
            self._usage_digest = UsageDigest(self.paths, self)  # type: ignore[arg-type]
        return self._usage_digest

    def gateway_wanted(self) -> bool:
        """Whether any profile sends its client through the gateway (then the window keeps it running)."""
        try:
            return any(getattr(p, "via_gateway", False) for p in self.store.profiles())
        except KvSwitchError:
            return False

    def switch_by_routing(self, profile: Any) -> bool:
        """Switch to a gateway profile by the gateway's routing alone when the clients' files already
        point at the gateway (as ``kvswitch use`` does): no file is written, running sessions follow
        from their next request. ``False`` when the files must be written (nothing was done then)."""
        if not getattr(profile, "via_gateway", False):
            return False
        from kvswitch.targets.gateway_switch import (  # noqa: PLC0415 - the engine loads lazily
            clients_already_at_gateway,
            route_profile,
        )

        self.engine.recover()  # the files as an apply would find them, before judging them
        if not clients_already_at_gateway(self.engine, self.store, profile):
            return False
        route_profile(self.engine, profile)
        log.info("switched to %s by the gateway's routing", profile.name)
        if self._gateway_timer is not None:
            self.check_gateway()
        return True

    def route_gateway(self, profile: Any) -> None:
        """After an apply: a gateway profile's clients are routed to it (as ``kvswitch use`` does), and the
        gateway is checked at once so it runs before the client's first request."""
        if not getattr(profile, "via_gateway", False):
            return
        from kvswitch.core.gateway_config import clients_of_targets, route_clients  # noqa: PLC0415

        route_clients(self.paths, profile.name, clients_of_targets(profile.targets))
        if self._gateway_timer is not None:
            self.check_gateway()

    def watch_gateway(self, interval_ms: int = GATEWAY_CHECK_MS) -> None:
        """Check now and every ``interval_ms``: start the gateway when a profile uses it, restart it when
        it died, and feed new usage rows to the low-reuse alert."""
        if self._gateway_stopped:
            return  # the app is shutting down (a delayed first check arrived late)
        if self._gateway_timer is None:
            self._gateway_timer = QTimer(self)  # type: ignore[arg-type]
            self._gateway_timer.timeout.connect(self.check_gateway)
        self._gateway_timer.start(interval_ms)
        self._usage_seen_until = self._usage_watched_at = time.time()
        self._usage_taken = {}
        self.check_gateway()

    def check_gateway(self) -> None:
        """One check, in the background; ``gateway_status_changed`` reports the outcome."""
        if self._gateway_stopped or (self._gateway_task is not None and self._gateway_task.running):
            return
        op = _status_op(self.paths, self.gateway_wanted(), self._gateway_server)
        self._gateway_task = tasks.run_in_background(
            self, op, on_success=self._on_gateway_checked,  # type: ignore[arg-type]
            on_failure=self._on_gateway_check_failed)
        self.poll_gateway_usage()

    def _on_gateway_checked(self, outcome: tuple[Any, dict[str, Any]]) -> None:
        self._gateway_server, self.gateway_status = outcome
        self.gateway_status_changed.emit(self.gateway_status)

    def _on_gateway_check_failed(self, exc: BaseException) -> None:
        log.warning("gateway check failed: %s", exc)
        self.gateway_status = {"running": False, "error": str(exc) or type(exc).__name__}
        self.gateway_status_changed.emit(self.gateway_status)

    def stop_gateway(self) -> None:
        """Stop the timer and the gateway this window started (on quit; waits for requests in flight)."""
        self._gateway_stopped = True
        if self._gateway_timer is not None:
            self._gateway_timer.stop()
        if self._gateway_task is not None and self._gateway_task.running:
            self._gateway_task.cancel()
            tasks.drain(10_000)  # a start in progress finishes (and stops itself) before we go on
        server, self._gateway_server = self._gateway_server, None
        if server is not None:
            from kvswitch.gateway import control  # noqa: PLC0415

            control.stop_background(self.paths, server)

    # -- usage -------------------------------------------------------------------------------------

    def load_usage(self, since: float | None, on_success: Callable[[Any], None],
                   on_failure: Callable[[BaseException], None]) -> tasks.BackgroundTask:
        """The usage rows from ``since`` (epoch seconds) and their per-profile summary, read on a worker:
        ``on_success((rows, summary))``."""
        paths = self.paths

        def op(_cancel: threading.Event, _progress: Any) -> tuple[list[Any], dict[str, dict[str, float]]]:
            from kvswitch.gateway import control  # noqa: PLC0415

            rows = control.usage_rows(paths, since)
            return rows, control.usage_summary(paths, since)

        return tasks.run_in_background(self, op, on_success=on_success,  # type: ignore[arg-type]
                                       on_failure=on_failure)

    def load_usage_log(self, wanted: Any, days: int, on_success: Callable[[Any], None],
                       on_failure: Callable[[BaseException], None]) -> tasks.BackgroundTask:
        """The per-request log (a ``usage_log.UsageLog``) for ``wanted`` (a ``LogFilter``), on a worker."""
        from kvswitch.ui.control.usage_log import read_usage_log  # noqa: PLC0415

        paths = self.paths
        return tasks.run_in_background(self, lambda _c, _p: read_usage_log(paths, wanted, days),  # type: ignore[arg-type]
                                       on_success=on_success, on_failure=on_failure)

    def set_via_gateway(self, name: str) -> bool:
        """Send a profile's client through the gateway (the Usage tab's empty state), then apply it so the
        client's file points there; ``apply_failed`` says why not."""
        try:
            profile = self.store.get(name)
            if not getattr(profile, "via_gateway", False):
                data = profile.model_dump(context={"secrets": True})
                data["via_gateway"] = True
                self.store.update(name, type(profile).model_validate(data))
        except KvSwitchError as exc:
            self.apply_failed.emit(name, str(exc))  # type: ignore[attr-defined]
            return False
        applied = bool(self.apply(name, rewrite_files=True))  # type: ignore[attr-defined]
        if applied and self._gateway_timer is None:
            self.watch_gateway()
        return applied

    def poll_gateway_usage(self) -> None:
        """Rows the gateway wrote since the last poll go to the low-reuse alert (cloud vendors too) and,
        as ``gateway_rows_recorded``, to the Cache log (the gateway's verdict of each request it relayed)."""
        since = max(self._usage_seen_until - LATE_ROW_S, self._usage_watched_at)
        self.load_usage(since, self._on_usage_polled, lambda exc: log.warning("usage poll: %s", exc))

    @Slot()
    def poll_gateway_usage_soon(self) -> None:
        """The server's log listed requests: read the gateway's rows for them in ``SOON_MS`` (once for a
        burst), so the Cache log shows the gateway's verdict within seconds, not at the next check."""
        if self._gateway_timer is None or self._gateway_stopped:
            return  # no gateway watched: no rows to wait for
        if self._usage_soon is None:
            self._usage_soon = QTimer(self)  # type: ignore[arg-type]
            self._usage_soon.setSingleShot(True)
            self._usage_soon.timeout.connect(self.poll_gateway_usage)
        if not self._usage_soon.isActive():
            self._usage_soon.start(SOON_MS)

    @Slot(str)
    def note_gateway_verdict(self, verdict: str) -> None:
        """The newest request's verdict as the gateway judged it (the Cache log re-judged it): the tray
        follows, unless a verify is running (its own requests decide nothing) or it was a first request."""
        if verdict != "cold" and not self.verify_traffic.running:
            self.note_verdict(verdict)  # type: ignore[attr-defined]

    def _on_usage_polled(self, outcome: tuple[list[Any], Any]) -> None:
        floor, taken = self._usage_watched_at, self._usage_taken  # before it: history, not news
        rows = []
        for row in outcome[0]:
            key = (row.time, row.session, row.input_tokens, row.cached_tokens, row.output_tokens, row.status)
            if row.time > floor and key not in taken:
                taken[key] = row.time
                rows.append(row)
        if not rows:
            return
        self._usage_seen_until = max(self._usage_seen_until, max(r.time for r in rows))
        for key, when in list(taken.items()):  # what no later poll reads back again
            if when < self._usage_seen_until - 2 * LATE_ROW_S:
                del taken[key]
        self.gateway_rows_recorded.emit(rows)
        self.usage_digest.reload()  # the cards' hit rates
        if self._gateway_alerts is None:
            self._gateway_alerts = GatewayReuseAlerts()
        message = self._gateway_alerts.feed_rows(rows)
        if message:
            self.raise_reuse_alert(message)
        if self.preference("cache_alerts") is False:  # type: ignore[attr-defined]
            return
        if self._session_alerts is None:
            self._session_alerts = SessionHitAlerts()
        threshold = self.preference("cache_alert_threshold")  # type: ignore[attr-defined]
        requests = self.preference("cache_alert_requests")  # type: ignore[attr-defined]
        self._session_alerts.threshold = float(threshold if threshold is not None else 0.8)  # Settings
        self._session_alerts.requests = int(requests or 10)
        for text in self._session_alerts.feed_rows(rows):
            self.raise_session_alert(text)  # type: ignore[attr-defined]
