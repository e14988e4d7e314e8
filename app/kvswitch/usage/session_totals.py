"""Per session (and client): requests, hit rate, tokens re-processed and time lost, aggregated by SQLite
and streamed.

Issue 39: on a file of a million distinct sessions, reading them into a list and asking SQLite once
more per session for its last reason took ``kvswitch sessions`` 79 s and 817 MB (``--json`` 98 s and
4.0 GB). Here one GROUP BY answers everything, the last reason included (the largest of the id,
zero-padded, joined to the reason: one pass, no lookup per session), and ``iter_session_summaries``
hands the groups over from a cursor a page at a time, so the reader's memory does not grow with the
number of sessions (SQLite's sorter spills to a temporary file past its cache).

A session is a session id *and* the client that told it (``client_name``, else the gateway's route):
two clients that happen to send the same id are two sessions, each labelled with its own client.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kvswitch.usage.readback import Tally, bad, clean
from kvswitch.usage.schema import local_time

#: the columns the summary reads, cleaned (``readback``): another program's values count as unknown
_SESSION = clean("session")
_CLIENT = f"COALESCE({clean('client_name')}, {clean('client')})"
_PROFILE = clean("profile")
_INPUT, _CACHED = clean("input_tokens"), f"COALESCE({clean('cached_tokens')}, 0)"
_REDONE = f"{_INPUT} - {_CACHED}"
_REUSABLE, _TTFT, _TIME = clean("reusable_tokens"), clean("ttft_ms"), clean("time")
_VERDICT, _REASON = f"COALESCE({clean('verdict')}, '')", clean("reason")
_READ = ("session", "client_name", "client", "profile", "input_tokens", "cached_tokens", "reusable_tokens",
         "ttft_ms", "time", "verdict", "reason")
#: the id's width once zero-padded: the largest ``id:reason`` text is the last reason told
_ID_WIDTH = 20

_SESSIONS = f"""
SELECT {_SESSION} AS s, {_CLIENT} AS c, GROUP_CONCAT(DISTINCT {_PROFILE}), COUNT(*),
       COALESCE(SUM({_INPUT}), 0), COALESCE(SUM({_CACHED}), 0),
       COALESCE(SUM(CASE WHEN {_VERDICT} != 'COLD' AND {_INPUT} > {_CACHED} THEN {_REDONE} END), 0),
       COALESCE(SUM(CASE WHEN {_VERDICT} != 'COLD' AND {_TTFT} IS NOT NULL AND {_REUSABLE} > {_CACHED}
                          AND {_INPUT} > {_CACHED}
                         THEN {_TTFT} * (MIN({_REUSABLE}, {_INPUT}) - {_CACHED}) / ({_REDONE}) END),
                0.0),
       MIN({_TIME}), MAX({_TIME}),
       MAX(CASE WHEN {_REASON} IS NOT NULL THEN printf('%0{_ID_WIDTH}d', id) || {_REASON} END),
       SUM({bad(_READ)})
FROM requests WHERE {{where}} GROUP BY s, c ORDER BY MAX(id)
"""


@dataclass
class SessionSummary:
    """One session (``None``: requests no session was told for) as ``kvswitch sessions`` shows it.

    ``reprocessed_tokens``: prompt minus cached tokens over the requests that were not COLD (the work
    the server redid). ``time_lost_ms``: an estimate, each request's time to first token times the
    share of its uncached prompt that was reusable ((reusable − cached) / (prompt − cached)).
    ``first_seen``/``last_seen`` are ``None`` when no request of it has a time KV Switch could read.
    """

    session: str | None
    client: str | None
    profiles: list[str]
    requests: int
    prompt_tokens: int
    cached_tokens: int
    reprocessed_tokens: int
    time_lost_ms: float
    first_seen: float | None
    last_seen: float | None
    last_reason: str | None

    @property
    def hit_rate(self) -> float:
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    def to_json(self) -> dict[str, Any]:
        """The fields in their order, then ``hit_rate``; built by hand: ``dataclasses.asdict`` (a deep
        copy per field) was 60 % of ``kvswitch sessions``' time on 100,000 sessions."""
        return {"session": self.session, "client": self.client, "profiles": list(self.profiles),
                "requests": self.requests, "prompt_tokens": self.prompt_tokens,
                "cached_tokens": self.cached_tokens, "reprocessed_tokens": self.reprocessed_tokens,
                "time_lost_ms": round(self.time_lost_ms, 1), "first_seen": _shown_time(self.first_seen),
                "last_seen": _shown_time(self.last_seen), "last_reason": self.last_reason,
                "hit_rate": round(self.hit_rate, 4)}


def _shown_time(epoch: float | None) -> str | None:
    return None if epoch is None else local_time(epoch)


def iter_session_summaries(connection: sqlite3.Connection, where: str, args: list[Any],
                           tally: Tally | None = None, chunk: int = 1000) -> Iterator[SessionSummary]:
    """One summary per session and client, the most recently active last, ``chunk`` groups at a time
    from the cursor (the caller owns ``connection`` and closes it)."""
    cursor = connection.execute(_SESSIONS.format(where=where), args)
    while batch := cursor.fetchmany(chunk):
        for (session, client, profiles, requests, prompt, cached, redone, lost, first, last, reason,
             bad_values) in batch:
            if tally is not None and bad_values:
                tally.bad_values += bad_values
            names = sorted(profiles.split(",")) if profiles else []
            yield SessionSummary(session, client, names, requests, prompt, cached, redone,
                                 lost if math.isfinite(lost) else 0.0, first, last,
                                 reason[_ID_WIDTH:] if reason else None)

