"""A capped table of per-request cache events (cutelog's bounded record model, Vorta's COL_* layout).

The table and the chart show a *display* verdict, so the expected losses are not red: the engine's
verdict (``log scan --jsonl``) is kept unchanged in each event, the rule below only re-labels what a
person sees. Per slot (server + slot id) since following started:

- **cold**: the first request seen on a slot that did not hit. Nothing could be reused yet (first
  sight of a prompt, a fresh slot, the first request after the server or the panel started).
- **shared prefix**: a request that did not hit, whose prompt is *shorter* than the slot's previous
  one (a new conversation or a compaction, not the next turn of the same one, which only grows) and
  that still reused more than a chat template's header (``SHARED_MIN_TOKENS``): the system prompt and
  tools two conversations share. A turn that grew its prompt and still lost the cache stays red.

The time column shows the log's own time: the wall-clock time the server printed when it has one,
else the server's own clock (time since it started, ``CacheEvent.server_clock_ms``), and only when
the log carries neither, the time the panel read the lines, under a header that says so. The request
column names the server's own numbers (task and slot, or the request id).

Running totals since following started (``ReuseTotals``) feed the summary strip; they outlive the
table's cap, so a long session's totals stay whole.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QCoreApplication,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)

from kvswitch.ui.control import engine_text
from kvswitch.ui.widgets import theme

if TYPE_CHECKING:
    from kvswitch.logs.model import CacheEvent

#: more cached tokens than a chat template's header and a few words (``logs.diagnose.SMALL_PREFIX``)
SHARED_MIN_TOKENS = 256

COL_TIME, COL_REQUEST, COL_TOKENS, COL_CACHED, COL_NEW, COL_PROMPT_MS, COL_VERDICT = range(7)
#: what the time column shows, best first (``CacheEventsModel.time_basis``)
WALL_CLOCK, SERVER_CLOCK, READ_TIME = "wall", "server", "read"
#: display verdicts whose lost tokens count as re-processed: cold starts and new conversations are expected
LOSSES = frozenset({"miss", "partial"})
EventRole = Qt.ItemDataRole.UserRole + 1

_Index = QModelIndex | QPersistentModelIndex


@dataclass(slots=True)
class ReuseTotals:
    """What the summary strip shows, summed over every request since following started.

    ``chances``: requests that could have reused the cache (all but cold starts and shared prefixes);
    ``hits``: those shown as a hit. ``reprocessed``: per request shown as a miss or partial, the tokens of
    the slot's previous prompt it evaluated again (the part of ``min(previous prompt, this prompt)`` not
    reused); ``lost_ms``: those tokens' share of the request's prompt time.
    """

    requests: int = 0
    chances: int = 0
    hits: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    reprocessed: int = 0
    lost_ms: float = 0.0

    def add(self, event: CacheEvent, shown: str, previous_prompt: int | None) -> None:
        self.requests += 1
        self.prompt_tokens += event.prompt_tokens
        self.cached_tokens += event.cached_tokens
        if shown in ("cold", "shared_prefix"):
            return
        self.chances += 1
        if shown == "hit":
            self.hits += 1
        elif shown in LOSSES and previous_prompt is not None:
            again = max(0, min(previous_prompt, event.prompt_tokens) - event.cached_tokens)
            self.reprocessed += again
            if event.prompt_ms is not None and event.new_tokens > 0:
                self.lost_ms += event.prompt_ms * min(1.0, again / event.new_tokens)


@dataclass(frozen=True, slots=True)
class ShownPoint:
    reuse_ratio: float
    verdict: str
    prompt_ms: float | None


class CacheEventsModel(QAbstractTableModel):
    """Rows are requests, oldest first; at ``max_events`` the oldest rows are removed."""

    def __init__(self, max_events: int = 5000, parent: QObject | None = None):
        super().__init__(parent)
        self.max_events = max_events
        # [event, arrival time, display texts formatted on first use, display verdict]
        self._rows: deque[list[Any]] = deque()
        self._headers = [self.tr("Time"), self.tr("Request"), self.tr("Tokens"), self.tr("Cached"),
                         self.tr("New"), self.tr("Prompt ms"), self.tr("Verdict")]
        self._time_headers = {WALL_CLOCK: self.tr("Time"), SERVER_CLOCK: self.tr("Server clock"),
                              READ_TIME: self.tr("Read at")}
        self._time_tips = {
            WALL_CLOCK: self.tr("When the request finished, as the server's log prints it."),
            SERVER_CLOCK: self.tr("When the request finished, by the server's own clock: time since it "
                                  "started (minutes:seconds), printed in front of each line. This log "
                                  "carries no wall-clock time."),
            READ_TIME: self.tr("This log carries no time of its own: this is when KV Switch read the "
                               "request's lines, not when the server handled it."),
        }
        self.time_basis = READ_TIME
        self.totals = ReuseTotals()
        self._verdicts = {"hit": self.tr("hit"), "partial": self.tr("partial"), "miss": self.tr("miss"),
                          "cold": self.tr("cold"), "shared_prefix": self.tr("shared prefix")}
        self._last_prompt: dict[tuple[str, int | None], int] = {}  # per slot: the previous prompt's size

    def shown_verdict(self, event: CacheEvent) -> str:
        """The display verdict of the next request (and remember it for the slot); see the module doc.
        The request also joins the running totals."""
        key = (event.server, event.slot)
        previous = self._last_prompt.get(key)
        self._last_prompt[key] = event.prompt_tokens
        shown = self._display_verdict(event, previous)
        self.totals.add(event, shown, previous)
        return shown

    @staticmethod
    def _display_verdict(event: CacheEvent, previous: int | None) -> str:
        verdict = event.verdict
        if verdict == "hit":
            return verdict
        if previous is None:
            return "cold"
        if event.prompt_tokens < previous and event.cached_tokens > SHARED_MIN_TOKENS:
            return "shared_prefix"
        return verdict

    def points(self, last: int | None = None) -> list[ShownPoint]:
        """The last requests as the chart draws them: reuse, display verdict, prompt time."""
        rows = list(self._rows) if last is None else list(islice(reversed(self._rows), max(0, last)))[::-1]
        return [ShownPoint(row[0].reuse_ratio, row[3], row[0].prompt_ms) for row in rows]

    def verdict_at(self, row: int) -> str:
        return str(self._rows[row][3])

    def events(self, last: int | None = None) -> list[CacheEvent]:
        if last is None:
            return [row[0] for row in self._rows]
        newest = [row[0] for row in islice(reversed(self._rows), max(0, last))]
        newest.reverse()
        return newest

    def add_events(self, events: list[CacheEvent]) -> list[str]:
        """List the requests; returns their display verdicts, oldest first: what the tab shows is what
        the tray is told (a new conversation's "shared prefix" is no loss in either)."""
        if not events:
            return []
        shown = [self.shown_verdict(event) for event in events[:-self.max_events]]  # beyond the table's
        # cap: still counted, and their slot remembered, so the totals and the next verdicts stay right
        events = events[-self.max_events:]
        overflow = len(self._rows) + len(events) - self.max_events
        if overflow > 0:
            self.beginRemoveRows(QModelIndex(), 0, overflow - 1)
            for _ in range(overflow):
                self._rows.popleft()
            self.endRemoveRows()
        arrived = time.strftime("%H:%M:%S")
        first = len(self._rows)
        self.beginInsertRows(QModelIndex(), first, first + len(events) - 1)
        # the time text is formatted with the rest of the row, on first display: a burst lists thousands
        rows = [[event, arrived, None, self.shown_verdict(event)] for event in events]
        self._rows.extend(rows)
        self.endInsertRows()
        shown.extend(str(row[3]) for row in rows)
        basis = _basis(events[-1])
        if basis != self.time_basis:
            self.time_basis = basis
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, COL_TIME, COL_TIME)
        return shown

    def clear(self) -> None:
        self.beginResetModel()
        self._rows.clear()
        self._last_prompt.clear()
        self.totals = ReuseTotals()
        self.time_basis = READ_TIME
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's own default
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's own default
        return 0 if parent.isValid() else len(self._headers)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self._headers):
            return None
        if section == COL_TIME and role == Qt.ItemDataRole.DisplayRole:
            return self._time_headers[self.time_basis]
        if section == COL_TIME and role == Qt.ItemDataRole.ToolTipRole:
            return self._time_tips[self.time_basis]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._headers[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """Display text is formatted once per row: a view asks for every visible cell on every repaint,
        and during a flood that is every tick."""
        row = index.row()
        if not 0 <= row < len(self._rows) or not index.isValid():
            return None
        record = self._rows[row]
        event = record[0]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if record[2] is None:
                record[2] = self._format(event, record[1], record[3])
            texts = record[2]
            return texts[column] if 0 <= column < len(texts) else None
        if role == EventRole:
            return event
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT if column in _NUMERIC else None
        if column == COL_TIME and _basis(event) == READ_TIME:
            if role == Qt.ItemDataRole.ForegroundRole:
                return theme.muted_color()
            if role == Qt.ItemDataRole.ToolTipRole:
                return self._time_tips[READ_TIME]
        if column == COL_VERDICT:
            if role == Qt.ItemDataRole.BackgroundRole:
                return theme.tinted_background(record[3])  # cold and shared prefix: neutral
            if role == Qt.ItemDataRole.ForegroundRole:
                return theme.state_color(record[3])
        if role == Qt.ItemDataRole.ToolTipRole:
            return engine_text.translate(event.reason) or None
        return None

    def _format(self, event: CacheEvent, arrived: str, shown: str) -> tuple[str, ...]:
        verdict = self._verdicts.get(shown, shown)
        when = _when(event, arrived)
        return (when[11:19] if len(when) >= 19 and when[10] in "T " else when, _request_text(event),
                f"{event.prompt_tokens:,}", f"{event.cached_tokens:,}", f"{event.new_tokens:,}",
                "" if event.prompt_ms is None else f"{event.prompt_ms:,.1f}",
                f"{verdict} {event.reuse_ratio:.0%}")


_NUMERIC = frozenset({COL_TOKENS, COL_CACHED, COL_NEW, COL_PROMPT_MS})
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


def _basis(event: CacheEvent) -> str:
    if event.timestamp:
        return WALL_CLOCK
    return READ_TIME if event.server_clock_ms is None else SERVER_CLOCK


def _when(event: CacheEvent, arrived: str) -> str:
    if event.timestamp:
        return event.timestamp
    if event.server_clock_ms is None:
        return arrived
    return server_clock_text(event.server_clock_ms)


def server_clock_text(ms: float) -> str:
    """Time since the server started as ``m:ss.mmm`` (``h:mm:ss.mmm`` past an hour), cut (not rounded) to
    the millisecond, so it reads as the ``M.SS.mmm`` the raw log below shows."""
    seconds, millis = divmod(int(ms + 1e-6), 1000)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours}:{minutes:02d}:{seconds:02d}.{millis:03d}"
    return f"{minutes}:{seconds:02d}.{millis:03d}"


def _request_text(event: CacheEvent) -> str:
    """The server's own numbers for the request: its task and slot, else its request id."""
    translate = QCoreApplication.translate
    if event.requests is not None:  # counted from the server's /metrics, not read from a log line
        if event.requests == 1:
            return translate("CacheEventsModel", "1 request (/metrics)")
        together = translate("CacheEventsModel", "%1 requests together (/metrics)")
        return together.replace("%1", str(event.requests))
    parts = []
    if event.task is not None:
        parts.append(translate("CacheEventsModel", "task %1").replace("%1", str(event.task)))
    if event.slot is not None:
        parts.append(translate("CacheEventsModel", "slot %1").replace("%1", str(event.slot)))
    if parts:
        return " · ".join(parts)
    return event.request_id or translate("CacheEventsModel", "line %1").replace("%1", str(event.last_line))
