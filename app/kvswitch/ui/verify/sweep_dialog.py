"""Run a settings sweep from the window: what ``kvswitch sweep`` does, on a worker, with progress and Cancel.

The user gives the server's command (as typed in a terminal; it must listen on the profile's port) and
one ``FLAG=V1,V2`` per line, and optionally a cache tier's own server command (started first in every
setting; its flags are varied as ``TIER.FLAG=V1,V2``); the dialog shows the equivalent ``kvswitch
sweep`` command (to copy, or to run elsewhere), runs the same engine through the controller
(``run_sweep``), reports each step and each setting's verdict as it comes, and the chart above the
verify history reloads when rows arrive.
Closing the dialog during a sweep cancels it: the engine stops the server it started.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QCloseEvent, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from kvswitch.ui.control import engine_text
from kvswitch.ui.control.controller_sweeps import sweep_command_line

if TYPE_CHECKING:
    from kvswitch.ui.control.controller import AppController
    from kvswitch.ui.control.tasks import BackgroundTask


class SweepDialog(QDialog):
    """One sweep of ``profile``'s local server; ``report`` is the engine's ``SweepReport`` once done."""

    def __init__(self, controller: AppController, profile: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.profile = profile
        self.report: Any = None
        self.task: BackgroundTask | None = None
        self.setWindowTitle(self.tr("Settings sweep of “%1”").replace("%1", profile))
        self.setMinimumWidth(640)
        intro = QLabel(self.tr("KV Switch starts the profile's server once per setting, measures each with "
                               "verify's probe and stops it. Stop the server first: the sweep never restarts "
                               "a server it did not start."))
        intro.setWordWrap(True)
        self.server_edit = QLineEdit()
        from kvswitch import servers  # noqa: PLC0415 - the registry loads when the dialog opens

        self.server_edit.setPlaceholderText(servers.SWEEP_EXAMPLE)
        self.tier_edit = QLineEdit()
        self.tier_edit.setPlaceholderText(_tier_example())
        self.vary_edit = QPlainTextEdit()
        self.vary_edit.setPlaceholderText("-np=1,4\n--cache-ram=0,default")
        self.vary_edit.setFixedHeight(self.fontMetrics().lineSpacing() * 4 + 16)
        form = QFormLayout()
        form.addRow(self.tr("Server command:"), self.server_edit)
        form.addRow(self.tr("Cache tier command (optional):"), self.tier_edit)
        form.addRow(self.tr("Settings (FLAG=V1,V2 per line):"), self.vary_edit)
        self.command_label = QLabel()
        self.command_label.setWordWrap(True)
        self.command_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.copy_button = QPushButton(self.tr("Copy command"))
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.hide()
        self.step_label = QLabel()
        self.step_label.setWordWrap(True)
        self.result_view = QPlainTextEdit()
        self.result_view.setReadOnly(True)
        self.result_view.hide()
        self.start_button = QPushButton(self.tr("Start sweep"))
        self.cancel_button = QPushButton(self.tr("Cancel sweep"))
        self.cancel_button.setEnabled(False)
        self.close_button = QPushButton(self.tr("Close"))
        row = QHBoxLayout()
        row.addWidget(self.copy_button)
        row.addStretch(1)
        row.addWidget(self.start_button)
        row.addWidget(self.cancel_button)
        row.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.command_label)
        layout.addWidget(self.progress)
        layout.addWidget(self.step_label)
        layout.addWidget(self.result_view, 1)
        layout.addLayout(row)
        self.server_edit.textChanged.connect(self._on_fields_changed)
        self.vary_edit.textChanged.connect(self._on_fields_changed)
        self.tier_edit.textChanged.connect(self._on_fields_changed)
        self.copy_button.clicked.connect(self._on_copy_button_clicked)
        self.start_button.clicked.connect(self._on_start_button_clicked)
        self.cancel_button.clicked.connect(self._on_cancel_button_clicked)
        self.close_button.clicked.connect(self.close)
        self._on_fields_changed()

    def varies(self) -> list[str]:
        return [line.strip() for line in self.vary_edit.toPlainText().splitlines() if line.strip()]

    def command_line(self) -> str:
        return sweep_command_line(self.profile, self.server_edit.text(), self.varies(), self.tier_edit.text())

    @property
    def running(self) -> bool:
        return self.task is not None and self.task.running

    @Slot()
    def _on_fields_changed(self) -> None:
        ready = bool(self.server_edit.text().strip() and self.varies())
        self.command_label.setText(self.tr("The same from a terminal: %1").replace("%1", self.command_line()))
        self.copy_button.setEnabled(ready)
        self.start_button.setEnabled(ready and not self.running)

    @Slot()
    def _on_copy_button_clicked(self) -> None:
        clipboard = QGuiApplication.clipboard()
        if clipboard is not None:
            clipboard.setText(self.command_line())

    @Slot()
    def _on_start_button_clicked(self) -> None:
        self.report = None
        self.result_view.clear()
        self.result_view.hide()
        self.progress.setValue(0)
        self.progress.show()
        self.step_label.setText(self.tr("Starting…"))
        self._set_running(True)
        self.task = self.controller.run_sweep(self.profile, self.server_edit.text(), self.varies(),
                                              self._on_sweep_step, self._on_sweep_done, self._on_sweep_failed,
                                              tier_command=self.tier_edit.text())

    @Slot()
    def _on_cancel_button_clicked(self) -> None:
        if self.task is not None and self.task.running:
            self.task.cancel()
            self.cancel_button.setEnabled(False)
            self.step_label.setText(self.tr("Cancelling: the server the sweep started is being stopped…"))

    def _on_sweep_step(self, text: str, fraction: float) -> None:
        self.step_label.setText(text)
        self.progress.setValue(int(max(0.0, min(1.0, fraction)) * 1000))

    def _on_sweep_done(self, report: Any) -> None:
        self.report = report
        self._set_running(False)
        self.progress.setValue(1000)
        self.step_label.setText(self.tr("Sweep finished: %n setting(s) measured.", "", len(report.rows)))
        self.result_view.setPlainText(report.describe())
        self.result_view.show()

    def _on_sweep_failed(self, exc: BaseException) -> None:
        self._set_running(False)
        self.progress.hide()
        self.step_label.setText(self.tr("The sweep stopped: %1").replace("%1", engine_text.error_text(exc)))

    def _set_running(self, running: bool) -> None:
        fields = (self.server_edit, self.tier_edit, self.vary_edit)
        for widget in (*fields, self.start_button, self.close_button):
            widget.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        if not running:
            self._on_fields_changed()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Closing during a sweep cancels it (the engine stops its server) and waits for that."""
        if self.task is not None and self.task.running:
            self.task.cancel()
            from kvswitch.ui.control import tasks  # noqa: PLC0415

            tasks.drain(30_000)
        super().closeEvent(event)


def _tier_example() -> str:
    """A cache tier's command as the registry knows it (its program, subcommand and port flag)."""
    from kvswitch.verify.sweep_tier import known_tiers  # noqa: PLC0415 - the registry loads on demand

    tiers = known_tiers()
    if not tiers:
        return ""
    tier = tiers[0]
    return f"{tier.program} {tier.subcommand} --port 6555 {tier.port_flag} 6556"
