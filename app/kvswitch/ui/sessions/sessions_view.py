"""The Sessions tab: every past conversation of every client, from the clients' own files
(``kvswitch.sessions``), with its tokens, hit rate and cost, and where the cache was lost.

On top the search box and the client / project / period filters, and the indexing progress; the list of
sessions (newest first) beside the chosen session's detail (``session_detail``). Everything goes through
``SessionsController`` (``ui.control.controller_sessions``): the index is read and written on workers,
and the list fills while a pass runs. The tab indexes when it is shown and on Refresh; the tray's pass
(``SessionsController.watch``) keeps it current meanwhile.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QItemSelection, Qt, QTimer, Slot
from PySide6.QtGui import QGuiApplication, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from kvswitch.core.errors import KvSwitchError
from kvswitch.ui.control.clients import client_label
from kvswitch.ui.sessions.session_detail import SessionDetail, default_export_dir
from kvswitch.ui.sessions.sessions_model import SessionsModel

if TYPE_CHECKING:
    from kvswitch.ui.control.controller_sessions import SessionsController

#: typing in the search or project box re-reads the list this long after the last key
TYPING_DELAY_MS = 250


class SessionsView(QWidget):
    """The tab over one ``SessionsController``; ``stop()`` on quit."""

    def __init__(self, controller: SessionsController, parent: QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.search = QLineEdit()
        self.search.setPlaceholderText(self.tr("Search titles, projects, ids, models"))
        self.search.setClearButtonEnabled(True)
        self.client = QComboBox()
        self.client.addItem(self.tr("All clients"), "")
        for key in ("claude", "codex", "opencode"):
            self.client.addItem(client_label(key), key)
        self.project = QLineEdit()
        self.project.setPlaceholderText(self.tr("Project folder contains…"))
        self.since = QComboBox()
        for days, label in ((0, self.tr("All time")), (1, self.tr("Last day")), (7, self.tr("Last 7 days")),
                            (30, self.tr("Last 30 days"))):
            self.since.addItem(label, days)
        self.refresh_button = QPushButton(self.tr("Refresh"))
        self.refresh_button.setToolTip(self.tr("Read what the clients wrote since the last time"))
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(220)
        self.progress.setTextVisible(True)
        self.progress.hide()
        self.status = QLabel(self.tr("Sessions are read from Claude Code's, Codex's and OpenCode's own "
                                     "files; nothing is written to them."))
        self.status.setWordWrap(True)
        self.model = SessionsModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setColumnWidth(2, 260)
        self.detail = SessionDetail()
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        self.table.setMinimumHeight(140)  # a few sessions stay in sight while one is open
        filters = QHBoxLayout()
        filters.addWidget(self.search, 2)
        filters.addWidget(self.client)
        filters.addWidget(self.project, 1)
        filters.addWidget(self.since)
        filters.addWidget(self.refresh_button)
        filters.addWidget(self.progress)
        layout = QVBoxLayout(self)
        layout.addLayout(filters)
        layout.addWidget(self.status)
        layout.addWidget(splitter, 1)
        self.typing = QTimer(self)
        self.typing.setSingleShot(True)
        self.typing.setInterval(TYPING_DELAY_MS)
        self.typing.timeout.connect(self.apply_filters)
        self.search.textChanged.connect(self._on_search_text_changed)
        self.project.textChanged.connect(self._on_search_text_changed)
        self.client.currentIndexChanged.connect(self._on_client_current_index_changed)
        self.since.currentIndexChanged.connect(self._on_client_current_index_changed)
        self.refresh_button.clicked.connect(self.controller.index)
        self.table.selectionModel().selectionChanged.connect(self._on_table_selection_changed)
        c = controller
        c.index_started.connect(self._on_controller_index_started)
        c.index_progressed.connect(self._on_controller_index_progressed)
        c.sessions_indexed.connect(self._on_controller_sessions_indexed)
        c.index_failed.connect(self._on_controller_index_failed)
        c.sessions_listed.connect(self._on_controller_sessions_listed)
        c.session_loaded.connect(self._on_controller_session_loaded)
        c.session_failed.connect(self._on_controller_session_failed)
        self.detail.resume_requested.connect(self._on_detail_resume_requested)
        self.detail.copy_requested.connect(self._on_detail_copy_requested)
        self.detail.export_requested.connect(self._on_detail_export_requested)
        self.shown_once = False

    # -- filters -----------------------------------------------------------------------------------

    @Slot()
    def apply_filters(self) -> None:
        days = int(self.since.currentData() or 0)
        since = time.time() - days * 86400 if days else None
        self.controller.set_filters(self.client.currentData() or None, self.project.text().strip() or None,
                                    since, self.search.text())

    @Slot(str)
    def _on_search_text_changed(self, _text: str) -> None:
        self.typing.start()

    @Slot(int)
    def _on_client_current_index_changed(self, _index: int) -> None:
        self.apply_filters()

    # -- controller --------------------------------------------------------------------------------

    @Slot()
    def _on_controller_index_started(self) -> None:
        self.progress.setRange(0, 0)  # busy until the pass knows how many files it has
        self.progress.show()
        self.refresh_button.setEnabled(False)

    @Slot(int, int)
    def _on_controller_index_progressed(self, done: int, total: int) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat(self.tr("%1 of %2 files").replace("%1", str(done)).replace("%2", str(total)))

    @Slot(object)
    def _on_controller_sessions_indexed(self, report: Any) -> None:
        self.progress.hide()
        self.refresh_button.setEnabled(True)
        text = self.tr("%1 files looked at, %2 read (%3 new bytes).")
        text = text.replace("%1", str(report.files_seen)).replace("%2", str(report.files_read))
        text = text.replace("%3", f"{report.bytes_read:,}")
        if report.notes:
            text += " " + self.tr("%1 files could not be read fully: %2").replace(
                "%1", str(len(report.notes))).replace("%2", "; ".join(
                    f"{Path(path).name}: {notes[0]}" for path, notes in list(report.notes.items())[:3]))
        self.status.setText(text)

    @Slot(str)
    def _on_controller_index_failed(self, message: str) -> None:
        self.progress.hide()
        self.refresh_button.setEnabled(True)
        self.status.setText(self.tr("The sessions index cannot be read: %1").replace("%1", message))

    @Slot(object)
    def _on_controller_sessions_listed(self, sessions: list[Any]) -> None:
        chosen = self.detail.summary
        self.model.set_sessions(sessions)
        if chosen is not None:  # keep the open session selected while the list fills
            for row, summary in enumerate(sessions):
                if (summary.client, summary.session_id) == (chosen.client, chosen.session_id):
                    self.table.selectionModel().blockSignals(True)
                    self.table.selectRow(row)
                    self.table.selectionModel().blockSignals(False)
                    break

    @Slot(QItemSelection, QItemSelection)
    def _on_table_selection_changed(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        rows = self.table.selectionModel().selectedRows()
        summary = self.model.session(rows[0].row()) if rows else None
        if summary is not None:
            self.controller.open_session(summary.session_id)

    @Slot(object, object)
    def _on_controller_session_loaded(self, summary: Any, turns: list[Any]) -> None:
        self.detail.show_session(summary, turns)

    @Slot(str)
    def _on_controller_session_failed(self, message: str) -> None:
        self.detail.show_empty(message)

    # -- actions -----------------------------------------------------------------------------------

    @Slot(object)
    def _on_detail_resume_requested(self, summary: Any) -> None:
        terminal = self.controller.resume(summary)
        if terminal is not None:
            self.status.setText(self.tr("Resuming in %1: %2").replace("%1", Path(terminal).name).replace(
                "%2", summary.resume_command))
            return
        QGuiApplication.clipboard().setText(summary.resume_command)
        self.status.setText(self.tr("No terminal found (set $TERMINAL). The command was copied: %1").replace(
            "%1", summary.resume_command))

    @Slot(object)
    def _on_detail_copy_requested(self, summary: Any) -> None:
        QGuiApplication.clipboard().setText(summary.resume_command)
        self.status.setText(self.tr("Copied: %1").replace("%1", summary.resume_command))

    @Slot(object, object)
    def _on_detail_export_requested(self, summary: Any, turns: list[Any]) -> None:
        start = str(default_export_dir() / self.detail.suggested_name())
        name, _filter = QFileDialog.getSaveFileName(self, self.tr("Export session"), start,
                                                    self.tr("Markdown (*.md)"))
        if name:
            self.export_to(Path(name), summary, turns)

    def export_to(self, path: Path, summary: Any, turns: list[Any]) -> bool:
        """Write the export (the dialog's choice, or a test's path); the status line says how it went."""
        try:
            written = self.controller.export_markdown(path, summary, turns)
        except (OSError, KvSwitchError) as exc:
            self.status.setText(self.tr("The session could not be exported: %1").replace("%1", str(exc)))
            return False
        self.status.setText(self.tr("Exported to %1").replace("%1", str(written)))
        return True

    # -- life --------------------------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:
        """Shown: read what the clients wrote since the last pass, and list what is indexed already."""
        super().showEvent(event)
        if not self.shown_once:
            self.shown_once = True
            self.apply_filters()
        self.controller.index()

    def stop(self) -> None:
        self.typing.stop()
        self.controller.stop()


def add_sessions_tab(window: Any) -> SessionsView:
    """The window's hook: a Sessions tab after the others, over a ``SessionsController`` of the window's
    controller, whose periodic pass also feeds the tray's alert."""
    from PySide6.QtCore import QCoreApplication  # noqa: PLC0415

    from kvswitch.ui.control.controller_sessions import SessionsController  # noqa: PLC0415

    controller = SessionsController(window.controller, window)
    window.sessions_view = SessionsView(controller)
    window.tabs.addTab(window.sessions_view, QCoreApplication.translate("MainWindow", "Sessions"))
    controller.watch()
    return window.sessions_view
