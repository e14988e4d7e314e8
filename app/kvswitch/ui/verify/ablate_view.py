"""Which settings matter, in the Verify tab: ``kvswitch verify PROFILE --client claude|codex --ablate``
as a table, exportable as CSV.

The real client runs once with the profile's env and once without each of its settings
(``verify.ablate.ablate``, the CLI's function), on a worker like every verify, so the card shows its
progress and Cancel stops it. The table is the CLI's own (``AblationReport.table``: re-processed tokens
per continued turn and per new conversation, TTFT, verdict, "matters / does not matter"), the CSV its
``to_csv``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSize, Slot
from PySide6.QtGui import QPaintEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from kvswitch.ui.control import tasks
from kvswitch.ui.i18n import fill
from kvswitch.ui.qtcompat import connect_for
from kvswitch.ui.widgets.reuse_chart import paint_strip

if TYPE_CHECKING:
    from kvswitch.ui.control.controller import AppController


def start_ablate(controller: AppController, client: str, name: str | None = None) -> bool:
    """Run the subtraction for a profile (default: the active one); ``ablate_finished`` brings the report."""
    from kvswitch.ui.control.clients import client_label  # noqa: PLC0415

    target = controller._verify_target(name)
    if target is None:
        return False
    name, profile = target
    binary = controller.find_client_binary(name, client)
    if binary is None:
        return False
    timeout, label = controller.client_verify_timeout_s, client_label(client)

    def op(cancel: threading.Event, progress: tasks.ProgressFn) -> Any:
        from kvswitch.verify.ablate import ablate  # noqa: PLC0415 - loaded on first use

        runs = 1 + len(profile.env)
        done = [0]

        def step(text: str) -> None:
            progress(f"{label} — {text}", min(0.99, done[0] / (runs * 4)))
            done[0] += 1

        return ablate(profile, binary, client=client, timeout=timeout, on_step=step, cancel=cancel)

    controller.verify_client = client
    return controller._start_verify_task(name, "ablate", op, controller.ablate_finished.emit)


@dataclass(frozen=True)
class TrialPoint:
    """One session of the subtraction as a bar: the new conversation's prompt share served from cache."""

    reuse_ratio: float
    verdict: str
    prompt_ms: float | None


def trial_points(report: Any) -> list[TrialPoint]:
    """Per setting two bars, without it then with it (the table's "without → with")."""
    points = []
    for row in report.rows:
        for m in (row.without, row.with_it):
            prompt, cached = m.new_conversation_prompt or 0, m.new_conversation_cached or 0
            points.append(TrialPoint(cached / prompt if prompt else 0.0, m.verdict, m.ttft_new_ms))
    return points


class AblateChart(QWidget):
    """The subtraction at a glance: a setting that matters shows as a pair of unlike bars."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.points: list[TrialPoint] = []
        self.setMinimumHeight(90)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:
        return QSize(400, 110)

    def paintEvent(self, _event: QPaintEvent) -> None:
        legend = self.tr("bars: new conversation's prompt from cache, per setting without | with   "
                         "line: its time to first token")
        paint_strip(self, self.points, self.tr("No subtraction run yet."), legend)


class AblateView(QWidget):
    """The button, the client choice, and the table of the last subtraction."""

    def __init__(self, controller: AppController, card: Any, parent: QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.card = card
        self.report: Any = None
        self.client_combo = QComboBox()
        self.client_combo.addItem("Claude Code", "claude")
        self.client_combo.addItem("Codex", "codex")
        self.run_button = QPushButton(self.tr("Which settings matter?"))
        self.run_button.setToolTip(self.tr("Runs the client once with the profile's env and once without "
                                           "each of its settings, and shows which ones change the cache "
                                           "reuse (kvswitch verify --ablate). Several runs: minutes."))
        self.export_button = QPushButton(self.tr("Export CSV…"))
        self.export_button.setEnabled(False)
        self.summary_label = QLabel()
        self.summary_label.setWordWrap(True)
        self.table = QTableWidget(0, 6)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.hide()
        self.chart = AblateChart()
        self.chart.hide()
        row = QHBoxLayout()
        row.addWidget(self.client_combo)
        row.addWidget(self.run_button)
        row.addWidget(self.export_button)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.summary_label)
        layout.addWidget(self.table)
        layout.addWidget(self.chart)
        self.run_button.clicked.connect(self._on_run_button_clicked)
        self.export_button.clicked.connect(self._on_export_button_clicked)
        connect_for(self, controller.ablate_finished, self._on_controller_ablate_finished)
        connect_for(self, controller.verify_started, lambda _name: self.run_button.setEnabled(False))
        for done in (controller.verify_finished, controller.verify_failed, controller.client_verify_finished):
            connect_for(self, done, lambda *_args: self.run_button.setEnabled(True))

    @Slot()
    def _on_run_button_clicked(self) -> None:
        start_ablate(self.controller, str(self.client_combo.currentData()))

    @Slot(object)
    def _on_controller_ablate_finished(self, report: Any) -> None:
        self.report = report
        self.run_button.setEnabled(True)
        self.card._finish()  # the card's progress belongs to the verify that just ended
        lines = report.table()
        self.table.setColumnCount(len(lines[0]))
        self.table.setHorizontalHeaderLabels(lines[0])
        self.table.setRowCount(len(lines) - 1)
        for r, line in enumerate(lines[1:]):
            for c, cell in enumerate(line):
                self.table.setItem(r, c, QTableWidgetItem(cell))
        self.table.show()
        self.chart.points = trial_points(report)
        self.chart.show()
        self.chart.update()
        matter = [row.setting for row in report.rows if row.matters]
        text = self.tr("%1 %2 through “%3”, each setting without → with. Settings that matter: %4")
        self.summary_label.setText(fill(text, report.client, report.baseline.client_version or "?",
                                        report.profile, ", ".join(matter) if matter else self.tr("none")))
        self.export_button.setEnabled(True)

    def export_csv(self, path: Path) -> Path:
        """Write the table as the CLI's ``--ablate --csv`` does (atomically)."""
        from kvswitch.core.fsutil import atomic_write  # noqa: PLC0415

        return atomic_write(path, self.report.to_csv().encode("utf-8"))

    @Slot()
    def _on_export_button_clicked(self) -> None:
        if self.report is None:
            return
        chosen, _filter = QFileDialog.getSaveFileName(self, self.tr("Export CSV"), "ablate.csv",
                                                      self.tr("CSV files (*.csv)"))
        if chosen:
            try:
                self.export_csv(Path(chosen))
            except OSError as exc:
                self.summary_label.setText(self.tr("Not exported: %1").replace("%1", str(exc)))


def add_ablate_view(card: Any, controller: AppController) -> AblateView:
    """The Verify tab's hook: the subtraction's controls and table above the verify history."""
    view = AblateView(controller, card)
    layout = card.layout()
    layout.insertWidget(max(0, layout.indexOf(card.history)), view)
    card.ablate_view = view
    return view

