"""The MCP page's Add / Edit form: one server's name, transport, command and arguments with its env, or
URL with its headers, and the clients it is enabled in.

Secret values never reach the form unless the user types them: an edited server's env and header values
arrive as the mask (``McpController.masked_definition``) and a value left as the mask keeps what it was
(``McpController.save``). The server is built with ``core.mcp.McpServer``, so the form refuses exactly
what ``kvswitch mcp add`` refuses (a name such as ``../x``, a stdio server with no command, an HTTP one
without an http(s) URL), with the same words, before anything is written.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from kvswitch.core.errors import KvSwitchError
from kvswitch.ui.i18n import fill

if TYPE_CHECKING:
    from kvswitch.core.mcp import McpServer

CLIENTS = (("claude", "Claude Code"), ("codex", "Codex"), ("opencode", "OpenCode"))


def _pairs(text: str, what: str) -> dict[str, str]:
    """``NAME=VALUE`` lines (blank lines skipped); a line without ``=`` is refused by its number."""
    found: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        name, equals, value = line.partition("=")
        if not equals or not name.strip():
            raise ValueError(fill(QCoreApplication.translate("McpForm", "%1, line %2: write NAME=VALUE"),
                                  what, str(number)))
        found[name.strip()] = value
    return found


class McpServerDialog(QDialog):
    """Add a server (``definition`` None) or edit one (its masked definition)."""

    def __init__(self, definition: dict[str, Any] | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(self.tr("Add MCP server") if definition is None else self.tr("Edit MCP server"))
        self.original: str | None = definition["name"] if definition else None
        self.server: McpServer | None = None
        self.name = QLineEdit(self)
        self.transport = QComboBox(self)
        for key, label in (("stdio", self.tr("Command (stdio)")), ("http", self.tr("Streamable HTTP")),
                           ("sse", self.tr("SSE (older HTTP)"))):
            self.transport.addItem(label, key)
        self.command = QLineEdit(self)
        self.args = QLineEdit(self)
        self.args.setPlaceholderText(self.tr("arguments, as a shell would split them"))
        self.env = QPlainTextEdit(self)
        self.env.setPlaceholderText("NAME=VALUE")
        self.url = QLineEdit(self)
        self.url.setPlaceholderText("https://example.net/mcp")
        self.headers = QPlainTextEdit(self)
        self.headers.setPlaceholderText("NAME=VALUE")
        for text_box in (self.env, self.headers):
            text_box.setFixedHeight(70)
        self.clients = {key: QCheckBox(label, self) for key, label in CLIENTS}
        clients = QHBoxLayout()
        for box in self.clients.values():
            clients.addWidget(box)
        form = QFormLayout()
        form.addRow(self.tr("Name"), self.name)
        form.addRow(self.tr("Transport"), self.transport)
        form.addRow(self.tr("Command"), self.command)
        form.addRow(self.tr("Arguments"), self.args)
        form.addRow(self.tr("Environment"), self.env)
        form.addRow(self.tr("URL"), self.url)
        form.addRow(self.tr("Headers"), self.headers)
        form.addRow(self.tr("Enabled in"), clients)
        self.note = QLabel(self.tr("Values are secrets: shown masked; a value left masked is kept."), self)
        self.note.setWordWrap(True)
        self.error = QLabel(self)
        self.error.setWordWrap(True)
        ok_cancel = QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        buttons = QDialogButtonBox(ok_cancel)
        buttons.accepted.connect(self._on_buttons_accepted)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.note)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.transport.currentIndexChanged.connect(self._on_transport_current_index_changed)
        if definition is not None:
            self._fill(definition)
        self._on_transport_current_index_changed(self.transport.currentIndex())

    def _fill(self, data: dict[str, Any]) -> None:
        self.name.setText(data["name"])
        self.transport.setCurrentIndex(max(0, self.transport.findData(data.get("transport", "stdio"))))
        self.command.setText(data.get("command", ""))
        self.args.setText(shlex.join(data.get("args", [])))
        self.env.setPlainText("\n".join(f"{k}={v}" for k, v in data.get("env", {}).items()))
        self.url.setText(data.get("url", ""))
        self.headers.setPlainText("\n".join(f"{k}={v}" for k, v in data.get("headers", {}).items()))
        for client in data.get("clients", []):
            if client in self.clients:
                self.clients[client].setChecked(True)

    @Slot(int)
    def _on_transport_current_index_changed(self, _index: int) -> None:
        stdio = self.transport.currentData() == "stdio"
        for widget in (self.command, self.args, self.env):
            widget.setEnabled(stdio)
        for widget in (self.url, self.headers):
            widget.setEnabled(not stdio)

    def build(self) -> McpServer:
        """The server the form describes; ``KvSwitchError`` / ``ValueError`` saying what is wrong."""
        from kvswitch.core.mcp import McpServer  # noqa: PLC0415 - the engine's models load on first use

        transport = self.transport.currentData()
        clients = tuple(key for key, box in self.clients.items() if box.isChecked())
        if transport == "stdio":
            return McpServer(self.name.text().strip(), "stdio", command=self.command.text().strip(),
                             args=tuple(shlex.split(self.args.text())),
                             env=_pairs(self.env.toPlainText(), self.tr("Environment")), clients=clients)
        return McpServer(self.name.text().strip(), transport, url=self.url.text().strip(),
                         headers=_pairs(self.headers.toPlainText(), self.tr("Headers")), clients=clients)

    @Slot()
    def _on_buttons_accepted(self) -> None:
        try:
            self.server = self.build()
        except (KvSwitchError, ValueError) as exc:
            self.error.setText(str(exc))
            return
        self.accept()

