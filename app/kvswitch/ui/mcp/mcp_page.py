"""The MCP page: one matrix of servers × clients, each cell a check box that writes the server into (or
takes it out of) that client's file.

Everything goes through ``McpController`` (``ui.control.controller_mcp``): the page holds no server
data, shows only masked text, and is read-only while a write runs. A cell that is enabled but no longer
in the file (after an Undo) is shown partly checked, with a tooltip saying so; checking it writes it
again. Imports (from each client, CC Switch, or pasted JSON/TOML) only add to the list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, Qt, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from kvswitch.ui.control.clients import client_label
from kvswitch.ui.i18n import fill
from kvswitch.ui.mcp.mcp_form import McpServerDialog

if TYPE_CHECKING:
    from kvswitch.ui.control.controller_mcp import McpController, McpRow

# the columns before the clients': name, transport, command or URL
FIXED_COLUMNS = 3


def client_title(spec: str) -> str:
    if spec.startswith("claude-project:"):
        return fill(QCoreApplication.translate("McpPage", "Claude Code (project %1)"), spec.split(":", 1)[1])
    return client_label(spec)


class PasteDialog(QDialog):
    """Pasted JSON or TOML holding many servers, and whether known names take the pasted definition."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(self.tr("Paste MCP servers"))
        self.text = QPlainTextEdit(self)
        self.text.setPlaceholderText(
            self.tr('{"mcpServers": {...}}, {"mcp": {...}} or [mcp_servers.NAME] tables')
        )
        self.replace = QCheckBox(self.tr("Replace servers of the same name"), self)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(self.replace)
        layout.addWidget(buttons)
        self.resize(560, 360)


class McpPage(QWidget):
    """The servers × clients matrix with import and remove actions (see the module docstring)."""

    def __init__(self, controller: McpController, parent: QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self._filling = False
        self.table = QTableWidget(self)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.itemChanged.connect(self._on_table_item_changed)
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.import_button = QToolButton(self)
        self.import_button.setText(self.tr("Import"))
        self.import_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.import_button)
        for source, label in (
            ("claude", self.tr("From Claude Code")),
            ("codex", self.tr("From Codex")),
            ("opencode", self.tr("From OpenCode")),
            ("cc-switch", self.tr("From CC Switch")),
        ):
            menu.addAction(label).triggered.connect(lambda _=False, s=source: self.controller.import_from(s))
        menu.addAction(self.tr("Paste JSON or TOML…")).triggered.connect(self._on_paste_triggered)
        self.import_button.setMenu(menu)
        self.remove_button = QPushButton(self.tr("Remove"), self)
        self.remove_button.clicked.connect(self._on_remove_clicked)
        self.add_button = QPushButton(self.tr("Add…"), self)
        self.add_button.clicked.connect(self._on_add_clicked)
        self.edit_button = QPushButton(self.tr("Edit…"), self)
        self.edit_button.clicked.connect(self._on_edit_clicked)
        bar = QHBoxLayout()
        bar.addWidget(QLabel(self.tr("MCP servers, and the clients each is written into"), self), 1)
        bar.addWidget(self.add_button)
        bar.addWidget(self.edit_button)
        bar.addWidget(self.import_button)
        bar.addWidget(self.remove_button)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.status)
        controller.rows_changed.connect(self._on_controller_rows_changed)
        controller.busy_changed.connect(self._on_controller_busy_changed)
        controller.write_finished.connect(self._on_controller_write_finished)
        controller.write_failed.connect(self._on_controller_write_failed)
        controller.reload()

    # -- controller --------------------------------------------------------------------------------
    @Slot(object)
    def _on_controller_rows_changed(self, rows: list[McpRow]) -> None:
        clients = self.controller.clients
        self._filling = True
        self.table.clear()
        self.table.setColumnCount(FIXED_COLUMNS + len(clients))
        self.table.setHorizontalHeaderLabels(
            [self.tr("Server"), self.tr("Transport"), self.tr("Command or URL"), *map(client_title, clients)]
        )
        self.table.setRowCount(len(rows))
        for row, entry in enumerate(rows):
            for column, text in enumerate((entry.name, entry.transport, entry.summary)):
                self.table.setItem(row, column, QTableWidgetItem(text))
            for offset, client in enumerate(clients):
                self.table.setItem(row, FIXED_COLUMNS + offset, self._cell(entry, client))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self._filling = False
        if rows and self.status.text() == self._empty_text():  # servers arrived after an empty list
            self.status.clear()
        if not rows:
            self.status.setText(self._empty_text())

    def _empty_text(self) -> str:
        return self.tr(
            "No MCP servers yet: import them from a client, CC Switch or pasted "
            "JSON/TOML, or add one with 'kvswitch mcp add'."
        )

    def _cell(self, entry: McpRow, client: str) -> QTableWidgetItem:
        item = QTableWidgetItem()
        item.setFlags(
            Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        )
        state = entry.states.get(client, "off")
        check = {"on": Qt.CheckState.Checked, "pending": Qt.CheckState.PartiallyChecked}
        item.setCheckState(check.get(state, Qt.CheckState.Unchecked))
        item.setData(Qt.ItemDataRole.UserRole, (entry.name, client))
        # what the server adds to every request of this client, as measured ('kvswitch mcp measure')
        item.setText(fill(self.tr("%1 tokens"), entry.costs[client]) if client in entry.costs
                     else self.tr("unknown"))
        item.setToolTip(fill(self.tr("Adds %1 to every request."), entry.cost_details[client])
                        if client in entry.cost_details
                        else self.tr("Tokens it adds to every request: unknown until measured with "
                                     "'kvswitch mcp measure'."))
        if state == "pending":
            item.setToolTip(
                self.tr(
                    "Enabled, but not in the client's file (an undo took it out): check it to write it again"
                )
            )
        return item

    @Slot(bool)
    def _on_controller_busy_changed(self, busy: bool) -> None:
        self.table.setEnabled(not busy)
        for button in (self.import_button, self.remove_button, self.add_button, self.edit_button):
            button.setEnabled(not busy)
        if busy:
            self.status.setText(self.tr("Writing…"))

    @Slot(str)
    def _on_controller_write_finished(self, message: str) -> None:
        self.status.setText(
            fill(self.tr("Done: %1. Undo takes it back."), message) if message else self.tr("Done.")
        )

    @Slot(str)
    def _on_controller_write_failed(self, message: str) -> None:
        self.status.setText(fill(self.tr("Nothing was changed: %1"), message))

    # -- user --------------------------------------------------------------------------------------
    @Slot(QTableWidgetItem)
    def _on_table_item_changed(self, item: QTableWidgetItem) -> None:
        data = item.data(Qt.ItemDataRole.UserRole)
        if self._filling or not data:
            return
        name, client = data
        self.controller.set_enabled(name, client, item.checkState() != Qt.CheckState.Unchecked)

    @Slot()
    def _on_remove_clicked(self) -> None:
        row = self.table.currentRow()
        item = self.table.item(row, 0) if row >= 0 else None
        if item is not None:
            self.controller.remove(item.text())

    @Slot()
    def _on_add_clicked(self) -> None:
        self.open_form(None)

    @Slot()
    def _on_edit_clicked(self) -> None:
        row = self.table.currentRow()
        item = self.table.item(row, 0) if row >= 0 else None
        if item is not None:
            self.open_form(item.text())

    def open_form(self, name: str | None) -> McpServerDialog | None:
        """The Add (``name`` None) or Edit form; an accepted one is saved through the controller."""
        definition = self.controller.masked_definition(name) if name is not None else None
        if name is not None and definition is None:
            return None
        dialog = McpServerDialog(definition, self)
        if dialog.exec() == QDialog.DialogCode.Accepted and dialog.server is not None:
            self.controller.save(dialog.server, dialog.original)
        return dialog

    @Slot()
    def _on_paste_triggered(self) -> None:
        dialog = PasteDialog(self)
        if dialog.exec() == QDialog.DialogCode.Accepted and dialog.text.toPlainText().strip():
            self.controller.import_from("paste", dialog.text.toPlainText(), dialog.replace.isChecked())


def add_mcp_tab(window: Any) -> McpPage:
    """The window's hook: an MCP tab after the others, over an ``McpController`` on the window's paths."""
    from kvswitch.ui.control.controller_mcp import McpController  # noqa: PLC0415

    controller = McpController(window.controller.paths, window)
    window.mcp_page = McpPage(controller)
    window.tabs.addTab(window.mcp_page, QCoreApplication.translate("MainWindow", "MCP"))
    return window.mcp_page
