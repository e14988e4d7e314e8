"""The live cache record's engine on real captured request bodies (Claude Code 2.1.332, Codex 0.169.0,
OpenCode 1.18.33, ``tests/fixtures/``): who sent a request, which session it belongs to, what was
reusable, the verdict and the reason. The token counts fed in stand for a server's answer; the real
server's own numbers are checked in ``tests/e2e/test_e2e_live_cache.py``."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from multidict import CIMultiDict, CIMultiDictProxy

from kvswitch.gateway.truth.digests import digest_prompt, part_text
from kvswitch.gateway.truth.live_record import CacheTruth
from kvswitch.gateway.truth.sessions import client_of, identify
from kvswitch.usage.schema import UsageRow

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CC = FIXTURES / "claude-code-2.1.332"


def _load(name: str) -> tuple[dict[str, str], dict[str, Any]]:
    data = json.loads((FIXTURES / name).read_text())
    if "body" in data:
        return data.get("headers", {}), data["body"]
    return {}, data


def _headers(values: dict[str, str]) -> CIMultiDictProxy[str]:
    return CIMultiDictProxy(CIMultiDict(values))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _send(truth: CacheTruth, headers: dict[str, str], body: Any, prompt: int, cached: int, *,
          upstream: str = "http://127.0.0.1:8080/v1/messages", local: bool = True) -> UsageRow:
    row = UsageRow(0.0, "claude", "p", None, "tiny", None)
    truth.begin(row, _headers(headers), body)
    row.status, row.upstream, row.input_tokens, row.cached_tokens = 200, upstream, prompt, cached
    truth.finish(row, local=local)
    return row


def _detail(row: UsageRow) -> dict[str, Any]:
    assert row.reason_detail is not None
    detail: dict[str, Any] = json.loads(row.reason_detail)
    return detail


# -- who and which session ---------------------------------------------------------------------------
def test_claude_code_is_named_with_its_version_and_its_session_header() -> None:
    headers, body = _load("claude-code-2.1.332/request_attribution_default_1.json")
    found = identify(_headers(headers), body)
    assert (found.client_name, found.client_version) == ("claude-code", "2.1.332")
    assert found.session == "ea25d3a3-02aa-486f-a296-b0af045a36c4"
    assert found.session_source == "header"
    assert found.agent is None
    subagent = identify(_headers({**headers, "x-claude-code-agent-id": "agent-7"}), body)
    assert (subagent.session, subagent.agent) == (found.session, "agent-7")


def test_a_claude_code_body_without_the_header_names_its_session_in_metadata() -> None:
    _, body = _load("claude-code-2.1.332/sessions/continue_02.json")
    found = identify(_headers({"user-agent": "claude-cli/2.1.332 (external, cli)"}), body)
    assert (found.session, found.session_source) == ("3f70c12f-721b-4ba7-a098-53cd31a34633", "body")


def test_codex_sessions_come_from_its_own_ids_and_survive_a_resume() -> None:
    first = identify(_headers({"user-agent": "codex_exec/0.169.0 (Ubuntu 24.4.0; x86_64) xterm"}),
                     _load("codex-0.169.0/resume_01.json")[1])
    resumed = identify(_headers({}), _load("codex-0.169.0/resume_02.json")[1], "codex")
    assert (first.client_name, first.client_version) == ("codex", "0.169.0")
    assert first.session == resumed.session == "01a23321-2608-7550-bdcf-896fbdaed668"
    assert resumed.client_name == "codex"
    assert first.agent is None  # Codex's main agent is "/root"


def test_opencode_without_ids_gets_a_fingerprint_that_stays_while_the_conversation_grows() -> None:
    _, body = _load("opencode-1.18.33/chat_request.json")
    grown = copy.deepcopy(body)
    grown["messages"] += [{"role": "assistant", "content": "hello"}, {"role": "user", "content": "more"}]
    one = identify(_headers({"user-agent": "opencode/1.18.33 ai-sdk/provider-utils/3.0.0"}), body)
    two = identify(_headers({}), grown, "opencode")
    assert (one.client_name, one.client_version) == ("opencode", "1.18.33")
    assert one.session_source == "fingerprint"
    assert one.session is not None
    assert one.session.startswith("fp-")
    assert one.session == two.session
    other = copy.deepcopy(body)
    other["messages"][1]["content"] = "a different first question"
    assert identify(_headers({}), other).session != one.session
    _, title = _load("opencode-1.18.33/title_request.json")
    assert identify(_headers({}), title).session not in (one.session, None)


def test_user_agents() -> None:
    assert client_of("claude-cli/2.1.332 (external, sdk-cli)") == ("claude-code", "2.1.332")
    assert client_of("codex_cli_rs/0.171.0 (Linux)") == ("codex", "0.171.0")
    assert client_of("", "codex_exec") == ("codex", None)
    assert client_of("curl/8.5.0") == ("curl", "8.5.0")
    assert client_of("") == (None, None)


# -- the digest ----------------------------------------------------------------------------------------
def test_the_digest_cuts_claude_codes_request_into_rendered_parts_without_keeping_text() -> None:
    _, body = _load("claude-code-2.1.332/request_attribution_default_1.json")
    digest = digest_prompt(body)
    labels = [part.label for part in digest.parts]
    assert labels[:3] == ["system[0]", "system[1]", "system[2]"]
    assert [p.note for p in digest.parts if p.kind == "tools"][:2] == ["Agent", "Bash"]
    assert digest.attribution == "cc_version=2.1.332.0b8; cc_entrypoint=sdk-cli;"
    assert digest.attribution_part == 0
    inline = [p for p in digest.parts if p.kind == "inline_system"]
    assert [p.label for p in inline] == ["messages[1].content[0]"]  # the environment block, after the user's
    assert all(isinstance(p.digest, int) for p in digest.parts)  # hashes only
    assert part_text(body, "messages[0].content[1]") == body["messages"][0]["content"][1]["text"]


def test_a_moved_cache_control_marker_changes_no_hash() -> None:
    _, two = _load("claude-code-2.1.332/sessions/continue_02.json")
    _, three = _load("claude-code-2.1.332/sessions/continue_03.json")
    # turn 3 moves the marker off turn 2's last user block; that block hashes the same
    assert "cache_control" in two["messages"][3]["content"][0]
    assert "cache_control" not in three["messages"][3]["content"][0]
    assert digest_prompt(two).hashes() == digest_prompt(three).hashes()[:len(digest_prompt(two).parts)]


# -- verdicts and reasons -----------------------------------------------------------------------------
def test_a_continued_conversation_is_cold_then_hits() -> None:
    truth = CacheTruth(clock=Clock())
    rows = [_send(truth, {}, _load(f"claude-code-2.1.332/sessions/continue_0{i}.json")[1], prompt, cached)
            for i, (prompt, cached) in enumerate([(13100, 0), (13150, 13090), (13200, 13140)], start=1)]
    assert [r.verdict for r in rows] == ["COLD", "HIT", "HIT"]
    assert rows[0].reason == "cold"
    assert rows[1].reusable_tokens == 13100  # the previous request's prompt, by the server's count
    assert (rows[2].reason, rows[2].reason_detail) == (None, None)


def test_a_new_conversation_names_the_attribution_block_and_where_it_differs() -> None:
    truth = CacheTruth(clock=Clock())
    one_headers, one = _load("claude-code-2.1.332/request_attribution_default_1.json")
    two_headers, two = _load("claude-code-2.1.332/request_attribution_default_3.json")
    assert _send(truth, one_headers, one, 13800, 0).verdict == "COLD"
    row = _send(truth, two_headers, two, 13805, 4)
    assert (row.verdict, row.reason) == ("MISS", "prefix_changed")
    detail = _detail(row)
    assert (detail["part"], detail["looks_like"]) == ("system[0]", "attribution_block")
    assert detail["attribution"] == {"now": "cc_version=2.1.332.6c6; cc_entrypoint=sdk-cli;",
                                     "before": "cc_version=2.1.332.0b8; cc_entrypoint=sdk-cli;",
                                     "differs_at": 19,
                                     # the part of the block that differs per conversation, named
                                     "fingerprint": {"now": "6c6", "before": "0b8"}}
    text = two["system"][0]["text"]
    assert text[detail["offset_in_part"]:].startswith("6c6")  # exact: both fingerprints are kept
    assert detail["precision"] == 1
    assert detail["fix"] == {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}
    assert "6c6" in detail["excerpt"]
    assert detail["reference"]["same_session"] is False
    assert (row.reusable_tokens or 0) > 13000


def test_without_the_attribution_block_a_new_conversation_reuses_the_shared_prefix() -> None:
    truth = CacheTruth(clock=Clock())
    one_headers, one = _load("claude-code-2.1.332/request_attribution_0_1.json")
    two_headers, two = _load("claude-code-2.1.332/request_attribution_0_3.json")
    _send(truth, one_headers, one, 13780, 0)
    assert _send(truth, two_headers, two, 13781, 13700).verdict == "HIT"


def test_same_prefix_processed_again_names_the_other_session_that_ran_between() -> None:
    truth = CacheTruth(clock=Clock())
    headers_a = {"x-claude-code-session-id": "aaaa", "user-agent": "claude-cli/2.1.332 (external, cli)"}
    headers_b = {"x-claude-code-session-id": "bbbb", "user-agent": "claude-cli/2.1.332 (external, cli)"}
    _send(truth, headers_a, _load("claude-code-2.1.332/sessions/continue_01.json")[1], 13100, 0)
    _send(truth, headers_b, _load("claude-code-2.1.332/request_attribution_default_1.json")[1], 13800, 5)
    row = _send(truth, headers_a, _load("claude-code-2.1.332/sessions/continue_02.json")[1], 13150, 5)
    assert (row.verdict, row.reason) == ("MISS", "evicted")
    detail = _detail(row)
    assert detail["between"] == [{"who": "another session", "session": "bbbb", "agent": None, "requests": 1,
                                  "prompt_tokens": 13800}]
    assert detail["reference"]["same_session"] is True


def test_a_subagent_of_the_session_is_named_as_the_evictor() -> None:
    truth = CacheTruth(clock=Clock())
    main_headers = {"x-claude-code-session-id": "s1"}
    _send(truth, main_headers, _load("claude-code-2.1.332/sessions/tool_01.json")[1], 13100, 0)
    _send(truth, {**main_headers, "x-claude-code-agent-id": "sub-1"},
          _load("opencode-1.18.33/chat_request.json")[1], 9000, 0)
    row = _send(truth, main_headers, _load("claude-code-2.1.332/sessions/tool_02.json")[1], 13300, 20)
    assert row.reason == "evicted"
    assert _detail(row)["between"][0]["who"] == "a subagent of this session"


def test_a_subagent_without_an_agent_id_is_told_by_its_own_system_prompt() -> None:
    """Claude Code 2.1.332 runs a ``context: fork`` skill as a subagent that sends only the session's id
    (measured in tests/e2e/test_e2e_session_slots.py): with tools and a system prompt of its own it is a
    subagent; a request without tools (a title, a summary) stays a side request."""
    truth = CacheTruth(clock=Clock())
    headers = {"x-claude-code-session-id": "s1"}
    _send(truth, headers, _load("claude-code-2.1.332/sessions/tool_01.json")[1], 13100, 0)
    fork = copy.deepcopy(_load("claude-code-2.1.332/sessions/tool_01.json")[1])
    fork["system"][1]["text"] = "You are an agent for Claude Code. List the files in this project."
    _send(truth, headers, fork, 9300, 60)
    row = _send(truth, headers, _load("claude-code-2.1.332/sessions/tool_02.json")[1], 13300, 60)
    assert row.reason == "evicted"
    assert [g["who"] for g in _detail(row)["between"]] == ["a subagent of this session"]

    side = {k: v for k, v in fork.items() if k != "tools"}
    _send(truth, headers, side, 9000, 60)
    again = copy.deepcopy(_load("claude-code-2.1.332/sessions/tool_02.json")[1])
    row = _send(truth, headers, again, 13300, 60)
    assert [g["who"] for g in _detail(row)["between"]] == ["a side request of this session"]


def test_a_cloud_vendor_idle_past_its_ttl_is_expired_and_a_local_server_is_not() -> None:
    for local, reason in ((False, "expired"), (True, "unknown")):
        clock = Clock()
        truth = CacheTruth(clock=clock)
        _send(truth, {}, _load("claude-code-2.1.332/sessions/continue_01.json")[1], 13100, 0, local=local)
        clock.now += 600
        body = _load("claude-code-2.1.332/sessions/continue_02.json")[1]
        row = _send(truth, {}, body, 13150, 0, local=local)
        assert row.reason == reason
        assert _detail(row)["prompt"] == 13150
        if not local:
            assert _detail(row)["idle_s"] == 600.0


def test_a_reordered_tool_list_is_named() -> None:
    truth = CacheTruth(clock=Clock())
    _, body = _load("claude-code-2.1.332/sessions/continue_01.json")
    _send(truth, {}, body, 13100, 0)
    turned = copy.deepcopy(body)
    turned["tools"].reverse()
    row = _send(truth, {}, turned, 13100, 1500)
    assert row.reason == "prefix_changed"
    detail = _detail(row)
    assert (detail["looks_like"], detail["kind"]) == ("reordered_tools", "tools")
    assert detail["tools_now"][0] == body["tools"][-1]["name"]


def test_a_moved_system_reminder_is_named() -> None:
    truth = CacheTruth(clock=Clock())
    _, body = _load("claude-code-2.1.332/sessions/continue_02.json")
    _send(truth, {}, body, 13150, 0)
    moved = copy.deepcopy(body)
    reminder = moved["messages"][0]["content"].pop(0)
    moved["messages"][3]["content"].append(reminder)  # the reminder now travels with the newest message
    row = _send(truth, {}, moved, 13150, 7000)
    detail = _detail(row)
    assert row.reason == "prefix_changed"
    assert detail["looks_like"] == "moved_reminder"
    assert (detail["part"], detail["kind"]) == ("messages[0].content[0]", "message 0")


def test_an_inline_system_message_that_changed_is_named_as_one() -> None:
    truth = CacheTruth(clock=Clock())
    _, body = _load("claude-code-2.1.332/sessions/continue_02.json")
    _send(truth, {}, body, 13150, 0)
    changed = copy.deepcopy(body)
    changed["messages"][1]["content"] = changed["messages"][1]["content"].replace("Linux", "Lunix", 1)
    row = _send(truth, {}, changed, 13150, 9000)
    detail = _detail(row)
    assert (detail["kind"], detail["part"]) == ("inline system message", "messages[1].content")
    at = detail["offset_in_part"]
    assert at <= changed["messages"][1]["content"].index("Lunix") < at + detail["precision"]


def test_memory_is_bounded_and_bookkeeping_never_raises() -> None:
    truth = CacheTruth(max_sessions=4, clock=Clock())
    _, body = _load("claude-code-2.1.332/sessions/continue_01.json")
    for n in range(10):
        _send(truth, {"x-claude-code-session-id": f"s{n}"}, body, 13100, 0)
    assert truth.sessions() == 4
    for odd in (None, [1, 2], "text", {"messages": "x"}, {"messages": [None, 3]}):
        row = _send(truth, {}, odd, 10, 0)
        assert row.verdict in (None, "COLD")
    failed = UsageRow(0.0, "claude", "p", None, None, None)
    truth.begin(failed, _headers({}), body)
    failed.status = 502
    truth.finish(failed, local=True)
    assert failed.verdict is None


def test_a_compacted_conversation_reused_short_of_its_change_is_a_prefix_change_not_unknown() -> None:
    """Claude Code's compaction rewrites the conversation from the first message on; a server whose
    template renders the parts in its own sizes may stop well short of where the digest places that
    change (real: b11434 on the tiny model reused 5,671 of an estimated 12,160). Nothing ran between,
    so the change is the reason, and the record says the server stopped short of it."""
    truth = CacheTruth(clock=Clock())
    _, body = _load("claude-code-2.1.332/sessions/continue_03.json")
    _send(truth, {}, body, 25459, 25127)
    compacted = copy.deepcopy(body)
    compacted["messages"] = [{"role": "user", "content": [
        {"type": "text", "text": "This session is being continued from a previous conversation. Summary: "
                                 + "the user asked for greetings. " * 40}]}]
    row = _send(truth, {}, compacted, 15453, 5671)
    assert (row.verdict, row.reason) == ("PARTIAL", "prefix_changed")
    detail = _detail(row)
    assert detail["part"].startswith("messages[0]")
    assert detail["short_of_difference"] is True
    assert "also_differs_at" not in detail
