"""The states the docs show, taken one after the other in one window, as a person would reach them.

Each state is a function of the :class:`Tour`; ``tour.take(name, widget)`` saves ``<name><tag>.png`` and
its sidecar. A state that fails is reported and the tour goes on, so one broken screen never costs the
others. The verify states run real verifies against the tiny local llama-server (and a port nothing
listens on, and a path the server does not serve) when the binary is built.
"""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import screenshot_demo as demo
import screenshot_library
import screenshot_mcp
import screenshot_sessions
from screenshot_sidecar import save


class Tour:
    def __init__(self, home: Path, out: Path, tag: str, llama_url: str | None, dead_url: str):
        from PySide6.QtCore import QEventLoop, QTimer  # noqa: PLC0415

        from kvswitch.core.paths import AppPaths  # noqa: PLC0415
        from kvswitch.ui.shell.shell import AppShell  # noqa: PLC0415

        self._loop_type, self._timer = QEventLoop, QTimer
        self.home, self.out, self.tag = home, out, tag
        self.llama_url, self.dead_url = llama_url, dead_url
        self.paths = AppPaths.default()
        self.server_log = home / "llama-server.log"
        self.server_log.write_text("")
        self.shell = AppShell(self.paths, None, tray_available=False)
        from kvswitch.ui import i18n  # noqa: PLC0415

        # as the app does once it is ready: a zh_CN window on a machine without a Chinese font gets the
        # bundled one (without it every Chinese text is a box)
        self.shell.ready.connect(lambda: i18n.ensure_cjk_font())
        i18n.ensure_cjk_font()
        self.window = self.shell.window
        self.controller = self.shell.controller
        self.saved: list[str] = []
        self.failed: list[str] = []

    def pump(self, ms: int) -> None:
        loop = self._loop_type()
        self._timer.singleShot(ms, loop.quit)
        loop.exec()

    def take(self, name: str, widget: Any) -> None:
        save(widget, self.out / f"{name}{self.tag}.png")
        self.saved.append(name)

    def run(self, name: str, state: Callable[[Tour], None]) -> None:
        started = time.monotonic()
        try:
            state(self)
        except Exception:  # noqa: BLE001 - one broken screen must not cost the others
            traceback.print_exc()
            self.failed.append(name)
        print(f"  {name}: {time.monotonic() - started:.1f} s", flush=True)

    def verify(self, profile: str, *, running_shot: str | None = None) -> None:
        """A real verify of ``profile`` from the window (its Verify tab), until it ends."""
        window, controller = self.window, self.controller
        controller.apply(profile)
        window.message_bar.hide()  # the verify card is the subject here
        window._select(profile)
        window.tabs.setCurrentWidget(window.verify_card)
        controller.verify_timeout_s = 120  # a busy machine: other jobs share its cores
        loop = self._loop_type()
        controller.verify_finished.connect(loop.quit)
        controller.verify_failed.connect(loop.quit)
        self._timer.singleShot(600_000, loop.quit)
        controller.start_verify(profile)
        if running_shot:
            self.pump(1200)
            self.take(running_shot, window)
        if controller.verifying:
            loop.exec()
        controller.verify_finished.disconnect(loop.quit)
        controller.verify_failed.disconnect(loop.quit)
        self.pump(400)


# -- the states, in the order they are reached -------------------------------------------------------


def first_start(tour: Tour) -> None:
    window = tour.window
    window.resize(1180, 760)
    if not window.content_built:
        window.build_content()
    window.show()
    tour.pump(400)
    tour.take("empty-state", window)


def setup_assistant(tour: Tour) -> None:
    """The setup assistant on a machine where it finds nothing: it says what it looked for."""
    import os  # noqa: PLC0415

    from kvswitch.platform.detect import Detection, detect_servers, detect_tools  # noqa: PLC0415
    from kvswitch.ui.shell.first_run import FirstRunDialog  # noqa: PLC0415

    dead_port = int(tour.dead_url.rsplit(":", 1)[1])
    no_clients = {**os.environ, "PATH": "/usr/bin:/bin"}  # the demo machine has no coding tool installed

    def nothing_here() -> Detection:  # a real detection, on a port nothing listens on
        servers = tuple(found for found in detect_servers([dead_port]) if found.port == dead_port)
        return Detection(tuple(detect_tools(no_clients)), servers)

    dialog = FirstRunDialog(tour.controller, tour.window, detector=nothing_here)
    dialog.resize(700, 520)
    dialog.show()
    tour.pump(1500)
    tour.take("setup-assistant", dialog)
    dialog.reject()


def gallery(tour: Tour) -> None:
    from kvswitch.platform.detect import detect_servers  # noqa: PLC0415

    ports = [int(tour.llama_url.rsplit(":", 1)[1])] if tour.llama_url else []

    def demo_servers() -> list[object]:  # only the demo server, not others this machine runs
        return [found for found in detect_servers(ports) if found.port in ports] if ports else []

    dialog = tour.window.open_gallery(detector=demo_servers)
    tour.pump(2500)
    tour.take("gallery", dialog)
    dialog.search_edit.setText("deepseek")
    tour.pump(300)
    tour.take("gallery-search", dialog)
    dialog.close()


def add_demo_data(tour: Tour) -> None:
    demo.add_profiles(tour.controller.store, tour.llama_url, tour.server_log, tour.dead_url)
    demo.remember_verdicts(tour.paths)
    demo.record_usage(tour.paths)
    tour.window._select(demo.LOCAL)
    tour.pump(300)


def apply_diff(tour: Tour) -> None:
    from kvswitch.ui.profiles.diff_dialog import ApplyDialog  # noqa: PLC0415

    engine = tour.controller.engine
    plans = tour.controller.plan(demo.LOCAL)
    render = lambda ps: engine.render_diff(ps, show_secrets=False)  # noqa: E731
    dialog = ApplyDialog(demo.LOCAL, plans, render, tour.window)
    dialog.resize(900, 640)
    dialog.show()
    tour.pump(400)
    tour.take("apply-diff", dialog)
    dialog.close()


def applied(tour: Tour) -> None:
    """One click on Use: the message bar says what happened, with Review changes and Undo."""
    window = tour.window
    window.apply_profile(demo.LOCAL, review=False)
    tour.controller.verify_summary.reload()  # the cards read the history off the GUI thread
    tour.pump(900)
    tour.take("message-bar-undo", window)
    window.review_applied_changes()
    dialog = window.review_dialog
    dialog.resize(900, 640)
    tour.pump(400)
    tour.take("review-changes", dialog)
    dialog.close()


def main_window(tour: Tour) -> None:
    window = tour.window
    window.message_bar.hide()
    tour.pump(200)
    tour.take("main-window", window)
    window.filter_edit.setText("no such profile")
    tour.pump(300)
    tour.take("no-match", window)
    window.filter_edit.setText("")
    tour.pump(200)


def editor(tour: Tour) -> None:
    """The form of a profile with a lint warning and its one-click fix."""
    tour.window._select(demo.LM_STUDIO)
    tour.window.show_editor()  # the panel beside the list, Save pinned below the form
    tour.pump(400)
    tour.take("editor", tour.window)
    tour.window._select(demo.LOCAL)
    tour.window.hide_editor()


def log_panel(tour: Tour) -> None:
    window = tour.window
    window.build_tabs()
    window.bind_log_to_active()
    window.tabs.setCurrentWidget(window.log_panel)
    tour.pump(2500)  # the log reader is a child process: on a busy machine it takes a while to open the file
    cold, hit, miss = demo.demo_blocks()
    session = demo.Session(tour.server_log)
    session.write(demo.HEADER)
    session.request(cold)
    for _ in range(14):
        session.request(hit)
        tour.pump(100)
    tour.pump(900)
    tour.take("log-panel-hit", window)
    for _ in range(12):
        session.request(miss)
        tour.pump(100)
    tour.pump(900)
    tour.take("log-panel-miss", window)


def verify_states(tour: Tour) -> None:
    """Running and done (the profile without the fix: a diagnosis and its one-click fix)."""
    if not tour.llama_url:
        raise RuntimeError("no llama-server binary: the verify states need the real server")
    tour.verify(demo.STOCK, running_shot="verify-running")
    tour.take("verify-card", tour.window)


def verify_failures(tour: Tour) -> None:
    """A server that is not running (verify failed) and one that answers with an error (error card)."""
    tour.verify(demo.DEAD)
    tour.take("verify-failed", tour.window)
    tour.verify(demo.WRONG_PATH)
    tour.take("error-card", tour.window)


def verify_history(tour: Tour) -> None:
    window = tour.window
    tour.controller.apply(demo.LOCAL)
    window._select(demo.LOCAL)
    window.tabs.setCurrentWidget(window.verify_card)
    history = window.verify_card.history
    history.bind(tour.paths.data_dir / "verify-history", demo.LOCAL)
    tour.pump(500)
    tour.take("verify-history", history)


def usage(tour: Tour) -> None:
    window = tour.window
    window.tabs.setCurrentWidget(window.usage_view)
    window.usage_view.period.setCurrentIndex(1)
    window.usage_view.refresh()
    tour.pump(1500)
    log = window.usage_view.request_log  # the miss row open on its reason
    verdicts = [log.requests_table.item(r, 8).text() for r in range(log.requests_table.rowCount())]
    if "MISS" in verdicts:
        log.requests_table.setCurrentCell(verdicts.index("MISS"), 0)
    tour.pump(300)
    tour.take("usage", window)


def settings(tour: Tour) -> None:
    from kvswitch.ui.shell.settings_dialog import SettingsDialog  # noqa: PLC0415

    dialog = SettingsDialog(tour.controller, tour.window)
    dialog.show()
    tour.pump(500)
    tour.take("settings", dialog)
    dialog.reject()


def tray_menu(tour: Tour) -> None:
    from PySide6.QtCore import QPoint  # noqa: PLC0415

    from kvswitch.ui.shell.tray import TrayIcon  # noqa: PLC0415

    tour.controller.refresh_live_clients()  # one section per client, each with what its file runs
    tour.pump(800)
    tray = TrayIcon(tour.controller)
    tray.rebuild_menu()
    tray.menu.popup(QPoint(40, 40))
    tour.pump(400)
    tour.take("tray-menu", tray.menu)
    tray.menu.hide()


TOUR: list[tuple[str, Callable[[Tour], None]]] = [
    ("empty-state", first_start), ("setup-assistant", setup_assistant), ("gallery", gallery),
    ("demo data", add_demo_data), ("apply-diff", apply_diff), ("message-bar-undo", applied),
    ("main-window", main_window), ("editor", editor), ("log-panel", log_panel),
    ("verify-card", verify_states), ("verify-failed", verify_failures), ("verify-history", verify_history),
    ("usage", usage), ("sessions", screenshot_sessions.sessions),
    ("prompts-skills", screenshot_library.library), ("mcp", screenshot_mcp.mcp), ("settings", settings),
    ("tray-menu", tray_menu),
]


def shoot(home: Path, out: Path, tag: str, llama_url: str | None, dead_url: str) -> Tour:
    tour = Tour(home, out, tag, llama_url, dead_url)
    try:
        only = os.environ.get("KVSWITCH_SCREENSHOTS_STATES", "")  # e.g. "prompts-skills": one state again
        for name, state in TOUR:
            if not only or name in only.split(","):
                tour.run(name, state)
    finally:
        tour.shell.shutdown()
        tour.window.close()
    return tour
