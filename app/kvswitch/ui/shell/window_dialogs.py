"""The window's side doors: Settings, the setup assistant and importing profiles from other tools.

A mixin of ``MainWindow`` (it uses the window's controller, store and message bar), kept apart so the
window module stays about wiring the parts together. Settings and the setup assistant ship separately
(their File menu entries exist only when their modules do), and each is imported when first opened.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

if TYPE_CHECKING:
    from kvswitch.core.settings import AppSettings
    from kvswitch.core.store import ProfileStore
    from kvswitch.ui.control.controller import AppController
    from kvswitch.ui.widgets.message_bar import MessageBar


class WindowDialogsMixin:
    """Opens the dialogs and takes in what they report; ``MainWindow`` supplies the attributes below.

    Texts use the window's translation context ("MainWindow"), where they always were."""

    controller: AppController
    store: ProfileStore
    message_bar: MessageBar
    close_to_tray: bool
    tray_present: bool
    _select: Callable[[str | None], None]
    open_gallery: Callable[[], object]
    language_changed: Any  # MainWindow's signal

    def _optional_dialog_action(self, menu: QMenu, module: str, text: str,
                                open_dialog: Callable[[], None]) -> QAction | None:
        """Settings and the setup assistant ship separately; their entries exist only when they do."""
        import importlib.util  # noqa: PLC0415

        if importlib.util.find_spec(f"kvswitch.ui.shell.{module}") is None:
            return None
        action = menu.addAction(text)
        action.triggered.connect(lambda: open_dialog())
        return action

    def _import(self, source: str) -> None:
        from kvswitch.ui.profiles.importing import import_profiles  # noqa: PLC0415

        current: dict[str, str] = {}
        message, ok = import_profiles(self.store, source, current_out=current)
        if ok and current:  # what the clients run now is marked live at once
            self.controller.mark_imported_live(current)
        (self.message_bar.show_success if ok else self.message_bar.show_error)(message)

    def open_settings(self) -> None:
        from kvswitch.ui.shell.settings_dialog import SettingsDialog  # noqa: PLC0415

        before = self.controller.settings
        dialog = SettingsDialog(self.controller, self)  # type: ignore[arg-type]
        dialog.settings_saved.connect(lambda saved: self._on_settings_saved(before, saved))
        dialog.exec()
        dialog.deleteLater()

    def open_first_run(self) -> None:
        from kvswitch.ui.shell.first_run import FirstRunDialog  # noqa: PLC0415

        dialog = FirstRunDialog(self.controller, self)  # type: ignore[arg-type]
        dialog.profiles_added.connect(self._on_first_run_profiles_added)
        dialog.gallery_requested.connect(lambda: QTimer.singleShot(0, lambda: self.open_gallery()))
        dialog.exec()
        dialog.deleteLater()

    def _on_settings_saved(self, before: AppSettings, saved: AppSettings) -> None:
        self.close_to_tray = self.tray_present and bool(getattr(saved, "close_to_tray", True))
        if getattr(saved, "theme", None) != getattr(before, "theme", None):
            from kvswitch.ui.widgets import appearance  # noqa: PLC0415

            appearance.apply_theme(str(saved.theme))  # at once: the palette is the app's own
        if getattr(saved, "language", None) != getattr(before, "language", None):
            # the shell installs the translators and rebuilds the window in the new language now
            self.language_changed.emit(str(getattr(saved, "language", "") or ""))

    def _on_first_run_profiles_added(self, names: list[str]) -> None:
        if names:
            self._select(names[0])
            text = QCoreApplication.translate("MainWindow",
                                              "Added %1 profile(s): %2. Click “Use” on one to switch to it.")
            self.message_bar.show_success(text.replace("%1", str(len(names))).replace("%2", ", ".join(names)))
