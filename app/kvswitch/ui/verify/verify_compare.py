"""Two verify runs side by side: every recorded field and every request's numbers, differences marked.

A person changed one setting between two runs; the point is to see which numbers moved, so rows whose
values differ are shown in bold. Times are recorded in UTC (ISO 8601) and shown in local time.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

if TYPE_CHECKING:
    from kvswitch.verify.history import HistoryEntry


def local_time(iso: str) -> datetime | None:
    """A recorded time in the local zone (a time without a zone was written in UTC), or ``None``."""
    try:
        when = datetime.fromisoformat(iso)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone()


def local_time_text(iso: str) -> str:
    """``2026-11-30 19:00`` in local time; the recorded text itself when it is not a time."""
    when = local_time(iso)
    return iso if when is None else when.strftime("%Y-%m-%d %H:%M")


def ttft_text(entry: HistoryEntry) -> str:
    cold, warm = entry.ttft_cold_ms, entry.ttft_warm_ms
    if cold is None and warm is None:
        return "–"
    return f"{'–' if cold is None else f'{cold:,.0f}'} → {'–' if warm is None else f'{warm:,.0f}'} ms"


def client_text(entry: HistoryEntry) -> str:
    return f"{entry.client} {entry.client_version or ''}".strip() if entry.client else "–"


def _value(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _request_label(request: dict[str, Any], index: int) -> str:
    if "request" in request:
        return str(request["request"])
    if "conversation" in request:
        return f"c{request.get('conversation')} t{request.get('turn')} #{request.get('number', index + 1)}"
    return f"#{index + 1}"


def compare_rows(a: HistoryEntry, b: HistoryEntry) -> list[tuple[str, str, str]]:
    """(field, first run, second run) for the runs' fields, server settings and per-request numbers."""
    rows = [
        ("time", local_time_text(a.time), local_time_text(b.time)),
        ("check", a.check, b.check),
        ("client", client_text(a), client_text(b)),
        ("verdict", a.verdict, b.verdict),
        ("reuse", _pct(a.reuse_ratio), _pct(b.reuse_ratio)),
        ("cached / prompt tokens", f"{_value(a.cached_tokens)} / {_value(a.prompt_tokens)}",
         f"{_value(b.cached_tokens)} / {_value(b.prompt_tokens)}"),
        ("TTFT cold → warm", ttft_text(a), ttft_text(b)),
        ("server build", _value(a.server.get("build")), _value(b.server.get("build"))),
        ("server model", _value(a.server.get("model")), _value(b.server.get("model"))),
        ("env fingerprint", _value(a.env_fingerprint), _value(b.env_fingerprint)),
    ]
    settings_a, settings_b = a.server.get("settings") or {}, b.server.get("settings") or {}
    for key in sorted(set(settings_a) | set(settings_b)):
        rows.append((f"server {key}", _value(settings_a.get(key)), _value(settings_b.get(key))))
    for index in range(max(len(a.requests), len(b.requests))):
        ra = a.requests[index] if index < len(a.requests) else {}
        rb = b.requests[index] if index < len(b.requests) else {}
        label = _request_label(ra or rb, index)
        rows.append((f"request {label}", _request_text(ra), _request_text(rb)))
    return rows


def _pct(ratio: float | None) -> str:
    return "–" if ratio is None else f"{ratio:.1%}"


def _request_text(request: dict[str, Any]) -> str:
    if not request:
        return "–"
    ms = request.get("prompt_ms")
    timing = "" if ms is None else f", {ms:,.0f} ms"
    return f"{_value(request.get('cached_tokens'))} / {_value(request.get('prompt_tokens'))} cached{timing}"


class CompareDialog(QDialog):
    """A three-column table: field, the older run, the newer run."""

    def __init__(self, older: HistoryEntry, newer: HistoryEntry, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(self.tr("Compare verify runs"))
        self.resize(720, 520)
        self.rows = compare_rows(older, newer)
        self.table = QTableWidget(len(self.rows), 3)
        self.table.setHorizontalHeaderLabels([
            self.tr("Field"), self.tr("Older run, %1").replace("%1", local_time_text(older.time)),
            self.tr("Newer run, %1").replace("%1", local_time_text(newer.time))])
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        for row, (name, first, second) in enumerate(self.rows):
            for column, text in enumerate((name, first, second)):
                item = QTableWidgetItem(text)
                if first != second:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(row, column, item)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
