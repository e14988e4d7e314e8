"""The main window's toolbar, File menu and the New button's menu (a mixin of ``MainWindow``).

Texts stay in the window's translation context ("MainWindow"), where they always were. The New menu
is filled when it first opens: its entries need the server registry, which start-up does not wait for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from PySide6 import QtCore
from PySide6.QtCore import QCoreApplication, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QToolButton

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

    from kvswitch.core.models import ProfileKind


class WindowActionsMixin:
    """Builds the window's actions; ``MainWindow`` (a ``QMainWindow``) supplies the attributes below."""

    new_menu: QMenu
    open_gallery: Callable[..., object]
    open_settings: Callable[[], None]
    open_first_run: Callable[[], None]
    _optional_dialog_action: Callable[..., Any]
    _on_new_kind_chosen: Callable[[ProfileKind | None], None]

    def _build_actions(self) -> None:
        window = cast("QMainWindow", self)
        toolbar = window.addToolBar(QCoreApplication.translate("MainWindow", "Actions"))
        toolbar.setObjectName("actions")
        toolbar.setToolButtonStyle(QtCore.Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.apply_action = QAction(QCoreApplication.translate("MainWindow", "Review and apply…"), window)
        self.apply_action.setShortcut(QKeySequence("Ctrl+Return"))
        self.undo_action = QAction(QCoreApplication.translate("MainWindow", "Undo last apply"), window)
        self.verify_action = QAction(QCoreApplication.translate("MainWindow", "Verify cache"), window)
        self.verify_action.setShortcut(QKeySequence("Ctrl+R"))
        self.new_action = QAction(QCoreApplication.translate("MainWindow", "New profile…"), window)
        self.new_action.setShortcut(QKeySequence.StandardKey.New)
        self.find_action = QAction(QCoreApplication.translate("MainWindow", "Find profile"), window)
        self.find_action.setShortcut(QKeySequence.StandardKey.Find)
        window.addAction(self.find_action)
        self.save_action = QAction(QCoreApplication.translate("MainWindow", "Save profile"), window)
        self.save_action.setShortcut(QKeySequence.StandardKey.Save)
        window.addAction(self.save_action)
        self.edit_action = QAction(QCoreApplication.translate("MainWindow", "Edit profile"), window)
        self.edit_action.setShortcut(QKeySequence("Ctrl+E"))
        window.addAction(self.edit_action)
        self.import_menu = QMenu(QCoreApplication.translate("MainWindow", "Import"), window)
        self.import_claude_action = self.import_menu.addAction(
            QCoreApplication.translate("MainWindow", "From Claude Code settings"))
        self.import_cc_switch_action = self.import_menu.addAction(
            QCoreApplication.translate("MainWindow", "From CC Switch"))
        import_button = QToolButton()
        import_button.setText(QCoreApplication.translate("MainWindow", "Import"))
        import_button.setMenu(self.import_menu)
        import_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.quit_action = QAction(QCoreApplication.translate("MainWindow", "Quit"), window)
        self.quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        self._import_button = import_button
        self._refresh_icons()
        import_button.setToolButtonStyle(QtCore.Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        toolbar.addAction(self.new_action)
        toolbar.addAction(self.apply_action)
        toolbar.addAction(self.undo_action)
        toolbar.addAction(self.verify_action)
        toolbar.addWidget(import_button)
        menu = window.menuBar().addMenu(QCoreApplication.translate("MainWindow", "&File"))
        menu.addAction(self.new_action)
        optional = self._optional_dialog_action
        self.settings_action = optional(menu, "settings_dialog", QCoreApplication.translate(
            "MainWindow", "Settings…"), self.open_settings)
        self.first_run_action = optional(menu, "first_run", QCoreApplication.translate(
            "MainWindow", "Setup assistant…"), self.open_first_run)
        menu.addMenu(self.import_menu)
        menu.addSeparator()
        menu.addAction(self.quit_action)

    def _fill_new_menu(self) -> None:
        """The New button's menu gets its entries when it first opens: they need the server registry
        (and the engine models with it), which the start-up does not wait for."""
        self.new_menu.aboutToShow.connect(self._on_new_menu_about_to_show)

    @Slot()
    def _on_new_menu_about_to_show(self) -> None:
        if self.new_menu.actions():
            return
        from kvswitch.core.models import ProfileKind  # noqa: PLC0415
        from kvswitch.servers import PRESETS  # noqa: PLC0415

        gallery = self.new_menu.addAction(
            QCoreApplication.translate("MainWindow", "From a server or vendor…"))
        gallery.triggered.connect(lambda: self.open_gallery())
        self.new_menu.addSeparator()
        for kind in ProfileKind:
            label = PRESETS[kind].label if kind in PRESETS else kind.value
            action = self.new_menu.addAction(label)
            action.triggered.connect(lambda _checked=False, k=kind: self._on_new_kind_chosen(k))

    def _refresh_icons(self) -> None:
        """The toolbar's icons, drawn in the palette's text colour (again after a theme switch)."""
        from kvswitch.ui.widgets.icons import tool_icon  # noqa: PLC0415

        for action, icon in ((self.new_action, "plus"), (self.apply_action, "file-diff"),
                             (self.undo_action, "undo-2"), (self.verify_action, "shield-check")):
            action.setIcon(tool_icon(icon))
        self._import_button.setIcon(tool_icon("download"))

