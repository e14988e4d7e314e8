"""Wires the app together at start-up: store, controller, window, tray, and their lifetimes.

With a tray, closing the window hides it (close-to-tray, unless the setting says otherwise) and
``--minimized`` starts in the tray only. Without a tray the window is the only way in: it is always
shown, and closing it quits.
"""

from __future__ import annotations

import contextlib
import gc
import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QTimer, Signal, Slot
from PySide6.QtWidgets import QApplication, QSystemTrayIcon

from kvswitch.core.errors import KvSwitchError
from kvswitch.ui import errors
from kvswitch.ui.control import engine_text
from kvswitch.ui.control.controller import AppController
from kvswitch.ui.gui_collector import collection_held
from kvswitch.ui.shell.main_window import MainWindow

if TYPE_CHECKING:
    from kvswitch.core.paths import AppPaths
    from kvswitch.core.settings import AppSettings
    from kvswitch.ui.shell.tray import TrayIcon

log = logging.getLogger("kvswitch.ui.shell.shell")

STORE_POLL_MS = 2000
FIRST_PAINT_FALLBACK_MS = 300
#: the gateway check (it loads aiohttp and httpx on a worker) waits until the window is on screen
GATEWAY_FIRST_CHECK_MS = 1000


class AppShell(QObject):
    """Owns the controller, the window and the tray (when the desktop has one).

    Signals:
        ready(): a deferred start finished loading (profiles shown, tray up).
    """

    ready = Signal()

    def __init__(self, paths: AppPaths, settings: AppSettings | None = None, *, minimized: bool = False,
                 tray_available: bool | None = None, deferred: bool = False, parent: QObject | None = None):
        """Args:
            settings: the app's preferences; with ``deferred`` they are loaded after the window shows.
            deferred: show the window frame first and load profiles, settings and tray right after
                (the engines' models take most of the start-up time).
        """
        super().__init__(parent)
        self.paths = paths
        self.settings = settings
        self.minimized = minimized
        if tray_available is None:
            tray_available = QSystemTrayIcon.isSystemTrayAvailable()
        self.tray_available = tray_available
        self.controller = AppController(paths, parent=self)
        self._deferred = deferred
        self._preferences_applied = False
        if not deferred:
            self._apply_preferences()  # the content is built in the theme it will be shown in
        self.window = MainWindow(self.controller, deferred=deferred)
        self.window.quit_requested.connect(self.quit)
        self.window.language_changed.connect(self._on_window_language_changed)
        self.tray: TrayIcon | None = None  # once loaded
        # Another process (the CLI) may change profiles or apply one; the store notices on refresh.
        self._poll = QTimer(self)
        self._poll.setInterval(STORE_POLL_MS)
        self._poll.timeout.connect(self._on_poll_timeout)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.setQuitOnLastWindowClosed(not self.tray_available)
        if not deferred:
            self._complete()

    def _complete(self) -> None:
        """Everything that needs the engines: settings, language, window content, tray."""
        self._apply_preferences()
        if not self.window.content_built:
            self.window.build_content(tabs_later=self._deferred)
        if self.tray_available:
            from kvswitch.ui.shell.tray import TrayIcon  # noqa: PLC0415

            self.tray = TrayIcon(self.controller, self)
            self.tray.show_window_requested.connect(self.window.show_and_raise)
            self.tray.verify_requested.connect(self._on_tray_verify_requested)
            self.tray.quit_requested.connect(self.quit)
        close_to_tray = bool(self._preference("close_to_tray"))
        self.window.tray_present = self.tray is not None
        self.window.close_to_tray = self.tray is not None and close_to_tray
        self._register_secrets()
        self.controller.store.subscribe(self._register_secrets)
        # Everything loaded so far (Qt bindings, pydantic, the engines) lives as long as the app: keep it
        # out of the collector's full passes, which otherwise stall the window for tens of ms during a
        # log flood.
        gc.freeze()

    def _preference(self, name: str) -> object:
        """A setting: from the settings given to the shell, else the controller's start-up reading
        (plain values, no pydantic: see ``AppController.preference``)."""
        if self.settings is not None:
            return getattr(self.settings, name)
        return self.controller.preference(name)

    def _apply_preferences(self) -> None:
        """Settings, then the language and the theme they choose (once)."""
        if self._preferences_applied:
            return
        self._preferences_applied = True
        if self.settings is None:
            self._apply_language_setting()
        self._apply_theme_setting()

    def _apply_theme_setting(self) -> None:
        """``light``/``dark`` in the settings override the system; ``system`` follows it."""
        from kvswitch.ui.widgets import appearance  # noqa: PLC0415

        appearance.apply_theme(str(self._preference("theme")))

    def _apply_language_setting(self) -> None:
        """The language setting only became known now; the content is built after this, in it."""
        from kvswitch.ui import i18n  # noqa: PLC0415

        app = QApplication.instance()
        language = self._preference("language")
        wanted = i18n.choose_language(str(language) if language else None)
        if app is not None and wanted != i18n.current():
            i18n.install(app, wanted)

    def start(self) -> None:
        """Show the window (unless tray-only), then finish loading on the next event-loop turn."""
        shown = not (self.minimized and self.tray_available)
        if self.window.content_built:
            if shown:
                self.window.show_and_raise()
            self._started()
            self._read_in_background()
            return
        if shown:
            # Load once the frame has been painted, so the user sees a window at once; the fallback
            # covers platforms that never paint a hidden or minimised window.
            self.window.installEventFilter(self)
            self.window.show_and_raise()
            QTimer.singleShot(FIRST_PAINT_FALLBACK_MS, self._on_deferred_start)
        else:
            QTimer.singleShot(0, self._on_deferred_start)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window and event.type() == QEvent.Type.Paint:
            self.window.removeEventFilter(self)
            QTimer.singleShot(0, self._on_deferred_start)
        return False

    @Slot()
    def _on_deferred_start(self) -> None:
        if self.window.content_built:
            return
        # The load is a burst of long-lived objects (models, widgets): the collector's passes over them
        # find nothing to free, so it waits until they are in and frozen (``_complete``).
        try:
            with collection_held():
                self._complete()
        except KvSwitchError as exc:  # e.g. profiles.json cannot be parsed: say which line, then stop
            errors.show_dialog(QApplication.translate("app", "KV Switch cannot start"), str(exc), modal=True)
            QApplication.exit(exc.exit_code)
            return
        self._started()
        self._offer_first_run()
        self.ready.emit()
        QTimer.singleShot(0, self.window.build_editor)  # the form beside the cards, then
        QTimer.singleShot(0, self.window.build_tabs)  # the two tabs not shown at start
        self._read_in_background()

    def _read_in_background(self) -> None:
        """After "ready", on workers: the latest verifies (httpx), what each client runs now (the engine
        models) and each profile's hit rate through the gateway — never before the profiles show."""
        self.controller.verify_summary.reload()
        self.controller.refresh_live_clients()
        self.controller.usage_digest.reload()

    def _offer_first_run(self) -> None:
        """No profiles and the assistant never finished: open it (it remembers when it is done)."""
        # the same test as first_run.should_show, without loading the assistant (and the platform
        # detection it brings) on every start
        try:
            wanted = not self.controller.store.names() and not self._preference("first_run_done")
        except KvSwitchError:
            return
        if wanted and (self.window.isVisible() or self.tray is None):
            QTimer.singleShot(0, self.window.open_first_run)

    def _started(self) -> None:
        if self.tray is not None:
            self.tray.show()
        self._poll.start()
        QTimer.singleShot(GATEWAY_FIRST_CHECK_MS, self.controller.watch_gateway)  # after the first paint

    @Slot(str)
    def on_instance_message(self, message: str) -> None:
        if message == "show":
            self.window.show_and_raise()

    @Slot()
    def quit(self) -> None:
        app = QApplication.instance()
        if app is not None:
            app.quit()

    def shutdown(self) -> None:
        """Stop the log follower and background tasks before Qt tears the objects down."""
        self._poll.stop()
        if self.window.content_built:
            self.window.stop_tabs()
        self.controller.shutdown()
        if self.tray is not None:
            self.tray.hide()

    def _register_secrets(self) -> None:
        with contextlib.suppress(KvSwitchError):
            errors.register_secrets([p.key for p in self.controller.store.summaries() if p.key])

    @Slot()
    def _on_poll_timeout(self) -> None:
        if not self.window.content_built:
            return
        self.controller.verify_summary.reload_if_changed()
        try:
            if self.controller.store.refresh():
                self.window.bind_log_to_active()
        except KvSwitchError as exc:
            self.window.message_bar.show_error(engine_text.error_text(exc))

    @Slot(str)
    def _on_window_language_changed(self, language: str) -> None:
        """Another language, now: its translators in, and the window built again in it (the state is
        the store's and the controller's, so nothing is lost); the tray's menu is rebuilt on opening."""
        app = QApplication.instance()
        if app is None:
            return
        from kvswitch.ui import i18n  # noqa: PLC0415

        i18n.install(app, i18n.choose_language(language or None))
        i18n.ensure_cjk_font(app)  # before the new window is built: no box in it, even before ``ready``
        old = self.window
        self.window = MainWindow(self.controller)
        self.window.quit_requested.connect(self.quit)
        self.window.language_changed.connect(self._on_window_language_changed)
        self.window.tray_present, self.window.close_to_tray = old.tray_present, old.close_to_tray
        self.window.setGeometry(old.geometry())
        if self.tray is not None:
            self.tray.show_window_requested.disconnect(old.show_and_raise)
            self.tray.show_window_requested.connect(self.window.show_and_raise)
            self.tray.rebuild_menu(vendors=False)
        if old.isVisible():
            self.window.show_and_raise()
        old.stop_tabs()
        old.close_to_tray = False
        old.quit_requested.disconnect(self.quit)
        old.hide()
        old.deleteLater()
        self.controller.refresh_live_clients()
        self.window.message_bar.show_info(QApplication.translate("MainWindow", "Language changed."))

    @Slot()
    def _on_tray_verify_requested(self) -> None:
        self.controller.start_verify()
