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

A request the KV Switch gateway relayed takes the gateway's judgement instead, once its usage row
arrives (``take_gateway_rows``; ``control.gateway_verdicts`` says why): the gateway compared the
requests' bytes per session, so it knows a new conversation from an evicted turn, which the rule above
cannot. The Usage tab, ``kvswitch usage --requests``, the Cache log and the tray then say one thing.

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

from kvswitch.servers.tier_words import describe_tiers
from kvswitch.ui.control import engine_text
from kvswitch.ui.control.gateway_verdicts import GatewayJudgement, UnclaimedRows, judgement
from kvswitch.ui.control.reason_words import reason_text
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
#: listed requests kept waiting for the gateway's row (it comes within seconds; others never do)
UNJUDGED_KEPT = 500

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

    def add(self, event: CacheEvent, shown: str, previous_prompt: int | None, reusable: int | None = None,
            sign: int = 1) -> None:
        """Count a request as shown (``sign`` -1 takes it back: the gateway's row re-judged it).
        ``reusable``: the gateway's reusable tokens, which replace the slot's previous prompt."""
        self.requests += sign
        self.prompt_tokens += sign * event.prompt_tokens
        self.cached_tokens += sign * event.cached_tokens
        if shown in ("cold", "shared_prefix"):
            return
        self.chances += sign
        if shown == "hit":
            self.hits += sign
            return
        reference = reusable if reusable is not None else previous_prompt
        if shown in LOSSES and reference is not None:
            again = max(0, min(reference, event.prompt_tokens) - event.cached_tokens)
            self.reprocessed += sign * again
            if event.prompt_ms is not None and event.new_tokens > 0:
                self.lost_ms += sign * event.prompt_ms * min(1.0, again / event.new_tokens)


@dataclass(slots=True, eq=False)  # a row is itself: two alike requests are two rows
class _Row:
    """One listed request: its texts are formatted on first display (a burst lists thousands)."""

    event: CacheEvent
    arrived: str
    shown: str
    #: the slot's previous prompt when this one arrived (its share of the totals)
    previous: int | None
    texts: tuple[str, ...] | None = None
    gateway: GatewayJudgement | None = None


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
        self._rows: deque[_Row] = deque()
        #: listed requests the gateway has not judged (yet), newest kept; and its rows none has taken
        self._unjudged: deque[_Row] = deque(maxlen=UNJUDGED_KEPT)
        self._unclaimed = UnclaimedRows()
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
        return self._judged(event).shown

    def _judged(self, event: CacheEvent) -> _Row:
        key = (event.server, event.slot)
        previous = self._last_prompt.get(key)
        self._last_prompt[key] = event.prompt_tokens
        shown = self._display_verdict(event, previous)
        self.totals.add(event, shown, previous)
        return _Row(event, "", shown, previous)

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
        return [ShownPoint(row.event.reuse_ratio, row.shown, row.event.prompt_ms) for row in rows]

    def verdict_at(self, row: int) -> str:
        return self._rows[row].shown

    def events(self, last: int | None = None) -> list[CacheEvent]:
        if last is None:
            return [row.event for row in self._rows]
        newest = [row.event for row in islice(reversed(self._rows), max(0, last))]
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
        rows = [self._judged(event) for event in events]
        for row in rows:
            row.arrived = arrived
        self._rows.extend(rows)
        self.endInsertRows()
        self._unjudged.extend(row for row in rows if row.event.requests in (None, 1))
        if len(self._unclaimed):  # a row stored before its log line was read
            self._take_unclaimed()
        shown.extend(row.shown for row in rows)
        basis = _basis(events[-1])
        if basis != self.time_basis:
            self.time_basis = basis
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, COL_TIME, COL_TIME)
        return shown

    def clear(self) -> None:
        self.beginResetModel()
        self._rows.clear()
        self._unjudged.clear()
        self._unclaimed = UnclaimedRows()
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
        event = record.event
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if record.texts is None:
                record.texts = self._format(event, record.arrived, record.shown)
            texts = record.texts
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
                return theme.tinted_background(record.shown)  # cold and shared prefix: neutral
            if role == Qt.ItemDataRole.ForegroundRole:
                return theme.state_color(record.shown)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tip(record)
        return None

    def _tip(self, record: _Row) -> str | None:
        """Why the verdict (the gateway's word, as the Usage tab says it, else the log engine's), then
        which cache tier served the prompt when the tier's counters say (``servers.tier_words``)."""
        if record.gateway is not None:
            why = self.tr("The KV Switch gateway relayed this request: %1").replace(
                "%1", reason_text(record.gateway.reason) if record.gateway.reason else self.tr("a hit"))
        else:
            why = engine_text.translate(record.event.reason)
        tiers = describe_tiers(record.event.tiers)
        return "\n".join(text for text in (why, tiers) if text) or None

    def take_gateway_rows(self, rows: list[Any]) -> str | None:
        """The gateway's usage rows (new since the last call): each listed request it relayed takes its
        verdict, and the totals follow. Returns the newest listed request's verdict when it changed (the
        tray follows the tab), else ``None``."""
        self._unclaimed.add(rows)
        return self._take_unclaimed()

    def _take_unclaimed(self) -> str | None:
        changed: list[_Row] = []
        for record in list(self._unjudged):
            event = record.event
            row = self._unclaimed.claim(event.prompt_tokens, event.cached_tokens)
            if row is None:
                continue
            self._unjudged.remove(record)
            judged = judgement(event.verdict, row)
            if judged is None:
                continue
            self.totals.add(event, record.shown, record.previous, None, sign=-1)
            record.gateway = judged
            record.texts = None
            if judged.shown != record.shown:
                record.shown = judged.shown
                changed.append(record)
            self.totals.add(event, record.shown, record.previous, judged.reusable)
        if not changed or not self._rows:
            return None
        for index in self._indexes_of(changed):
            self.dataChanged.emit(self.index(index, 0), self.index(index, COL_VERDICT))
        newest = self._rows[-1]
        return newest.shown if newest in changed else None

    def _indexes_of(self, records: list[_Row]) -> list[int]:
        """The table rows of ``records`` (recent ones: searched from the newest end)."""
        wanted = {id(record) for record in records}
        found = []
        for offset, record in enumerate(reversed(self._rows)):
            if id(record) in wanted:
                found.append(len(self._rows) - 1 - offset)
                if len(found) == len(wanted):
                    break
        return found

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
