"""The main window: the provider list first (the editor opens beside it), then the cache log, verify and
usage tabs.

It is a view over the controller (actions) and the store (data): apply, undo and verify go through the
controller, whose outcome signals drive the message bar, so the tray and the window always agree.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6 import QtCore, QtWidgets
from PySide6.QtCore import QModelIndex, Signal, Slot
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QMainWindow,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from kvswitch.core.errors import KvSwitchError
from kvswitch.ui.control import engine_text
from kvswitch.ui.control.controller import AppController
from kvswitch.ui.profiles.profile_column import ProfileColumnMixin
from kvswitch.ui.qtcompat import connect_for
from kvswitch.ui.shell.window_actions import WindowActionsMixin
from kvswitch.ui.shell.window_dialogs import WindowDialogsMixin
from kvswitch.ui.shell.window_editor import WindowEditorMixin
from kvswitch.ui.shell.window_messages import WindowMessagesMixin
from kvswitch.ui.shell.window_tabs import WindowTabsMixin

if TYPE_CHECKING:
    from kvswitch.core.models import ProfileKind
    from kvswitch.ui.profiles.profile_editor import ProfileEditor

log = logging.getLogger("kvswitch.ui.window")


class MainWindow(WindowEditorMixin, ProfileColumnMixin, WindowActionsMixin, WindowDialogsMixin,
                 WindowMessagesMixin, WindowTabsMixin, QMainWindow):
    """Profiles, editor, log panel and verify card.

    Signals:
        quit_requested(): the user chose Quit (or closed the window where there is no tray).
        language_changed(str): Settings saved another language ("" follows the system); the shell
            rebuilds the window in it, no restart.
    """

    quit_requested = Signal()
    language_changed = Signal(str)

    def __init__(self, controller: AppController, parent: QWidget | None = None, *, deferred: bool = False):
        """Build the window; with ``deferred`` only the frame, and ``build_content()`` does the rest.

        The deferred form lets the app show a window before the engines (pydantic models, the store)
        are imported, which is most of the start-up time.
        """
        super().__init__(parent)
        self.controller = controller
        self.close_to_tray = False
        self.tray_present = False  # set by the shell; decides what Settings' close-to-tray can do
        self.content_built = False
        self.setWindowTitle("KV Switch")
        self.resize(1100, 720)
        # Deferred, the frame paints as bare as a plain window: no text (the first text on screen loads
        # the fonts, ~20 ms) and nothing from the ``Qt`` namespace (PySide6 builds all its enums on
        # first use, ~17 ms); the cards follow on the next event-loop turn.
        if not deferred:
            self.build_content()

    def build_content(self, *, tabs_later: bool = False) -> None:
        """Profiles, editor, log panel and verify card, over the controller's store.

        With ``tabs_later`` the editor and the Cache log and Verify tabs are left for ``build_editor``
        and ``build_tabs`` (the shell calls them once the profiles are listed and the tray is up).
        """
        # Loaded here, after the frame is on screen: the editor imports the engine models.
        from kvswitch.ui.profiles.profile_model import ProfileListModel  # noqa: PLC0415
        from kvswitch.ui.widgets import theme  # noqa: PLC0415
        from kvswitch.ui.widgets.message_bar import MessageBar  # noqa: PLC0415

        self.setWindowIcon(theme.app_icon())
        self.store = self.controller.store
        summary = self.controller.verify_summary
        self.model = ProfileListModel(self.store, self, last_verify=summary.get,
                                      live_for=self.controller.live_for,
                                      usage_of=self.controller.usage_digest.get)
        # the controller outlives this window (rebuilt on a language change): connect_for, throughout
        connect_for(self.model, summary.changed, self.model.refresh_rows)
        connect_for(self.model, self.controller.live_clients_changed, self.model.on_live_clients_changed)
        connect_for(self.model, self.controller.usage_digest.changed, self.model.refresh_rows)
        self.model.store_changed.connect(lambda: self.controller.refresh_live_clients())  # a save, an import
        left = self._build_profile_column()

        self._editor: ProfileEditor | None = None
        # in a scroll area: the window can be made shorter than the form (it needs about 700 px)
        self.editor_page = QtWidgets.QScrollArea()
        self.editor_page.setWidgetResizable(True)
        self.editor_page.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        from kvswitch.ui.profiles.editor_panel import EditorPanel  # noqa: PLC0415

        # the list is the main view; the form opens beside it when asked for, Save pinned below it
        self.editor_panel = EditorPanel(self.editor_page)
        self.editor_panel.close_requested.connect(self.hide_editor)
        self.editor_panel.hide()
        self.profiles_split = QSplitter()
        self.profiles_split.setChildrenCollapsible(False)
        self.profiles_split.addWidget(left)
        self.profiles_split.addWidget(self.editor_panel)
        self.profiles_split.setStretchFactor(0, 3)
        self.profiles_split.setStretchFactor(1, 2)
        self.profiles_split.setSizes([620, 460])
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.profiles_split, self.tr("Profiles"))
        self._add_tab_placeholders()
        self.message_bar = MessageBar()
        central = QWidget()
        central_layout = QVBoxLayout(central)
        central_layout.setContentsMargins(0, 0, 0, 0)
        central_layout.setSpacing(0)
        central_layout.addWidget(self.message_bar)
        central_layout.addWidget(self.tabs, 1)
        self.setCentralWidget(central)

        self._build_actions()
        self._connect()
        if not tabs_later:
            self.build_editor()
            self.build_tabs()
        first = self.model.index(0).data() if self.model.rowCount() else None
        self._select(self.store.active_name or first)
        self.bind_log_to_active()
        self._update_actions()
        self.content_built = True

    # -- construction ------------------------------------------------------------------------------

    def _connect(self) -> None:
        selection = self.list_view.selectionModel()
        selection.currentChanged.connect(self._on_list_current_changed)
        self.list_view.doubleClicked.connect(self._on_list_double_clicked)
        self.model.store_changed.connect(self._on_store_changed)
        self.new_button.clicked.connect(lambda: self.open_gallery())  # as the toolbar's "New profile…"
        self.remove_button.clicked.connect(self._on_remove_clicked)
        self.new_action.triggered.connect(lambda: self.open_gallery())
        self.find_action.triggered.connect(self._on_find_triggered)
        self.filter_edit.textChanged.connect(self._on_filter_text_changed)
        self.client_filter.client_changed.connect(
            lambda: self._on_filter_text_changed(self.filter_edit.text()))
        self.edit_button.clicked.connect(self.show_editor)
        self.edit_action.triggered.connect(self.show_editor)
        self.save_action.triggered.connect(self._on_save_triggered)
        self.empty_state.add_requested.connect(lambda: self.open_gallery())
        self.profile_buttons.duplicate_requested.connect(self._on_duplicate_requested)
        self.profile_buttons.move_requested.connect(self._on_move_requested)
        self.apply_action.triggered.connect(self._on_review_apply_triggered)
        self.undo_action.triggered.connect(self.controller.undo)
        self.verify_action.triggered.connect(self._on_verify_triggered)
        self.import_claude_action.triggered.connect(lambda: self._import("claude"))
        self.import_cc_switch_action.triggered.connect(lambda: self._import("cc-switch"))
        self.quit_action.triggered.connect(self.quit_requested)
        c = self.controller
        connect_for(self, c.profile_applied, self._on_controller_profile_applied)
        connect_for(self, c.apply_failed, self._on_controller_apply_failed)
        connect_for(self, c.undo_finished, self._on_controller_undo_finished)
        connect_for(self, c.undo_failed, self.message_bar.show_error)

    # -- helpers -----------------------------------------------------------------------------------

    def selected_name(self) -> str | None:
        index = self.list_view.currentIndex()
        return str(index.data()) if index.isValid() else None

    def _select(self, name: str | None) -> None:
        row = self.model.row_of(name) if name else -1
        if row >= 0:
            self.list_view.selectionModel().setCurrentIndex(
                self.model.index(row), QtCore.QItemSelectionModel.SelectionFlag.ClearAndSelect)

    def _update_actions(self) -> None:
        name = self.selected_name()
        has = name is not None
        self.apply_action.setEnabled(has)
        self.remove_button.setEnabled(has)
        self.edit_button.setEnabled(has)
        self.verify_action.setEnabled(has and bool(self.store.active_name))
        self.undo_action.setEnabled(self.controller.can_undo())
        row = self.model.row_of(name) if name else -1
        self.profile_buttons.update_for(row, self.model.rowCount())
        self.show_list_page()
        self.filter_edit.setEnabled(self.model.rowCount() > 0)

    def apply_profile(self, name: str, *, review: bool | None = None) -> bool:
        """Apply a profile in one step; failures stay in the message bar.

        With ``review`` (or the setting "always show the changes before applying") the diff is shown
        first and only a confirmed preview is written. Otherwise exactly the plan computed now is
        written, and the message bar offers "Review changes" (that plan) and "Undo".
        """
        try:
            plans = self.controller.plan(name)
        except KvSwitchError as exc:
            message = self.tr("Cannot apply “%1”: %2").replace("%1", name)
            self.message_bar.show_error(message.replace("%2", engine_text.error_text(exc)))
            return False
        if review is None:
            review = bool(self.controller.preference("always_review_changes"))
        if review:
            from kvswitch.ui.profiles.diff_dialog import confirm_and_apply  # noqa: PLC0415

            return confirm_and_apply(self, self.controller, name, plans)
        self._applied_plans = (name, plans)
        return self.controller.apply(name, plans)

    def review_applied_changes(self) -> None:
        """What the last one-click apply wrote, file by file (read-only; Undo is beside it)."""
        applied = getattr(self, "_applied_plans", None)
        if applied is None:
            return
        from kvswitch.ui.profiles.diff_dialog import show_applied  # noqa: PLC0415

        self.review_dialog = show_applied(self, self.controller, *applied)

    def show_and_raise(self) -> None:
        self.show()
        if self.isMinimized():
            self.showNormal()
        self.raise_()
        self.activateWindow()

    # -- slots -------------------------------------------------------------------------------------

    @Slot(QModelIndex, QModelIndex)
    def _on_list_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid() and self._editor is not None:  # an editor built later loads it itself
            self._editor.load_profile(str(current.data()))
            self._update_editor_title()
        self._update_actions()

    @Slot()
    def _on_store_changed(self) -> None:
        name = self._editor.editing if self._editor is not None else None
        if name is not None and self.model.row_of(name) < 0:
            self.editor.new_profile()
        self._on_filter_text_changed(self.filter_edit.text())
        if name is not None and self.selected_name() is None:
            self._select(name)  # a reorder resets the rows; keep the profile being edited selected
        self._update_actions()

    def new_blank_profile(self) -> None:
        """An empty form of the current kind (the New button's menu has one per kind)."""
        self._on_new_kind_chosen(None)

    def _on_new_kind_chosen(self, kind: ProfileKind | None) -> None:
        self.list_view.clearSelection()
        self.list_view.setCurrentIndex(QModelIndex())
        self.editor.new_profile(kind or self.editor.kind_combo.currentData())
        self.show_editor()
        self.editor.name_edit.setFocus()

    @Slot()
    def _on_save_triggered(self, *_args: object) -> None:
        """Ctrl+S: save the form when it is open on a profile (or a new one)."""
        if self._editor is not None and self.editor_panel.isVisible() and not (
                self.profile_page is not None and self.profile_page.showing_welcome):
            self._editor.save()

    @Slot()
    def _on_remove_clicked(self) -> None:
        name = self.selected_name()
        if name is None:
            return
        answer = QtWidgets.QMessageBox.question(self, self.tr("Remove profile"),
                                      self.tr("Remove the profile “%1”? Files it was applied to keep their "
                                              "values until you switch or undo.").replace("%1", name))
        if answer != QtWidgets.QMessageBox.StandardButton.Yes:
            return
        try:
            self.store.remove(name)
        except KvSwitchError as exc:
            self.message_bar.show_error(engine_text.error_text(exc))

    @Slot()
    def _on_apply_triggered(self, *_args: object) -> None:
        name = self.selected_name()
        if name is not None:
            self.apply_profile(name)

    @Slot(QModelIndex)
    def _on_list_double_clicked(self, index: QModelIndex) -> None:
        if index.isValid():
            self._on_card_use_requested(str(index.data()))

    @Slot()
    def _on_review_apply_triggered(self, *_args: object) -> None:
        name = self.selected_name()
        if name is not None:
            self.apply_profile(name, review=True)

    @Slot()
    def _on_verify_triggered(self, *_args: object) -> None:
        self.build_tabs()
        self.tabs.setCurrentWidget(self.verify_card)
        self.controller.start_verify()

    @Slot(str, str)
    def _on_controller_apply_failed(self, name: str, message: str) -> None:
        self.message_bar.show_error(self.tr("“%1” was not applied; nothing was changed. %2")
                                    .replace("%1", name).replace("%2", engine_text.translate(message)))

    @Slot(str)
    def _on_controller_undo_finished(self, message: str) -> None:
        self.message_bar.show_success(message)
        self.bind_log_to_active()
        self._update_actions()

    @Slot(str, dict)
    def _on_verify_fix_requested(self, name: str, fix_env: dict[str, str]) -> None:
        if not self.controller.add_fix_env(name, fix_env):
            return
        self.editor.load_profile(name)
        answer = QtWidgets.QMessageBox.question(self, self.tr("Re-apply profile"),
                                      self.tr("The fix was added to “%1”. Apply the profile again now so "
                                              "new sessions use it?").replace("%1", name))
        if answer == QtWidgets.QMessageBox.StandardButton.Yes:
            self.apply_profile(name)

    # -- Qt overrides ------------------------------------------------------------------------------

    def changeEvent(self, event: QtCore.QEvent) -> None:
        super().changeEvent(event)
        palette_events = (QtCore.QEvent.Type.PaletteChange, QtCore.QEvent.Type.ApplicationPaletteChange)
        if event.type() in palette_events and self.content_built:
            self._refresh_icons()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.close_to_tray and event.spontaneous():
            event.ignore()
            self.hide()
            return
        event.accept()
        if not self.close_to_tray:
            self.quit_requested.emit()  # no tray: the window is the only way in, so closing it quits
