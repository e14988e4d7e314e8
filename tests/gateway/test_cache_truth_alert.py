"""The cache record's two alerts on rows judged from real captured Claude Code 2.1.332 bodies
(``tests/fixtures/claude-code-2.1.332/``): new conversations with the attribution block (its fingerprint
differs per conversation) raise the cross-conversation alert naming the block and its fix; without it
they do not; and neither raises the per-session alert, whose window leaves the opening out. The token
counts fed in stand for a server's answer (the real server's rows: ``tests/e2e/test_e2e_live_cache.py``)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from multidict import CIMultiDict, CIMultiDictProxy

from kvswitch.gateway.truth.alerts import alerts, opening_alerts, openings, rolling_alert
from kvswitch.gateway.truth.live_record import CacheTruth
from kvswitch.usage.schema import UsageRow

CC = Path(__file__).resolve().parent.parent / "fixtures" / "claude-code-2.1.332"
PROMPT = 13_800


def _load(name: str) -> tuple[dict[str, str], dict[str, Any]]:
    data = json.loads((CC / name).read_text())
    return data["headers"], data["body"]


def _send(truth: CacheTruth, profile: str, headers: dict[str, str], body: Any, prompt: int,
          cached: int) -> UsageRow:
    row = UsageRow(0.0, "claude", profile, None, "tiny", None)
    truth.begin(row, CIMultiDictProxy(CIMultiDict(headers)), body)
    row.status, row.upstream, row.input_tokens, row.cached_tokens = 200, f"http://{profile}/v1/messages", \
        prompt, cached
    truth.finish(row, local=True)
    return row


def _conversations(profile: str, names: tuple[str, str], opening_cached: int) -> list[UsageRow]:
    """The two captured new conversations (their first requests as Claude Code sent them), each continued
    once with a turn that hits."""
    truth = CacheTruth()
    rows: list[UsageRow] = []
    for n, name in enumerate(names):
        headers, body = _load(name)
        rows.append(_send(truth, profile, headers, body, PROMPT, 0 if n == 0 else opening_cached))
        turn = copy.deepcopy(body)
        turn["messages"] += [{"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
                             {"role": "user", "content": [{"type": "text", "text": "and more"}]}]
        rows.append(_send(truth, profile, headers, turn, PROMPT + 20, PROMPT))
    return rows


def test_new_conversations_with_the_attribution_block_raise_the_cross_conversation_alert() -> None:
    rows = _conversations("on", ("request_attribution_default_1.json", "request_attribution_default_3.json"),
                          opening_cached=14)
    second = _load("request_attribution_default_3.json")[0]["X-Claude-Code-Session-Id"]
    opened = openings(rows)
    assert [r.session for r in opened] == [second]  # the first conversation was COLD: nothing before it
    assert (opened[0].verdict, opened[0].reason) == ("MISS", "prefix_changed")
    found = opening_alerts(rows)
    assert len(found) == 1
    alert = found[0]
    assert (alert.profile, alert.openings, alert.sessions) == ("on", 1, (second,))
    assert alert.hit_rate < 0.01
    assert alert.reason == "prefix_changed"
    assert (alert.looks_like, alert.part) == ("attribution_block", "system[0]")
    assert alert.fix == {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}
    assert "attribution block in system[0]" in alert.message()
    # inside each conversation the cache works: the per-session rule leaves the opening to the other one
    assert alerts(rows) == []
    assert opening_alerts(rows, count=2) == []  # only one conversation opened against an earlier one


def test_new_conversations_without_the_block_raise_no_alert() -> None:
    rows = _conversations("off", ("request_attribution_0_1.json", "request_attribution_0_3.json"),
                          opening_cached=13_700)
    opened = openings(rows)
    assert [r.verdict for r in opened] == ["HIT"]
    assert opening_alerts(rows) == []
    assert alerts(rows) == []


def test_a_session_that_loses_its_prefix_after_the_opening_is_still_named() -> None:
    rows = _conversations("on", ("request_attribution_default_1.json", "request_attribution_default_3.json"),
                          opening_cached=14)
    lost = copy.copy(rows[-1])
    lost.cached_tokens, lost.verdict, lost.reason = 0, "MISS", "evicted"
    alert = rolling_alert([*rows, lost], str(lost.session))
    assert alert is not None
    assert (alert.requests, alert.reason) == (2, "evicted")  # the continued turn and the lost one
