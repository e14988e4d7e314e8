"""The editor's model map and backend checks: per-role models, "Fetch models" and "Test connection".

Claude Code asks for an Opus, Sonnet or Haiku model by role; a gateway or local server needs each role
mapped to an id it serves (``Profile.models``). Typing ids by heart is where profiles go wrong, so the
box lists what the backend's ``/v1/models`` serves (``verify.connection.list_models``) and tests the
connection with ``check_connection`` — both over the network, so both run off the GUI thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QStringListModel, Signal, Slot
from PySide6.QtWidgets import (
    QCompleter,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from kvswitch.core.errors import KvSwitchError
from kvswitch.ui.control import engine_text
from kvswitch.ui.profiles.check_note import CheckNote

log = logging.getLogger("kvswitch.ui.models")

TIERS = ("opus", "sonnet", "haiku", "subagent", "small_fast")
FETCH_TIMEOUT_S = 10.0
TEST_TIMEOUT_S = 20.0

RunTask = Callable[[Callable[[], Any], Callable[[Any], None], Callable[[BaseException], None]], Any]


class ModelMapBox(QGroupBox):
    """Fields for each Claude Code role and the two backend checks.

    Args:
        draft: the editor's current profile (None while the form is invalid).
        run_task: the controller's background runner; without one the buttons stay disabled.

    Signals:
        changed(): a role's model was edited.
        models_fetched(list): the ids the backend serves (after "Fetch models").
        connection_tested(object): the ``ConnectionReport`` (after "Test connection").
    """

    changed = Signal()
    models_fetched = Signal(list)
    connection_tested = Signal(object)

    def __init__(self, draft: Callable[[], Any], run_task: RunTask | None, parent: QWidget | None = None):
        super().__init__(self.tr("Models per role (Claude Code)"), parent)
        self._draft = draft
        self._run_task = run_task
        self._tasks: list[Any] = []
        labels = {"opus": self.tr("Opus"), "sonnet": self.tr("Sonnet"), "haiku": self.tr("Haiku"),
                  "subagent": self.tr("Subagent"), "small_fast": self.tr("Small/fast")}
        self.fetched = QStringListModel(self)
        completer = QCompleter(self.fetched, self)
        completer.setFilterMode(completer.filterMode().MatchContains)
        self.edits: dict[str, QLineEdit] = {}
        form = QFormLayout()
        for tier in TIERS:
            edit = QLineEdit()
            edit.setObjectName(f"model_{tier}")
            edit.setPlaceholderText(self.tr("same as Model"))
            edit.setCompleter(completer)
            edit.textChanged.connect(self.changed)
            self.edits[tier] = edit
            form.addRow(labels[tier], edit)
        self.fetch_button = QPushButton(self.tr("Fetch models"))
        self.fetch_button.setToolTip(self.tr("List the models the backend serves (/v1/models)"))
        self.test_button = QPushButton(self.tr("Test connection"))
        self.test_button.setToolTip(self.tr("Send one small request and explain any failure"))
        self.result_note = CheckNote()  # tinted by outcome, the server's words, Retry on a failure
        self.result_label = self.result_note.text
        buttons = QHBoxLayout()
        buttons.addWidget(self.fetch_button)
        buttons.addWidget(self.test_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.result_note)
        self.fetch_button.clicked.connect(self._on_fetch_clicked)
        self.test_button.clicked.connect(self._on_test_clicked)
        self.result_note.retry_requested.connect(self._on_test_clicked)
        self.update_buttons()

    def values(self) -> dict[str, str | None]:
        return {tier: edit.text().strip() or None for tier, edit in self.edits.items()}

    def set_values(self, models: dict[str, Any]) -> None:
        for tier, edit in self.edits.items():
            edit.blockSignals(True)
            edit.setText(str(models.get(tier) or ""))
            edit.blockSignals(False)
        self.result_note.clear()

    def update_buttons(self) -> None:
        usable = self._run_task is not None and self._draft() is not None
        self.fetch_button.setEnabled(usable)
        self.test_button.setEnabled(usable)

    # -- slots -------------------------------------------------------------------------------------

    def _start(self, op: Callable[[], Any], done: Callable[[Any], None], busy: str) -> None:
        if self._run_task is None:
            return
        self.result_note.show_text(busy, busy=True)
        self.fetch_button.setEnabled(False)
        self.test_button.setEnabled(False)

        def finished(value: Any) -> None:
            self.update_buttons()
            done(value)

        def failed(exc: BaseException) -> None:
            self.update_buttons()
            self.result_note.show_error(engine_text.error_text(exc) if isinstance(exc, KvSwitchError)
                                        else self.tr("Failed: %1").replace("%1", repr(exc)))
            self.connection_tested.emit(None)

        self._tasks = [t for t in self._tasks if getattr(t, "running", False)]
        self._tasks.append(self._run_task(op, finished, failed))

    @Slot()
    def _on_fetch_clicked(self) -> None:
        profile = self._draft()
        if profile is None:
            return
        from kvswitch.verify.connection import list_models  # noqa: PLC0415 - httpx loads on use

        self._start(lambda: list_models(profile, timeout=FETCH_TIMEOUT_S), self._on_models_listed,
                    self.tr("Asking %1 for its models…").replace("%1", profile.base_url))

    def _on_models_listed(self, listing: Any) -> None:
        ids = list(listing.models)
        self.fetched.setStringList(ids)
        shown = ", ".join(ids[:8]) + (" …" if len(ids) > 8 else "")
        self.result_note.show_text(self.tr("%1 model(s) served: %2").replace("%1", str(len(ids)))
                                   .replace("%2", shown or self.tr("none")))
        self.models_fetched.emit(ids)

    @Slot()
    def _on_test_clicked(self) -> None:
        profile = self._draft()
        if profile is None:
            return
        from kvswitch.verify.connection import check_connection  # noqa: PLC0415

        self._start(lambda: check_connection(profile, timeout=TEST_TIMEOUT_S), self._on_connection_checked,
                    self.tr("Testing %1…").replace("%1", profile.base_url))

    def _on_connection_checked(self, report: Any) -> None:
        self.result_note.show_report(report)
        self.connection_tested.emit(report)
