"""Wires the app together at start-up: store, controller, window, tray, and their lifetimes.

With a tray, closing the window hides it (close-to-tray, unless the setting says otherwise) and
``--minimized`` starts in the tray only. Without a tray the window is the only way in: it is always
shown, and closing it quits.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from PySide6.QtCore import QObject, QTimer, Slot
from PySide6.QtWidgets import QApplication

from kvswitch.core.errors import KvSwitchError
from kvswitch.ui import errors
from kvswitch.ui.controller import AppController
from kvswitch.ui.main_window import MainWindow
from kvswitch.ui.tray import TrayIcon

log = logging.getLogger("kvswitch.ui.shell")

STORE_POLL_MS = 2000


class AppShell(QObject):
    """Owns the controller, the window and the tray (when the desktop has one)."""

    def __init__(self, paths: Any, settings: Any = None, *, minimized: bool = False,
                 tray_available: bool | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.paths = paths
        self.minimized = minimized
        self.controller = AppController(paths, parent=self)
        self.window = MainWindow(self.controller)
        available = TrayIcon.available() if tray_available is None else tray_available
        self.tray: TrayIcon | None = TrayIcon(self.controller, self) if available else None
        close_to_tray = bool(getattr(settings, "close_to_tray", True))
        self.window.close_to_tray = self.tray is not None and close_to_tray
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.setQuitOnLastWindowClosed(self.tray is None)
        self.window.quit_requested.connect(self.quit)
        if self.tray is not None:
            self.tray.show_window_requested.connect(self.window.show_and_raise)
            self.tray.verify_requested.connect(self._on_tray_verify_requested)
            self.tray.quit_requested.connect(self.quit)
        self._register_secrets()
        self.controller.store.subscribe(self._register_secrets)
        # Another process (the CLI) may change profiles or apply one; the store notices on refresh.
        self._poll = QTimer(self)
        self._poll.setInterval(STORE_POLL_MS)
        self._poll.timeout.connect(self._on_poll_timeout)

    def start(self) -> None:
        if self.tray is not None:
            self.tray.show()
        if not (self.minimized and self.tray is not None):
            self.window.show_and_raise()
        self._poll.start()

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
        self.window.log_panel.stop()
        self.controller.shutdown()
        if self.tray is not None:
            self.tray.hide()

    def _register_secrets(self) -> None:
        with contextlib.suppress(KvSwitchError):
            errors.register_secrets([p.key for p in self.controller.store.profiles() if p.key])

    @Slot()
    def _on_poll_timeout(self) -> None:
        try:
            if self.controller.store.refresh():
                self.window.bind_log_to_active()
        except KvSwitchError as exc:
            self.window.message_bar.show_error(str(exc))

    @Slot()
    def _on_tray_verify_requested(self) -> None:
        self.controller.start_verify()
