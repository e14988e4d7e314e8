"""Matching a session's calls to the gateway's rows of the same session (issue 35): by prompt and cached
tokens nearest in time, each row once, and a call without counts never takes a row another call's
counts name. The rows go through the gateway's own writer (``usage.store``) into a real usage file; the
end-to-end proof with the real clients is tests/e2e/test_e2e_sessions_gateway.py."""

from __future__ import annotations

import json
from pathlib import Path

from kvswitch.sessions.gateway_reasons import with_gateway_reasons
from kvswitch.sessions.model import Call, Turn
from kvswitch.usage.schema import UsageRow
from kvswitch.usage.store import UsageStore

T0 = 1_796_000_000.0
DETAIL = {"part": "system[0]", "kind": "system", "offset": 59, "looks_like": "attribution_block",
          "fix": {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}}


def _row(at: float, prompt: int, cached: int, verdict: str, reason: str | None,
         session: str = "s1") -> UsageRow:
    return UsageRow(at, "claude", "on", "http://127.0.0.1:1/v1/messages", "tiny", 200, prompt, cached, 16,
                    session=session, verdict=verdict, reason=reason,
                    reason_detail=json.dumps({**DETAIL, "prompt": prompt}) if reason else None)


def _turn(index: int, at: float, fresh: int, read: int) -> Turn:
    return Turn(index, Call("claude", "s1", f"req-{index}", at, "tiny", fresh=fresh, cache_read=read), 0.0)


def test_calls_take_the_rows_of_their_own_counts(tmp_path: Path) -> None:
    db = tmp_path / "usage.sqlite3"
    store = UsageStore(db)
    for row in (_row(T0 + 1, 13_817, 48, "MISS", "prefix_changed"), _row(T0 + 9, 14_000, 13_817, "HIT", None),
                _row(T0 + 2, 13_817, 48, "MISS", "prefix_changed", session="other")):
        assert store.add(row)
    store.close()
    # a call without counts just before the opening, then the opening, then a HIT
    turns = [_turn(0, T0, 0, 0), _turn(1, T0 + 0.5, 13_769, 48), _turn(2, T0 + 8, 183, 13_817)]
    found = with_gateway_reasons(turns, db, "s1")
    assert found[1].gateway is not None
    assert (found[1].gateway.verdict, found[1].gateway.reason, found[1].gateway.part) == (
        "MISS", "prefix_changed", "system[0]")
    assert dict(found[1].gateway.fix) == {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}
    assert found[1].gateway.words == ("gateway: MISS, prefix changed at system[0] (system), character 59; "
                                      "looks like attribution block; fix: CLAUDE_CODE_ATTRIBUTION_HEADER=0")
    assert found[2].gateway is not None
    assert found[2].gateway.verdict == "HIT"
    assert found[0].gateway is None  # both rows are other calls' (their counts say so)


def test_no_usage_file_or_another_sessions_rows_leave_the_turns_as_they_were(tmp_path: Path) -> None:
    turns = [_turn(0, T0, 100, 0)]
    assert with_gateway_reasons(turns, tmp_path / "none.sqlite3", "s1") == turns
    (tmp_path / "junk.sqlite3").write_bytes(b"not sqlite" * 100)
    assert with_gateway_reasons(turns, tmp_path / "junk.sqlite3", "s1") == turns
