"""The main window's profile form: built on first use, opened beside the list, titled after what it
edits ("Get started" while it shows the welcome).

A mixin of ``MainWindow``, split out so the window's module stays under the project's 400-line size; the
titles keep the ``MainWindow`` translation context.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, Slot

if TYPE_CHECKING:
    from PySide6.QtWidgets import QScrollArea, QSplitter, QTabWidget, QWidget

    from kvswitch.ui.control.controller import AppController
    from kvswitch.ui.profiles.profile_editor import ProfileEditor
    from kvswitch.ui.profiles.profile_model import ProfileListModel
    from kvswitch.ui.profiles.profile_page import ProfilePage


class WindowEditorMixin:
    """``MainWindow`` supplies the list, the splitter, the editor's page and panel, and the slots."""

    controller: AppController
    store: Any
    model: ProfileListModel
    tabs: QTabWidget
    profiles_split: QSplitter
    editor_page: QScrollArea
    editor_panel: Any
    message_bar: Any
    profile_page: ProfilePage | None
    welcome_opened_panel: bool
    _editor: ProfileEditor | None
    selected_name: Callable[[], str | None]
    wrap_editor: Callable[[ProfileEditor], QWidget]
    _on_editor_profile_saved: Callable[[str], None]
    _save_existing_profile: Callable[[str, object], bool]

    @property
    def editor(self) -> ProfileEditor:
        """The profile form, built on first use (or by ``build_editor`` right after start)."""
        if self._editor is None:
            self.build_editor()
        assert self._editor is not None
        return self._editor

    def build_editor(self) -> None:
        """The form in the Profile tab, showing the selected profile."""
        if self._editor is not None:
            return
        from kvswitch.ui.profiles.profile_editor import ProfileEditor  # noqa: PLC0415 - the engine models

        self._editor = ProfileEditor(self.store, run_task=self.controller.run_task,
                                     save_existing=self._save_existing_profile,
                                     add_new=self.controller.add_profile)
        self.editor_page.setWidget(self.wrap_editor(self._editor))  # the welcome until a first profile
        self.editor_panel.attach(self._editor)
        self._editor.profile_saved.connect(self._on_editor_profile_saved)
        self._editor.form_opened.connect(self._update_editor_title)
        self._editor.dirty_changed.connect(lambda _dirty: self._update_editor_title())
        self._editor.save_failed.connect(self.message_bar.show_error)
        name = self.selected_name()
        if name is not None:
            self._editor.load_profile(name)

    def show_editor(self) -> None:
        """Open the form beside the list (the Profiles tab), on the selected profile or a new one."""
        self.tabs.setCurrentIndex(0)
        editor = self.editor  # built on first use
        self.welcome_opened_panel = False
        if not self.editor_panel.isVisible():  # room for the whole form, the list keeps the rest
            total = max(1, self.profiles_split.width())
            want = min(max(editor.sizeHint().width() + 40, 540), int(total * 0.62))
            self.profiles_split.setSizes([max(1, total - want), want])
        self.editor_panel.show()
        self._update_editor_title()

    @Slot()
    def hide_editor(self) -> None:
        """Close the form; the list takes the width again (a welcome with no profile stays)."""
        if self.model.rowCount():
            self.editor_panel.hide()

    def _update_editor_title(self) -> None:
        if self._editor is None:
            return
        page = self.profile_page
        welcome = page is not None and page.showing_welcome
        self.editor_panel.footer_buttons_visible(not welcome)
        name = self._editor.editing
        if welcome:
            title = QCoreApplication.translate("MainWindow", "Get started")
        elif name is None:
            title = QCoreApplication.translate("MainWindow", "New profile")
        else:
            title = QCoreApplication.translate("MainWindow", "Edit “%1”").replace("%1", name)
        self.editor_panel.set_title(title)
