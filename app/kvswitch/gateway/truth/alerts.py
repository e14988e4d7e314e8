"""The hit-rate alerts of the gateway's cache record (pure: usage rows in, alerts or ``None`` out).

Two faults, two rules, because they are fixed in different places:

* **Inside a session** (``rolling_alert``): over the session's last N requests that had something to
  reuse, the share of the reusable tokens the server actually reused. A COLD request is not a fault and
  is left out, and so is the session's *opening*, the first request of a new conversation, judged
  against another conversation: what it loses is the next rule's.
* **Across new conversations** (``opening_alert``): over a profile's last N openings, the share of the
  prompt they share with the conversation before them that the server reused. An opening that first
  differs in its own first message is left out: nothing rendered after that can be reused, and nothing
  is to fix. A client that puts a
  per-conversation value at the head of the prompt loses it on every new conversation and nowhere else:
  Claude Code 2.1.332 without ``CLAUDE_CODE_ATTRIBUTION_HEADER=0`` (its attribution block's fingerprint
  in ``system[0]``), which a per-session rule never sees once a session has a few turns that hit.

Below the threshold (``AppSettings.cache_alert_threshold``, 80% by default) each alert names the reason
that cost the most re-processed tokens (and, for a changed prefix, what the change looks like and its
fix), so the user knows what to fix.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from kvswitch.core.strictparse import loads as strict_json
from kvswitch.gateway.truth.reasons import COLD

DEFAULT_THRESHOLD = 0.8
DEFAULT_REQUESTS = 10
#: openings a profile's cross-conversation rate is taken over: one is enough, because each costs the whole
#: shared prompt (about 14K tokens of Claude Code's, tens of seconds on a CPU) and the tray names a profile
#: at most once per throttle period; a one-off shows as one opening, the client's habit as every one
DEFAULT_OPENINGS = 1


class _Row(Protocol):
    session: str | None
    verdict: str | None
    reason: str | None
    reusable_tokens: int | None
    cached_tokens: int | None


@dataclass(frozen=True, slots=True)
class CacheAlert:
    session: str
    #: reused / reusable tokens over the window
    hit_rate: float
    requests: int
    #: the reason that lost the most tokens in the window, and how many it lost
    reason: str | None
    lost_tokens: int

    def message(self) -> str:
        why = f"; mostly {self.reason.replace('_', ' ')} ({self.lost_tokens} tokens)" if self.reason else ""
        return (f"session {self.session[:13]}: the server reused {self.hit_rate:.0%} of the reusable prompt "
                f"over its last {self.requests} requests{why}")


@dataclass(frozen=True, slots=True)
class OpeningAlert:
    """New conversations on one profile re-process what they share with the conversation before them."""

    profile: str
    hit_rate: float
    #: openings in the window, and the sessions they opened (oldest first)
    openings: int
    sessions: tuple[str, ...]
    reason: str | None
    lost_tokens: int
    #: for a changed prefix: what the change looks like (``attribution_block``), the part, the fix
    looks_like: str | None = None
    part: str | None = None
    fix: dict[str, str] = field(default_factory=dict)

    def message(self) -> str:
        why = f"; mostly {self.reason.replace('_', ' ')} ({self.lost_tokens} tokens)" if self.reason else ""
        shown = self.looks_like and self.part
        what = f", {(self.looks_like or '').replace('_', ' ')} in {self.part}" if shown else ""
        fix = "; fix: " + ", ".join(f"{k}={v}" for k, v in self.fix.items()) if self.fix else ""
        return (f"profile {self.profile}: new conversations reused {self.hit_rate:.0%} of the prompt they "
                f"share with the one before, over the last {self.openings}{why}{what}{fix}")


def _judged(row: _Row) -> bool:
    return bool(row.verdict)


def _openers(rows: Sequence[_Row]) -> dict[str, int]:
    """Each session's opening: the index of its first judged row, when that row had something to reuse
    (a first-ever conversation's COLD start opens nothing: there was nothing before it)."""
    first: dict[str, int] = {}
    for index, row in enumerate(rows):
        if row.session and _judged(row) and row.session not in first:
            first[row.session] = index
    return {session: index for session, index in first.items()
            if rows[index].verdict != COLD and (rows[index].reusable_tokens or 0) > 0}


def _rate(window: Sequence[_Row]) -> tuple[float, str | None, int]:
    reusable = sum(row.reusable_tokens or 0 for row in window)
    reused = sum(min(row.cached_tokens or 0, row.reusable_tokens or 0) for row in window)
    lost: dict[str, int] = {}
    for row in window:
        missing = (row.reusable_tokens or 0) - min(row.cached_tokens or 0, row.reusable_tokens or 0)
        if row.reason and missing > 0:
            lost[row.reason] = lost.get(row.reason, 0) + missing
    reason = max(lost, key=lambda name: lost[name]) if lost else None
    return (reused / reusable if reusable else 1.0), reason, (lost.get(reason, 0) if reason else 0)


def rolling_alert(rows: Iterable[_Row], session: str, threshold: float = DEFAULT_THRESHOLD,
                  requests: int = DEFAULT_REQUESTS) -> CacheAlert | None:
    """The alert for ``session`` from its rows (oldest first), or ``None`` while its rate is at or above
    ``threshold`` (or nothing was reusable yet). Its opening is ``opening_alert``'s, not counted here."""
    mine = [row for row in rows if row.session == session]
    opening = _openers(mine).get(session)
    window = [row for index, row in enumerate(mine) if index != opening and _judged(row)
              and row.verdict != COLD and (row.reusable_tokens or 0) > 0][-requests:]
    if not window:
        return None
    rate, reason, lost = _rate(window)
    if rate >= threshold:
        return None
    return CacheAlert(session, rate, len(window), reason, lost)


def alerts(rows: Iterable[_Row], threshold: float = DEFAULT_THRESHOLD,
           requests: int = DEFAULT_REQUESTS) -> list[CacheAlert]:
    """Every session's alert, in the order the sessions first appear."""
    listed = list(rows)
    sessions = list(dict.fromkeys(row.session for row in listed if row.session))
    found = (rolling_alert(listed, session, threshold, requests) for session in sessions)
    return [alert for alert in found if alert is not None]


def openings(rows: Iterable[_Row]) -> list[_Row]:
    """The opening row of every session that opened against an earlier conversation, oldest first."""
    listed = list(rows)
    return [listed[index] for index in sorted(_openers(listed).values())]


def opening_alert(opened: Iterable[_Row], profile: str, threshold: float = DEFAULT_THRESHOLD,
                  count: int = DEFAULT_OPENINGS) -> OpeningAlert | None:
    """The cross-conversation alert of ``profile`` from its sessions' opening rows (``openings``, oldest
    first), or ``None`` while fewer than ``count`` opened or their rate is at or above ``threshold``."""
    window = [row for row in opened if str(getattr(row, "profile", None) or "?") == profile
              and not _own_content(row)][-count:]
    if len(window) < count:
        return None
    rate, reason, lost = _rate(window)
    if rate >= threshold:
        return None
    costliest = max((row for row in window if row.reason == reason),
                    key=lambda row: (row.reusable_tokens or 0) - (row.cached_tokens or 0), default=None)
    detail = _detail(costliest)
    fix = detail.get("fix")
    return OpeningAlert(profile, rate, len(window), tuple(str(row.session) for row in window), reason, lost,
                        _str(detail.get("looks_like")), _str(detail.get("part")),
                        {str(k): str(v) for k, v in fix.items()} if isinstance(fix, dict) else {})


def opening_alerts(rows: Iterable[_Row], threshold: float = DEFAULT_THRESHOLD,
                   count: int = DEFAULT_OPENINGS) -> list[OpeningAlert]:
    """Every profile's cross-conversation alert (the rows of the usage log, oldest first)."""
    opened = openings(rows)
    profiles = list(dict.fromkeys(str(getattr(row, "profile", None) or "?") for row in opened))
    found = (opening_alert(opened, profile, threshold, count) for profile in profiles)
    return [alert for alert in found if alert is not None]


def _own_content(row: Any) -> bool:
    """The opening first differs in the conversation's own messages (its first user message): what a
    prefix cache cannot reuse past that point is no fault (measured with Claude Code 2.1.332 on the
    local test server of ``docs/gateway.md``, b11434, with the header off: 6.2k of 13.8k tokens
    reused, the rest rendered after the first message)."""
    if row.reason != "prefix_changed":
        return False
    part = _detail(row).get("part")
    return isinstance(part, str) and part.startswith(("messages", "input", "prompt"))


def _detail(row: Any) -> dict[str, Any]:
    text = getattr(row, "reason_detail", None) if row is not None else None
    if not isinstance(text, str) or not text:
        return {}
    try:
        data = strict_json(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
