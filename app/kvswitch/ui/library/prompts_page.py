"""The Prompts page: the stored presets (size, token cost, where each is in use) above the three clients'
memory files (which preset each holds, and its cost), with add, import, use, copy and remove.

Everything goes through ``LibraryController``: the page holds no file data and never reads a file.
"Use for…" and "Copy to…" show the engine's diff before writing (the review the shell supplies, the
profiles' own dialog), and a file holding text only the user has is replaced only after a confirmation.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, Qt, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from kvswitch.ui.control.clients import client_label
from kvswitch.ui.control.controller_library import UseRequest
from kvswitch.ui.i18n import fill
from kvswitch.ui.library import library_dialogs as dialogs

if TYPE_CHECKING:
    from kvswitch.ui.control.controller_library import LibraryController, UsePlan
    from kvswitch.ui.control.library_state import Cost, PromptsState

# asks whether to write plans: (parent, preset name, plans, render) -> confirmed
Review = Callable[[QWidget | None, str, list[Any], Callable[[list[Any]], str]], bool]


def cost_text(cost: Cost) -> str:
    """"~N tokens (counted by <server>)" or "unknown (<why>)", in the window's language."""
    from kvswitch.ui.control import engine_text  # noqa: PLC0415

    if cost.tokens is not None:
        text = QCoreApplication.translate("PromptsPage", "~%1 tokens (counted by %2)")
        return fill(text, f"{cost.tokens:,}", cost.by)
    return fill(QCoreApplication.translate("PromptsPage", "unknown (%1)"), engine_text.translate(cost.why))


def _table(parent: QWidget, headers: list[str]) -> QTableWidget:
    table = QTableWidget(0, len(headers), parent)
    table.setHorizontalHeaderLabels(headers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.verticalHeader().setVisible(False)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    table.horizontalHeader().setStretchLastSection(True)
    return table


class PromptsPage(QWidget):
    """Presets and memory files (see the module docstring); ``review`` shows plans before writing."""

    def __init__(self, controller: LibraryController, review: Review, parent: QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.review = review
        self.presets = _table(self, [self.tr("Preset"), self.tr("Size"), self.tr("Tokens in every request"),
                                     self.tr("In use by"), self.tr("From")])
        self.presets.itemSelectionChanged.connect(self._update_buttons)
        self.files = _table(self, [self.tr("Client"), self.tr("Memory file"), self.tr("Holds"),
                                   self.tr("Tokens in every request")])
        self.files.itemSelectionChanged.connect(self._update_buttons)
        self.add_button = QToolButton(self)
        self.add_button.setText(self.tr("Add"))
        self.add_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        add_menu = QMenu(self.add_button)
        add_menu.addAction(self.tr("From a file…")).triggered.connect(self._on_add_file_triggered)
        add_menu.addAction(self.tr("Type or paste text…")).triggered.connect(self._on_add_text_triggered)
        self.add_button.setMenu(add_menu)
        self.import_button = QToolButton(self)
        self.import_button.setText(self.tr("Import"))
        self.import_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        import_menu = QMenu(self.import_button)
        for source, label in (("clients", self.tr("Every client's memory file")),
                              ("claude", self.tr("From Claude Code")), ("codex", self.tr("From Codex")),
                              ("opencode", self.tr("From OpenCode")),
                              ("cc-switch", self.tr("From CC Switch"))):
            import_menu.addAction(label).triggered.connect(
                lambda _=False, s=source: self.controller.import_prompts(s))
        self.import_button.setMenu(import_menu)
        self.use_button = QPushButton(self.tr("Use for…"), self)
        self.use_button.clicked.connect(self._on_use_clicked)
        self.remove_button = QPushButton(self.tr("Remove"), self)
        self.remove_button.clicked.connect(self._on_remove_clicked)
        self.copy_button = QPushButton(self.tr("Copy to…"), self)
        self.copy_button.clicked.connect(self._on_copy_clicked)
        top = QHBoxLayout()
        top.addWidget(QLabel(self.tr("Prompt presets: the text of a memory file, kept by name"), self), 1)
        for button in (self.add_button, self.import_button, self.use_button, self.remove_button):
            top.addWidget(button)
        bottom = QHBoxLayout()
        bottom.addWidget(QLabel(self.tr("Memory files: each client adds its file to every request"), self), 1)
        bottom.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.presets, 3)
        layout.addLayout(bottom)
        layout.addWidget(self.files, 2)
        controller.prompts_changed.connect(self._on_controller_prompts_changed)
        controller.busy_changed.connect(self._on_controller_busy_changed)
        controller.preset_planned.connect(self._on_controller_preset_planned)
        controller.hand_edit_found.connect(self._on_controller_hand_edit_found)
        self._update_buttons()

    # -- controller --------------------------------------------------------------------------------
    @Slot(object)
    def _on_controller_prompts_changed(self, state: PromptsState) -> None:
        self.presets.setRowCount(len(state.presets))
        for row, preset in enumerate(state.presets):
            cells = (preset.name, fill(self.tr("%1 bytes"), f"{preset.size:,}"), cost_text(preset.cost),
                     ", ".join(map(client_label, preset.live_in)) or "—", preset.origin)
            for column, text in enumerate(cells):
                self.presets.setItem(row, column, QTableWidgetItem(text))
        self.files.setRowCount(len(state.files))
        for row, entry in enumerate(state.files):
            item = QTableWidgetItem(client_label(entry.client))
            item.setData(Qt.ItemDataRole.UserRole, entry.client)
            self.files.setItem(row, 0, item)
            path = QTableWidgetItem(dialogs.short_path(entry.path))
            path.setToolTip(entry.path)
            self.files.setItem(row, 1, path)
            holds = QTableWidgetItem(self._holds(entry))
            holds.setToolTip(entry.error)
            self.files.setItem(row, 2, holds)
            self.files.setItem(row, 3, QTableWidgetItem(cost_text(entry.cost) if entry.exists else "—"))
        self._update_buttons()

    def _holds(self, entry: Any) -> str:
        if entry.error:
            return self.tr("cannot be read")
        if not entry.exists:
            return self.tr("absent")
        if entry.written:
            return fill(self.tr("preset “%1”"), entry.written)
        if entry.same:
            return fill(self.tr("preset “%1”'s text, not written by KV Switch"), entry.same)
        return self.tr("its own text (not written by KV Switch, or edited since)")

    @Slot(bool)
    def _on_controller_busy_changed(self, busy: bool) -> None:
        self.setEnabled(not busy)
        if not busy:
            self._update_buttons()

    @Slot(object)
    def _on_controller_preset_planned(self, planned: UsePlan) -> None:
        if self.review(self, planned.change.preset, planned.plans, self.controller.render_diff):
            self.controller.apply_use(planned)

    @Slot(object, str)
    def _on_controller_hand_edit_found(self, request: UseRequest, reason: str) -> None:
        shown = reason.split("; nothing was written")[0]
        if dialogs.confirm_replace(self, shown):
            self.controller.plan_use(UseRequest(request.clients, request.preset, request.source, force=True))

    # -- user --------------------------------------------------------------------------------------
    def selected_preset(self) -> str | None:
        row = self.presets.currentRow()
        item = self.presets.item(row, 0) if row >= 0 else None
        return item.text() if item is not None else None

    def selected_client(self) -> str | None:
        row = self.files.currentRow()
        item = self.files.item(row, 0) if row >= 0 else None
        return str(item.data(Qt.ItemDataRole.UserRole)) if item is not None else None

    def use_preset(self, name: str, clients: list[str]) -> None:
        """Plan writing ``name`` for ``clients``; the diff is shown before anything is written."""
        if clients:
            self.controller.plan_use(UseRequest(tuple(clients), preset=name))

    def copy_memory_file(self, source: str, clients: list[str]) -> None:
        if clients:
            self.controller.plan_use(UseRequest(tuple(clients), source=source))

    @Slot()
    def _update_buttons(self) -> None:
        has_preset = self.selected_preset() is not None
        self.use_button.setEnabled(has_preset)
        self.remove_button.setEnabled(has_preset)
        self.copy_button.setEnabled(self.selected_client() is not None)

    @Slot()
    def _on_use_clicked(self) -> None:
        name = self.selected_preset()
        if name is not None:
            self.use_preset(name, dialogs.choose_clients(
                self, fill(self.tr("Use preset “%1”"), name),
                self.tr("Write it as the memory file of:")))

    @Slot()
    def _on_copy_clicked(self) -> None:
        source = self.selected_client()
        if source is not None:
            self.copy_memory_file(source, dialogs.choose_clients(
                self, fill(self.tr("Copy %1's memory file"), client_label(source)),
                self.tr("Write the same text as the memory file of:"), exclude=source))

    @Slot()
    def _on_remove_clicked(self) -> None:
        name = self.selected_preset()
        if name is not None:
            self.controller.remove_preset(name)

    @Slot()
    def _on_add_file_triggered(self) -> None:
        file, _ = QFileDialog.getOpenFileName(self, self.tr("Add a preset from a file"), str(Path.home()),
                                              self.tr("Markdown or text (*.md *.txt);;Any file (*)"))
        if file:
            name = dialogs.ask_preset_name(self, Path(file).stem)
            if name:
                self.controller.add_preset(name, file=file)

    @Slot()
    def _on_add_text_triggered(self) -> None:
        answer = dialogs.ask_preset_text(self)
        if answer is not None:
            self.controller.add_preset(answer[0], text=answer[1])
