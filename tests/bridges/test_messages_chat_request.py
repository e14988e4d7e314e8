"""Anthropic Messages → Chat Completions requests: each rule, and the prefix property on real sessions."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bridges.sessions import claude_turns, first_difference, prefix_through_last_message
from kvswitch.gateway.bridges import dump_body, pick_bridge
from kvswitch.gateway.bridges.messages_chat import MessagesToChat, convert_request, join_text


def test_system_blocks_become_one_system_message_and_the_billing_line_is_left_out() -> None:
    body = {
        "model": "m",
        "system": [
            {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.332.abc; cch=1a2b3;"},
            {"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": "Be brief."},
        ],
        "messages": [{"role": "user", "content": "hi"}],
    }
    out = convert_request(body)
    assert out["messages"][0] == {"role": "system", "content": "You are Claude Code.\nBe brief."}
    assert "cch=" not in json.dumps(out)
    assert "cache_control" not in json.dumps(out)


def test_join_text_adds_a_newline_only_where_none_is() -> None:
    assert join_text(["a", "b"]) == "a\nb"
    assert join_text(["a\n", "b"]) == "a\nb"
    assert join_text(["a", "\nb"]) == "a\nb"
    assert join_text(["", "b"]) == "b"


def test_system_messages_inside_messages_are_carried_in_place() -> None:
    body = claude_turns("continue")[0]
    out = convert_request(body)
    roles = [m["role"] for m in out["messages"]]
    assert roles == ["system", "user", "system"]
    assert "Primary working directory" in out["messages"][2]["content"]  # the environment block


def test_text_and_image_content() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "look"}, image]}],
    }
    (message,) = convert_request(body)["messages"]
    assert message == {
        "role": "user",
        "content": [
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        ],
    }


def test_tool_use_and_tool_result_become_tool_calls_and_tool_messages() -> None:
    body = claude_turns("tool")[1]
    messages = convert_request(body)["messages"]
    assistant, tool = messages[-2], messages[-1]
    assert assistant["role"] == "assistant"
    assert assistant["content"] is None
    (call,) = assistant["tool_calls"]
    assert call["id"] == "toolu_fixture_1"
    assert call["type"] == "function"
    assert call["function"]["name"] == "Read"
    assert json.loads(call["function"]["arguments"]) == {
        "file_path": "/tmp/kvswitch-fixture-project/notes.txt"
    }
    assert tool["role"] == "tool"
    assert tool["tool_call_id"] == "toolu_fixture_1"
    assert "kvswitch-bridge-fixture: the answer is 42" in tool["content"]  # the file Claude Code read


def test_tool_results_come_before_the_users_text_of_the_same_message() -> None:
    content = [
        {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "out"}]},
        {"type": "text", "text": "<system-reminder>r</system-reminder>"},
    ]
    messages = convert_request({"model": "m", "messages": [{"role": "user", "content": content}]})["messages"]
    assert messages == [
        {"role": "tool", "tool_call_id": "t1", "content": "out"},
        {"role": "user", "content": "<system-reminder>r</system-reminder>"},
    ]


def test_thinking_is_passed_back_as_reasoning_content() -> None:
    content = [
        {"type": "thinking", "thinking": "let me see", "signature": "sig"},
        {"type": "text", "text": "answer"},
    ]
    (message,) = convert_request({"model": "m", "messages": [{"role": "assistant", "content": content}]})[
        "messages"
    ]
    assert message == {"role": "assistant", "content": "answer", "reasoning_content": "let me see"}


def test_tools_in_the_clients_order_and_server_tools_left_out() -> None:
    body = claude_turns("continue")[0]
    body = {**body, "tools": [*body["tools"], {"type": "web_search_20250305", "name": "web_search"}]}
    out = convert_request(body)
    assert [t["function"]["name"] for t in out["tools"]] == [t["name"] for t in body["tools"][:-1]]
    assert out["tools"][0]["function"]["parameters"] == body["tools"][0]["input_schema"]


def test_tool_choice_stop_sequences_max_tokens_and_stream_usage() -> None:
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": "f", "input_schema": {"type": "object"}}],
        "tool_choice": {"type": "tool", "name": "f", "disable_parallel_tool_use": True},
        "stop_sequences": ["END"],
        "max_tokens": 77,
        "temperature": 0.5,
        "stream": True,
        "metadata": {"user_id": "session-123"},
        "thinking": {"type": "adaptive"},
    }
    out = convert_request(body)
    assert out["tool_choice"] == {"type": "function", "function": {"name": "f"}}
    assert out["parallel_tool_calls"] is False
    assert out["stop"] == ["END"]
    assert out["max_tokens"] == 77
    assert out["temperature"] == 0.5
    assert out["stream_options"] == {"include_usage": True}
    assert "session-123" not in json.dumps(out)  # the session id never goes upstream
    assert convert_request({**body, "tool_choice": {"type": "any"}})["tool_choice"] == "required"
    assert convert_request({**body, "tool_choice": {"type": "auto"}})["tool_choice"] == "auto"


def test_the_same_body_gives_the_same_bytes_and_the_body_is_not_modified() -> None:
    body = claude_turns("tool")[1]
    before = copy.deepcopy(body)
    bridge = pick_bridge("anthropic", "openai_chat")
    assert isinstance(bridge, MessagesToChat)
    assert dump_body(bridge.convert_request(body)) == dump_body(bridge.convert_request(copy.deepcopy(body)))
    assert body == before


def test_real_continued_turns_extend_the_previous_turns_bytes() -> None:
    """The captured 3-turn session (Claude Code re-shapes earlier messages: list ↔ string content)."""
    for session in ("continue", "tool"):
        turns = [convert_request(b) for b in claude_turns(session)]
        for before, after in zip(turns, turns[1:], strict=False):
            prefix, raw = prefix_through_last_message(before), dump_body(after)
            assert raw.startswith(prefix), first_difference(prefix, raw)


# -- property: any continuation of a real session, as Claude Code re-sends it ----------------------------

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
_block = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _text),
    st.builds(lambda t: {"type": "thinking", "thinking": t, "signature": "s"}, _text),
    st.builds(
        lambda i, p: {"type": "tool_use", "id": f"toolu_{i}", "name": "Read", "input": {"file_path": p}},
        st.integers(0, 9),
        _text,
    ),
)
_user_block = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _text),
    st.builds(
        lambda i, t: {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": t},
        st.integers(0, 9),
        _text,
    ),
    st.builds(
        lambda i, t: {
            "type": "tool_result",
            "tool_use_id": f"toolu_{i}",
            "content": [{"type": "text", "text": t}],
        },
        st.integers(0, 9),
        _text,
    ),
)
_message = st.one_of(
    st.builds(lambda c: {"role": "assistant", "content": c}, st.lists(_block, min_size=1, max_size=3)),
    st.builds(lambda c: {"role": "user", "content": c}, st.lists(_user_block, min_size=1, max_size=3)),
    st.builds(lambda t: {"role": "user", "content": t}, _text),
    st.builds(lambda t: {"role": "system", "content": t}, _text),
)


def _resend(message: dict[str, Any], cache_mark: bool) -> dict[str, Any]:
    """An earlier message as Claude Code may send it again: one text block as a string or back, and
    the ``cache_control`` mark moved."""
    content = message["content"]
    if (
        isinstance(content, list)
        and len(content) == 1
        and content[0].get("type") == "text"
        and message["role"] != "assistant"
    ):
        return {**message, "content": content[0]["text"]}
    if isinstance(content, str) and message["role"] in ("user", "system"):
        block: dict[str, Any] = {"type": "text", "text": content}
        if cache_mark:
            block["cache_control"] = {"type": "ephemeral"}
        return {**message, "content": [block]}
    return message


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    session=st.sampled_from(["continue", "tool", "other"]),
    turn=st.integers(0, 2),
    added=st.lists(_message, min_size=1, max_size=4),
    reshape=st.lists(st.booleans(), min_size=12, max_size=12),
)
def test_any_continuation_keeps_the_converted_prefix(
    session: str, turn: int, added: list[dict[str, Any]], reshape: list[bool]
) -> None:
    turns = claude_turns(session)
    earlier = turns[min(turn, len(turns) - 1)]
    later_messages = [
        _resend(m, mark) if flip else m
        for m, flip, mark in zip(earlier["messages"], reshape, reshape[1:] + [True], strict=False)
    ]
    later = {**earlier, "messages": later_messages + added}
    prefix, raw = prefix_through_last_message(convert_request(earlier)), dump_body(convert_request(later))
    assert raw.startswith(prefix), first_difference(prefix, raw)
