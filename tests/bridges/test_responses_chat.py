"""OpenAI Responses (Codex) → Chat Completions: requests from real Codex turns, answers, the store."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridges.chat_streams import TEXT_STREAM, TOOL_STREAM, USAGE, events, split, sse
from bridges.sessions import CODEX_SESSIONS, body, first_difference, prefix_through_last_message
from kvswitch.gateway.bridges import BridgeRequestError, ResponseStore, dump_body, pick_bridge
from kvswitch.gateway.bridges.responses_chat import ResponsesToChat, convert_request


def _turns() -> list[dict]:
    return [body(p) for p in sorted(CODEX_SESSIONS.glob("resume_*.json"))]


def test_codex_input_items_become_chat_messages() -> None:
    first = convert_request(_turns()[0])
    roles = [m["role"] for m in first["messages"]]
    # the two developer messages are the leading system message; environment and words stay user messages
    assert roles == ["system", "user", "user"]
    assert first["messages"][0]["content"].startswith("You are a coding agent running in the Codex CLI")
    assert "<skills_instructions>" in first["messages"][0]["content"]
    assert "<environment_context>" in first["messages"][1]["content"]
    assert first["messages"][2] == {"role": "user", "content": "say hi"}
    assert first["stream"] is True
    assert first["stream_options"] == {"include_usage": True}
    for dropped in ("prompt_cache_key", "client_metadata", "store", "include"):
        assert dropped not in first


def test_function_tools_pass_namespaces_flatten_and_the_rest_is_left_out() -> None:
    request = _turns()[0]
    names = [t["function"]["name"] for t in convert_request(request)["tools"]]
    expected: list[str] = []
    for tool in request["tools"]:
        if tool["type"] == "function":
            expected.append(tool["name"])
        elif tool["type"] == "namespace":
            expected.extend(f"{tool['name']}__{t['name']}" for t in tool["tools"])
    assert names == expected
    assert "multi_agent_v1__spawn_agent" in names
    assert "web_search" not in names


def test_the_resumed_turn_extends_the_first_turns_bytes() -> None:
    first, second = (convert_request(b) for b in _turns())
    prefix, raw = prefix_through_last_message(first), dump_body(second)
    assert raw.startswith(prefix), first_difference(prefix, raw)
    assert second["messages"][-2:] == [
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "say more"},
    ]


def test_a_turns_reasoning_text_and_calls_are_one_assistant_message_then_tool_messages() -> None:
    items = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list"}]},
        {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "use ls"}]},
        {"type": "function_call", "name": "exec_command", "arguments": '{"cmd":"ls"}', "call_id": "call_1"},
        {
            "type": "function_call",
            "name": "spawn_agent",
            "namespace": "multi_agent_v1",
            "arguments": "{}",
            "call_id": "call_2",
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"},
        {"type": "function_call_output", "call_id": "call_2", "output": "ok"},
    ]
    messages = convert_request({"model": "m", "instructions": "be brief", "input": items})["messages"]
    assert messages == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "list"},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "use ls",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "exec_command", "arguments": '{"cmd":"ls"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "multi_agent_v1__spawn_agent", "arguments": "{}"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"},
        {"role": "tool", "tool_call_id": "call_2", "content": "ok"},
    ]


@settings(max_examples=40, deadline=None)
@given(words=st.lists(st.text(max_size=30), min_size=1, max_size=4))
def test_any_resumed_turn_keeps_the_prefix(words: list[str]) -> None:
    first = _turns()[0]
    later = dict(first)
    later["input"] = list(first["input"])
    for word in words:
        later["input"] += [
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": word}]},
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": word}),
                "call_id": "c",
            },
            {"type": "function_call_output", "call_id": "c", "output": word},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": word}]},
        ]
    prefix, raw = prefix_through_last_message(convert_request(first)), dump_body(convert_request(later))
    assert raw.startswith(prefix), first_difference(prefix, raw)


def _stream(
    raw: bytes,
    request: dict | None = None,
    bridge: ResponsesToChat | None = None,
    pieces: list[bytes] | None = None,
) -> bytes:
    bridge = bridge or ResponsesToChat(ResponseStore())
    converter = bridge.response_converter(
        request or {"model": "tiny", "stream": True, "store": False}, streaming=True
    )
    return b"".join(converter.feed(p) for p in (pieces or [raw])) + converter.close()


def test_a_text_stream_as_codex_reads_it() -> None:
    evs = events(_stream(sse(TEXT_STREAM)))
    names = [n for n, _ in evs]
    assert names == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert all(d["type"] == n for n, d in evs)
    done = evs[-2][1]["item"]
    assert done["type"] == "message"
    assert done["content"][0]["text"] == "hello"
    response = evs[-1][1]["response"]
    assert response["status"] == "completed"
    assert response["output"] == [done]
    # OpenAI's meaning: input includes the cached part
    assert response["usage"]["input_tokens"] == 1000
    assert response["usage"]["input_tokens_details"] == {"cached_tokens": 990}


def test_reasoning_text_and_function_calls_stream_as_items() -> None:
    request = {
        "model": "tiny",
        "stream": True,
        "store": False,
        "tools": [{"type": "namespace", "name": "ns", "tools": []}],
    }
    evs = events(_stream(sse(TOOL_STREAM), request))
    done = [d["item"] for n, d in evs if n == "response.output_item.done"]
    assert [i["type"] for i in done] == ["reasoning", "message", "function_call", "function_call"]
    assert done[0]["content"] == [{"type": "reasoning_text", "text": "I should read it"}]
    assert done[2] == {
        "id": "fc_call_1",
        "type": "function_call",
        "status": "completed",
        "arguments": '{"file_path":"/tmp/x"}',
        "call_id": "call_1",
        "name": "Read",
    }
    added = [d for n, d in evs if n == "response.output_item.added"]
    assert [a["output_index"] for a in added] == [0, 1, 2, 3]
    args = [d for n, d in evs if n == "response.function_call_arguments.done"]
    assert [a["arguments"] for a in args] == ['{"file_path":"/tmp/x"}', '{"command":"ls"}']
    assert evs[-1][0] == "response.completed"


@settings(max_examples=60, deadline=None)
@given(cuts=st.lists(st.integers(0, 100_000), max_size=12))
def test_any_split_gives_the_same_events(cuts: list[int]) -> None:
    raw = sse(TOOL_STREAM)
    strip = lambda out: [(n, {k: v for k, v in d.items() if k != "response"}) for n, d in events(out)]  # noqa: E731
    assert strip(_stream(raw, pieces=split(raw, cuts))) == strip(_stream(raw))


def test_previous_response_id_is_served_from_the_store() -> None:
    store = ResponseStore()
    bridge = pick_bridge("openai_responses", "openai_chat", store=store)
    assert isinstance(bridge, ResponsesToChat)
    first = {"model": "tiny", "stream": True, "instructions": "sys", "input": "hi"}
    upstream = bridge.convert_request(first)
    evs = events(_stream(sse(TEXT_STREAM), first, bridge))
    response_id = evs[-1][1]["response"]["id"]
    follow = {"model": "tiny", "stream": True, "previous_response_id": response_id, "input": "more"}
    messages = bridge.convert_request(follow)["messages"]
    assert messages == [
        *upstream["messages"],
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "more"},
    ]
    with pytest.raises(BridgeRequestError) as refused:
        bridge.convert_request({**follow, "previous_response_id": "resp_unknown"})
    assert refused.value.status == 400
    assert b"previous_response_not_found" in refused.value.body


def test_the_store_is_bounded() -> None:
    store = ResponseStore(max_entries=2, max_bytes=10_000)
    for i in range(5):
        store.put(f"r{i}", [{"role": "user", "content": str(i)}])
    assert len(store) == 2
    assert store.get("r0") is None
    assert store.get("r4") is not None
    store.put("big", [{"role": "user", "content": "x" * 20_000}])
    assert store.get("big") is None


def test_a_json_answer_and_errors() -> None:
    answer = {
        "id": "chatcmpl-q",
        "model": "tiny",
        "choices": [{"finish_reason": "length", "message": {"content": "abc"}}],
        "usage": USAGE,
    }
    converter = ResponsesToChat(ResponseStore()).response_converter(
        {"model": "tiny", "store": False}, streaming=False
    )
    converter.feed(json.dumps(answer).encode())
    response = json.loads(converter.close())
    assert response["id"] == "resp_q"
    assert response["status"] == "incomplete"
    assert response["output"][0]["content"][0]["text"] == "abc"
    error = json.loads(ResponsesToChat(ResponseStore()).convert_error(500, b'{"error":{"message":"boom"}}'))
    assert error == {"error": {"type": "server_error", "code": None, "message": "boom"}}
    failed = events(_stream(b'data: {"error":{"message":"boom"}}\n\n'))
    assert failed[-1][0] == "response.failed"
    assert failed[-1][1]["response"]["error"]["message"] == "boom"
