"""The tray's alert for sessions read from the clients' own files (``kvswitch.sessions``).

The gateway's alerts (``usage_alerts``) see only what went through KV Switch; a Claude Code session on
the vendor's own API is seen only in its transcript. After each index pass, the sessions that pass
touched are judged by the same Settings threshold: one whose hit rate (cache reads ÷ all prompt tokens)
fell under it is named once, with its main loss cause, until it rises above again; the first pass only
learns what is already low, so starting the app never floods the tray with last month's sessions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication

from kvswitch.ui.control.clients import client_label
from kvswitch.ui.control.session_words import cause_label
from kvswitch.ui.control.usage_alerts import MIN_CACHEABLE
from kvswitch.ui.i18n import fill

#: at most this many low sessions are looked into per pass (each costs one turn-table read)
MAX_LOOKED_INTO = 10


@dataclass(frozen=True)
class LowSession:
    """A touched session under the threshold, and its costliest loss's main cause ("" when none)."""

    summary: Any
    cause: str


def low_sessions(paths: Any, sessions: list[Any], changed: Iterable[tuple[str, str]], threshold: float,
                 causes: bool = True) -> list[LowSession]:
    """On the worker: of ``sessions`` (the pass's list), those it touched whose hit rate is under
    ``threshold``, each with its costliest loss's cause (one turn-table read each; none when ``causes``
    is False: the first pass names nobody)."""
    from kvswitch.sessions import SessionNotFound, session_turns  # noqa: PLC0415

    wanted = set(changed)
    if not wanted:
        return []
    found: list[LowSession] = []
    for summary in sessions:
        if (summary.client, summary.session_id) not in wanted or summary.prompt < MIN_CACHEABLE:
            continue
        if summary.hit_rate >= threshold:
            continue
        if not causes or len(found) >= MAX_LOOKED_INTO:
            found.append(LowSession(summary, ""))
            continue
        try:
            _summary, turns = session_turns(paths, summary.session_id)
        except SessionNotFound:
            turns = []
        losses = [turn.loss for turn in turns if turn.loss is not None]
        worst = max(losses, key=lambda loss: (loss.lost_cost, loss.lost_tokens), default=None)
        found.append(LowSession(summary, worst.causes[0] if worst is not None and worst.causes else ""))
    return found


class FileSessionAlerts:
    """Remembers which sessions are known to be low; ``feed`` returns the texts for newly low ones."""

    def __init__(self) -> None:
        self._low: set[tuple[str, str]] = set()

    def feed(self, found: list[LowSession], changed: Iterable[tuple[str, str]], threshold: float,
             announce: bool) -> list[str]:
        """``found``: this pass's low sessions; ``changed``: every session it touched (one no longer in
        ``found`` rose above the threshold and may be named again); ``announce``: False on the first pass."""
        low_now = {(item.summary.client, item.summary.session_id) for item in found}
        self._low -= set(changed) - low_now
        texts = []
        for item in found:
            key = (item.summary.client, item.summary.session_id)
            if key in self._low:
                continue
            self._low.add(key)
            if announce:
                texts.append(self.message(item, threshold))
        return texts

    @staticmethod
    def message(item: LowSession, threshold: float) -> str:
        translate = QCoreApplication.translate
        s = item.summary
        short = s.session_id if len(s.session_id) <= 12 else s.session_id[:8] + "…"
        text = translate("FileSessionAlerts", "Session %1 (%2, %3): its %4 calls read %5 of their prompt "
                                              "from the cache, below %6.")
        text = fill(text, short, client_label(s.client), Path(s.project).name or "?", str(s.calls),
                    f"{s.hit_rate:.0%}", f"{threshold:.0%}")
        if item.cause:
            cause = translate("FileSessionAlerts", "Likely cause: %1.")
            text += " " + cause.replace("%1", cause_label(item.cause))
        return text + " " + translate("FileSessionAlerts", "Open the Sessions tab to see where.")
