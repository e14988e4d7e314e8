"""The window's profile column and what acts on it: cards, filter, empty state, gallery, duplicate, reorder.

A mixin of ``MainWindow`` (it uses the window's model, controller, editor and message bar), kept apart so
the window module stays about wiring the parts together.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, QModelIndex, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from kvswitch.ui.widgets import spacing

if TYPE_CHECKING:
    from PySide6.QtWidgets import QScrollArea

    from kvswitch.ui.control.controller import AppController
    from kvswitch.ui.profiles.profile_editor import ProfileEditor
    from kvswitch.ui.profiles.profile_model import ProfileListModel
    from kvswitch.ui.profiles.profile_page import ProfilePage
    from kvswitch.ui.widgets.message_bar import MessageBar


class ProfileColumnMixin:
    """Builds the left column and handles its actions; ``MainWindow`` supplies the attributes below.

    Texts use the window's translation context ("MainWindow"), where they always were."""

    controller: AppController
    model: ProfileListModel
    editor_page: QScrollArea
    editor_panel: Any
    if TYPE_CHECKING:
        @property
        def editor(self) -> ProfileEditor: ...  # MainWindow builds it on first use
    message_bar: MessageBar
    tabs: Any
    selected_name: Callable[[], str | None]
    _select: Callable[[str | None], None]
    _update_actions: Callable[[], None]
    _fill_new_menu: Callable[[], None]
    apply_profile: Callable[[str], bool]
    open_first_run: Callable[[], None]
    show_editor: Callable[[], None]
    _import: Callable[[str], None]
    profile_page: ProfilePage | None = None
    #: the panel is open only for the welcome (nobody asked for the form): it closes with a first profile
    welcome_opened_panel = False

    def _build_profile_column(self) -> QWidget:
        # The cards' painter and panels load with the content, after the frame's first paint; so does
        # the ``Qt`` namespace, whose first use builds its enums (~17 ms).
        from PySide6.QtCore import Qt  # noqa: PLC0415
        from PySide6.QtWidgets import QListView  # noqa: PLC0415

        from kvswitch.ui.profiles.client_filter import ClientFilter  # noqa: PLC0415
        from kvswitch.ui.profiles.profile_card import ProfileCardDelegate  # noqa: PLC0415
        from kvswitch.ui.profiles.profile_panel import EmptyState, ProfileButtons  # noqa: PLC0415

        self.list_view = QListView()
        self.list_view.setModel(self.model)
        self.list_view.setUniformItemSizes(True)
        self.list_view.setSpacing(spacing.HALF)
        self.list_view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list_view.setResizeMode(QListView.ResizeMode.Adjust)  # cards follow the list's width
        self.list_view.setMinimumWidth(320)
        self.card_delegate = ProfileCardDelegate(self.list_view)
        self.card_delegate.use_requested.connect(self._on_card_use_requested)
        self.list_view.setItemDelegate(self.card_delegate)
        self.list_view.setMouseTracking(True)
        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText(
            QCoreApplication.translate("MainWindow", "Filter profiles (Ctrl+F)"))
        self.filter_edit.setClearButtonEnabled(True)
        self.empty_state = EmptyState()
        self.list_stack = QStackedWidget()
        self.list_stack.addWidget(self.list_view)
        self.list_stack.addWidget(self.empty_state)
        self.no_match_label = QLabel()
        self.no_match_label.setWordWrap(True)
        self.no_match_label.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self.no_match_label.setContentsMargins(spacing.EDGE, spacing.PAGE, spacing.EDGE, spacing.EDGE)
        self.list_stack.addWidget(self.no_match_label)
        self.new_button = QToolButton()
        self.new_button.setText(QCoreApplication.translate("MainWindow", "New profile…"))
        self.new_button.setToolTip(QCoreApplication.translate(
            "MainWindow", "Pick a server or vendor (the arrow: an empty form of one kind)"))
        self.new_button.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        self.new_menu = QMenu(self.new_button)
        self._fill_new_menu()
        self.new_button.setMenu(self.new_menu)
        self.remove_button = QPushButton(QCoreApplication.translate("MainWindow", "Remove"))
        self.edit_button = QPushButton(QCoreApplication.translate("MainWindow", "Edit…"))
        self.edit_button.setToolTip(QCoreApplication.translate("MainWindow", "Open the selected profile "
                                                               "in the editor beside the list (Ctrl+E)"))
        self.client_filter = ClientFilter()
        self.profile_buttons = ProfileButtons()
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(spacing.UNIT, spacing.UNIT, spacing.HALF, spacing.UNIT)
        left_layout.setSpacing(spacing.UNIT)
        top = QHBoxLayout()
        top.addWidget(self.client_filter)
        top.addWidget(self.filter_edit, 1)
        left_layout.addLayout(top)
        left_layout.addWidget(self.list_stack, 1)
        left_layout.addWidget(self.profile_buttons)
        row = QHBoxLayout()
        row.addWidget(self.new_button)
        row.addStretch(1)
        row.addWidget(self.edit_button)
        row.addWidget(self.remove_button)
        left_layout.addLayout(row)
        return left

    @Slot(str)
    def _on_filter_text_changed(self, text: str) -> None:
        from kvswitch.ui.profiles.profile_card import card_lines  # noqa: PLC0415
        from kvswitch.ui.profiles.profile_model import ProfileRole  # noqa: PLC0415

        words = text.casefold().split()
        client = self.client_filter.client
        for row in range(self.model.rowCount()):
            index = self.model.index(row)
            haystack = " ".join(card_lines(index)).casefold()
            matches = all(word in haystack for word in words)
            if client is not None:
                summary = index.data(ProfileRole)
                matches = matches and summary is not None and self.client_filter.accepts(summary.targets)
            self.list_view.setRowHidden(row, not matches)
        self.show_list_page()

    def wrap_editor(self, editor: ProfileEditor) -> QWidget:
        """The Profile tab's page: a welcome until there is a profile (or one is asked for), then the form."""
        from kvswitch.ui.profiles.profile_page import ProfilePage  # noqa: PLC0415

        self.profile_page = page = ProfilePage(editor)
        page.welcome.add_requested.connect(lambda: self.open_gallery())
        page.welcome.setup_requested.connect(lambda: self.open_first_run())
        page.welcome.import_requested.connect(lambda source: self._import(source))
        page.show_for(self.model.rowCount())
        return page

    def show_list_page(self) -> None:
        """The cards; the empty state without profiles; "no match" when the filter hides every card.

        The Profile tab follows: the welcome while there is no profile, unless a new one was asked for."""
        rows = self.model.rowCount()
        if self.profile_page is not None:
            self.profile_page.show_for(rows)
            if not rows:  # the welcome: the ways to a first profile
                self.welcome_opened_panel = not self.editor_panel.isVisible() or self.welcome_opened_panel
                self.editor_panel.show()
            elif self.welcome_opened_panel:  # the first profile came (an import): the list takes the room
                self.welcome_opened_panel = False
                self.editor_panel.hide()
        update_title = getattr(self, "_update_editor_title", None)
        if update_title is not None:
            update_title()
        hidden = sum(self.list_view.isRowHidden(row) for row in range(rows))
        if not rows:
            self.list_stack.setCurrentWidget(self.empty_state)
        elif hidden == rows and not self.filter_edit.text().strip():
            text = QCoreApplication.translate("MainWindow", "No profile writes %1. Choose All to see all %2.")
            shown = text.replace("%1", self.client_filter.label()).replace("%2", str(rows))
            self.no_match_label.setText(shown)
            self.list_stack.setCurrentWidget(self.no_match_label)
        elif hidden == rows:
            text = QCoreApplication.translate("MainWindow", "No profile matches “%1”. Clear the filter to "
                                              "see all %2.")
            self.no_match_label.setText(text.replace("%1", self.filter_edit.text().strip())
                                        .replace("%2", str(rows)))
            self.list_stack.setCurrentWidget(self.no_match_label)
        else:
            self.list_stack.setCurrentWidget(self.list_view)

    @Slot(str)
    def _on_card_use_requested(self, name: str) -> None:
        self._select(name)
        self.apply_profile(name)

    @Slot()
    def _on_find_triggered(self) -> None:
        self.filter_edit.setFocus()
        self.filter_edit.selectAll()

    @Slot()
    def _on_duplicate_requested(self) -> None:
        name = self.selected_name()
        copy = self.controller.duplicate_profile(name) if name else None
        if copy is not None:
            self._select(copy)
            text = QCoreApplication.translate("MainWindow", "Copied “%1” as “%2”.")
            self.message_bar.show_info(text.replace("%1", name or "").replace("%2", copy))

    @Slot(int)
    def _on_move_requested(self, offset: int) -> None:
        name = self.selected_name()
        if name is not None:
            self.controller.move_profile(name, offset)
            self._select(name)
            self._update_actions()

    def open_gallery(self, detector: Callable[[], list[object]] | None = None) -> object:
        """The preset gallery (modeless, so tests and the user can search while detection runs)."""
        from kvswitch.ui.profiles.gallery import PresetGallery  # noqa: PLC0415

        self.gallery = PresetGallery(self.controller, self, detector=detector)  # type: ignore[arg-type]
        self.gallery.picked.connect(self._on_gallery_picked)
        self.gallery.finished.connect(self.gallery.deleteLater)
        self.gallery.open()
        return self.gallery

    @Slot(dict)
    def _on_gallery_picked(self, data: dict[str, object]) -> None:
        self.list_view.clearSelection()
        self.list_view.setCurrentIndex(QModelIndex())
        self.editor.fill_from_preset(data)
        self.show_editor()
        self.editor.key_edit.setFocus()
        self.message_bar.show_info(
            QCoreApplication.translate("MainWindow", "Add the API key if the backend needs one, then Save."))

