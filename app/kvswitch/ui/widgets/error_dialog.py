"""The unexpected-error dialog: the report, read-only, with a Copy button."""

from __future__ import annotations

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)


class ErrorReportDialog(QDialog):
    """Shows a report with a Copy button; non-modal so the app keeps running."""

    def __init__(self, title: str, summary: str, report: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        layout = QVBoxLayout(self)
        label = QLabel(summary)
        label.setWordWrap(True)
        layout.addWidget(label)
        self.report_view = QPlainTextEdit(report)
        self.report_view.setReadOnly(True)
        self.report_view.setMinimumSize(560, 240)
        layout.addWidget(self.report_view)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        copy_button = QPushButton(self.tr("Copy report"))
        buttons.addButton(copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        copy_button.clicked.connect(self._on_copy_clicked)
        buttons.rejected.connect(self.close)
        layout.addWidget(buttons)

    @Slot()
    def _on_copy_clicked(self) -> None:
        QGuiApplication.clipboard().setText(self.report_view.toPlainText())
