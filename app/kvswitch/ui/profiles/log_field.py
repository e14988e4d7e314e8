"""The editor's "Server log" row: where the server logs (a file, a directory, a systemd unit, or the
command that runs it), shown and read back in the shape ``LogSource`` validates.

A command is one line in the field, quoted as a shell would (``shlex``), so a model path with spaces
survives a load and a save.
"""

from __future__ import annotations

import shlex
from typing import Any

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLineEdit, QWidget

LOG_KINDS = ("", "file", "directory", "journald", "command")


class LogField(QWidget):
    """A kind combo (none, file, directory, journald, command) and the path, unit or command."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.kind_combo = QComboBox()
        for kind in LOG_KINDS:
            self.kind_combo.addItem(kind or QCoreApplication.translate("ProfileEditor", "none"), kind)
        self.path_edit = QLineEdit()
        self.path_edit.setPlaceholderText(QCoreApplication.translate(  # the editor's texts, as before
            "ProfileEditor", "log file, directory, systemd unit or server command"))
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.kind_combo)
        row.addWidget(self.path_edit, 1)

    def set_source(self, source: Any) -> None:
        """Show a ``LogSource`` (or nothing for ``None``)."""
        kind = source.kind if source is not None else ""
        self.kind_combo.setCurrentIndex(max(0, self.kind_combo.findData(kind)))
        if source is None:
            value = ""
        elif source.kind == "command":
            value = shlex.join(source.command or [])
        else:
            value = (source.unit if source.kind == "journald" else source.path) or ""
        self.path_edit.setText(value)

    def data(self) -> dict[str, Any] | None:
        """The row as ``LogSource`` data, or None for "none"."""
        kind = self.kind_combo.currentData()
        value = self.path_edit.text().strip()
        if kind == "command":
            try:
                command = shlex.split(value)
            except ValueError:  # an unbalanced quote: the model then says a command is needed
                command = []
            return {"kind": "command", "command": command}
        if kind:
            return {"kind": kind, ("unit" if kind == "journald" else "path"): value}
        return None
