"""The gateway's judgement of the requests it relayed, for the Cache log (issue 38: one truth).

The Cache log reads the server's log alone: it sees a slot's prompts, not the sessions behind them, so
its own rule ("a prompt shorter than the slot's previous one is a shared prefix") cannot tell a new
conversation's opening from a continued one whose context another session evicted. Measured with
Claude Code 2.1.332 through the gateway to a one-slot local server (docs/desktop-app.md), with no side
request between conversations: the log's rule called the third conversation's opening "partial" and
an evicted turn a "shared prefix", where the gateway, which compared the requests' bytes per session,
recorded a HIT (new conversation: it reused all it could) and a PARTIAL (evicted).

So a request the gateway relayed takes the gateway's verdict: its usage row is the one with the same
prompt and cached tokens, both the server's own numbers (each row once, oldest first). The row is
stored up to seconds after the server's log line (a new conversation is measured first), so a request
is shown by the log's rule until its row arrives, then re-judged. Requests the gateway did not relay
(another client, a verify's probes) keep the log's rule. Pure: no Qt, no I/O.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

#: the gateway's verdicts (``core.verdicts``) as the Cache log's display verdicts; a HIT the server did
#: not see as one (it reused all a new conversation could) is the log's "shared prefix"
_SHOWN = {"PARTIAL": "partial", "MISS": "miss", "COLD": "cold"}
#: rows kept for events not listed yet (a row stored before the log line was read), newest kept
MOST_UNCLAIMED = 2000


@dataclass(frozen=True, slots=True)
class GatewayJudgement:
    """What the gateway recorded for one request: the verdict the Cache log shows, and why."""

    shown: str
    #: the gateway's reason code (``evicted``, ``prefix_changed``…); for an opening, ``new_conversation``
    reason: str | None
    #: the prompt tokens the gateway found reusable (the session's previous request's share)
    reusable: int | None


def shown_verdict(engine_verdict: str, gateway_verdict: str | None) -> str | None:
    """The Cache log's display verdict from the gateway's, ``None`` for a verdict it does not know."""
    if gateway_verdict == "HIT":
        return "hit" if engine_verdict == "hit" else "shared_prefix"
    return _SHOWN.get(gateway_verdict or "")


def judgement(engine_verdict: str, row: Any) -> GatewayJudgement | None:
    shown = shown_verdict(engine_verdict, getattr(row, "verdict", None))
    if shown is None:
        return None
    reason = getattr(row, "reason", None)
    if shown == "shared_prefix" and not reason:
        reason = "new_conversation"
    return GatewayJudgement(shown, reason, getattr(row, "reusable_tokens", None))


def _key(row: Any) -> tuple[int, int] | None:
    """A relayed request's (prompt, cached) tokens; ``None`` for a row that cannot name a request."""
    prompt, cached = getattr(row, "input_tokens", None), getattr(row, "cached_tokens", None)
    if getattr(row, "status", None) != 200 or not isinstance(prompt, int) or not isinstance(cached, int):
        return None
    return prompt, cached


class UnclaimedRows:
    """The gateway's rows no listed request has taken yet, by (prompt, cached) tokens, oldest first."""

    def __init__(self, most: int = MOST_UNCLAIMED) -> None:
        self.most = most
        self._by_counts: dict[tuple[int, int], deque[Any]] = {}
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def add(self, rows: Iterable[Any]) -> None:
        for row in rows:
            key = _key(row)
            if key is None or getattr(row, "verdict", None) not in ("HIT", "PARTIAL", "MISS", "COLD"):
                continue
            self._by_counts.setdefault(key, deque()).append(row)
            self._count += 1
        if self._count > self.most:
            self._keep_newest(self.most // 2)

    def claim(self, prompt: int, cached: int) -> Any | None:
        """The oldest row of a request with these counts, taken (each row names one request)."""
        waiting = self._by_counts.get((prompt, cached))
        if not waiting:
            return None
        row = waiting.popleft()
        if not waiting:
            del self._by_counts[(prompt, cached)]
        self._count -= 1
        return row

    def _keep_newest(self, keep: int) -> None:
        rows = sorted((row for waiting in self._by_counts.values() for row in waiting),
                      key=lambda row: getattr(row, "time", 0.0) or 0.0)
        self._by_counts.clear()
        self._count = 0
        self.add(rows[-keep:])
