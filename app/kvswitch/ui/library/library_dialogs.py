"""The small questions the Prompts and Skills pages ask: which clients, a preset's name and text, and
whether a hand-edited memory file may be replaced. Each is one module-level function returning the
answer, so a page reads as its actions and a test answers a question without driving a modal loop.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from kvswitch.ui.control.clients import client_label
from kvswitch.ui.i18n import fill

CLIENTS = ("claude", "codex", "opencode")
OK_CANCEL = QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
def short_path(text: str) -> str:
    """``text`` with the home folder written ``~`` (as the CLI's output shows it in the docs)."""
    home = str(Path.home())
    return text.replace(home + "/", "~/") if home not in ("/", "") else text


class ClientsDialog(QDialog):
    """A check box per client; OK gives the checked ones."""

    def __init__(self, title: str, text: str, exclude: str = "", parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(title)
        layout = QVBoxLayout(self)
        label = QLabel(text, self)
        label.setWordWrap(True)
        layout.addWidget(label)
        self.boxes = {c: QCheckBox(client_label(c), self) for c in CLIENTS if c != exclude}
        for box in self.boxes.values():
            layout.addWidget(box)
        buttons = QDialogButtonBox(OK_CANCEL)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def chosen(self) -> list[str]:
        return [c for c, box in self.boxes.items() if box.isChecked()]


class PresetTextDialog(QDialog):
    """A new preset typed or pasted: its name and its text."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(self.tr("New prompt preset"))
        self.name = QLineEdit(self)
        self.text = QPlainTextEdit(self)
        self.text.setPlaceholderText(self.tr("The memory file's text (Markdown)"))
        form = QFormLayout(self)
        form.addRow(self.tr("Name"), self.name)
        form.addRow(self.tr("Text"), self.text)
        buttons = QDialogButtonBox(OK_CANCEL)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.resize(560, 380)


def choose_clients(parent: QWidget | None, title: str, text: str, exclude: str = "") -> list[str]:
    """The clients the user checked, or [] when cancelled."""
    dialog = ClientsDialog(title, text, exclude, parent)
    try:
        return dialog.chosen() if dialog.exec() == QDialog.DialogCode.Accepted else []
    finally:
        dialog.deleteLater()


def ask_preset_text(parent: QWidget | None) -> tuple[str, str] | None:
    """(name, text) of a preset typed in the window, or None."""
    dialog = PresetTextDialog(parent)
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return dialog.name.text().strip(), dialog.text.toPlainText()
    finally:
        dialog.deleteLater()


def ask_preset_name(parent: QWidget | None, suggested: str) -> str | None:
    """A name for a preset read from a file (the file's stem suggested)."""
    title = QCoreApplication.translate("PromptsPage", "Preset name")
    name, accepted = QInputDialog.getText(parent, title, title, text=suggested)
    return name.strip() if accepted and name.strip() else None


def confirm_replace(parent: QWidget | None, reason: str) -> bool:
    """Whether a memory file holding the user's own text may be replaced (a backup is kept)."""
    text = QCoreApplication.translate(
        "PromptsPage",
        "%1\n\nReplace it anyway? A backup is kept, and Undo puts the file back as it is now.",
    )
    title = QCoreApplication.translate("PromptsPage", "Replace a hand-edited memory file?")
    answer = QMessageBox.question(parent, title, fill(text, reason))
    return answer == QMessageBox.StandardButton.Yes
