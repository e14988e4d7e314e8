"""The gateway's own word on a call the client's files also hold: its verdict and byte-level reason.

A session the gateway relayed has, besides the client's transcript, one usage row per request (same
session id: the client's own header or field). The transcript can prove what its hashes show; the
gateway compared the bytes, so where it recorded the call its reason (``prefix_changed`` at
``system[0]``, looks like the attribution block, fix ``CLAUDE_CODE_ATTRIBUTION_HEADER=0``) is shown
beside the turn. A call is matched to the row of the same prompt and cached tokens nearest in time
(each row once); failing that, to the nearest row in time within ``_NEAR_S`` (a call whose counts the
transcript lacks). Read-only: the usage file is opened through ``usage.queries`` (``mode=ro``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from kvswitch.sessions.model import GatewayReason, Turn
from kvswitch.usage.queries import UsageFilter, iter_rows
from kvswitch.usage.schema import UsageFileError, UsageRow

#: a row this far from the call's time is another call's, whatever its counts
_SAME_COUNTS_S = 900.0
#: without equal counts, only a row this close in time is taken for the call
_NEAR_S = 60.0
#: the most gateway rows read for one session (a session of a million requests reads its first ones)
_MOST_ROWS = 20_000


def with_gateway_reasons(turns: Sequence[Turn], usage_db: Path, session_id: str) -> list[Turn]:
    """``turns`` with ``gateway`` set on each call the gateway recorded (unchanged when it has none).

    Calls with counts are matched first, all of them, so a count-less call near in time never takes
    the row another call's counts name."""
    rows = _rows(usage_db, session_id)
    if not rows:
        return list(turns)
    taken: set[int] = set()
    matched: dict[int, int] = {}
    for position, turn in enumerate(turns):
        at = _same_counts(turn, rows, taken)
        if at is not None:
            taken.add(at)
            matched[position] = at
    for position, turn in enumerate(turns):
        if position not in matched and not turn.call.prompt:
            at = _nearest(turn, rows, taken)
            if at is not None:
                taken.add(at)
                matched[position] = at
    return [
        replace(turn, gateway=reason_of(rows[matched[position]])) if position in matched else turn
        for position, turn in enumerate(turns)
    ]


def _rows(usage_db: Path, session_id: str) -> list[UsageRow]:
    rows: list[UsageRow] = []
    try:
        for row in iter_rows(usage_db, UsageFilter(session=session_id)):
            if row.verdict is not None or row.reason is not None:  # a request the gateway judged
                rows.append(row)
            if len(rows) >= _MOST_ROWS:
                break
    except (UsageFileError, OSError):
        return []  # no usable usage file: the files' own causes still stand
    return rows


def _same_counts(turn: Turn, rows: Sequence[UsageRow], taken: set[int]) -> int | None:
    """The untaken row of the call's prompt and cached tokens nearest in time (within ``_SAME_COUNTS_S``)."""
    call = turn.call
    if not call.prompt:
        return None
    found = [
        (abs(row.time - call.time), at)
        for at, row in enumerate(rows)
        if at not in taken and (row.input_tokens, row.cached_tokens) == (call.prompt, call.cache_read)
    ]
    found = [item for item in found if item[0] <= _SAME_COUNTS_S]
    return min(found)[1] if found else None


def _nearest(turn: Turn, rows: Sequence[UsageRow], taken: set[int]) -> int | None:
    """For a call whose counts the transcript lacks: the untaken row nearest in time, within ``_NEAR_S``."""
    found = [(abs(row.time - turn.call.time), at) for at, row in enumerate(rows) if at not in taken]
    found = [item for item in found if item[0] <= _NEAR_S]
    return min(found)[1] if found else None


def reason_of(row: UsageRow) -> GatewayReason:
    """The row's verdict, reason and evidence, with the evidence put in words."""
    try:
        detail = json.loads(row.reason_detail) if row.reason_detail else {}
    except ValueError:
        detail = {}
    detail = detail if isinstance(detail, dict) else {}
    fix = detail.get("fix") if isinstance(detail.get("fix"), dict) else {}
    return GatewayReason(
        verdict=row.verdict or "",
        reason=row.reason or "",
        part=str(detail.get("part") or ""),
        looks_like=str(detail.get("looks_like") or ""),
        fix={str(key): str(value) for key, value in (fix or {}).items()},
        words=words(row.verdict or "", row.reason or "", detail),
        time=row.time,
    )


def words(verdict: str, reason: str, detail: dict[str, Any]) -> str:
    """One English sentence of what the gateway found (the CLI's line; the window has its own words)."""
    said = f"gateway: {verdict or 'no verdict'}"
    if not reason:
        return said
    said += f", {reason.replace('_', ' ')}"
    if detail.get("part"):
        kind = f" ({detail['kind']})" if detail.get("kind") else ""
        said += f" at {detail['part']}{kind}"
        if isinstance(detail.get("offset"), int):
            said += f", character {detail['offset']:,}"
    if detail.get("looks_like") and not detail.get("new_conversation"):
        said += f"; looks like {str(detail['looks_like']).replace('_', ' ')}"
    if reason == "expired" and detail.get("idle_s") is not None:
        said += f"; idle {detail['idle_s']} s past the cache's {detail.get('ttl_s', '?')} s"
    if reason == "evicted" and isinstance(detail.get("between"), list):
        who = sorted({str(entry.get("who", "?")) for entry in detail["between"] if isinstance(entry, dict)})
        said += f"; ran in between: {', '.join(who) or '?'}"
    if reason == "server" and detail.get("server_said"):
        said += f"; the server said: {detail['server_said']}"
    fix = detail.get("fix")
    if isinstance(fix, dict) and fix:
        said += "; fix: " + ", ".join(f"{key}={value}" for key, value in fix.items())
    return said
