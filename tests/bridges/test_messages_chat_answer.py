"""Chat answers told to Claude Code: the SSE events in the order it reads them, JSON, usage, errors."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from bridges.chat_streams import TEXT_STREAM, TOOL_STREAM, USAGE, chunk, events, split, sse
from kvswitch.gateway.bridges.messages_chat import MessagesToChat


def _run(raw: bytes, pieces: list[bytes] | None = None) -> tuple[bytes, MessagesToChat, object]:
    bridge = MessagesToChat()
    converter = bridge.response_converter({"model": "tiny", "stream": True}, streaming=True)
    out = b"".join(converter.feed(p) for p in (pieces or [raw])) + converter.close()
    return out, bridge, converter


def test_a_text_stream_in_claude_codes_event_order_with_usage() -> None:
    out, _, converter = _run(sse(TEXT_STREAM))
    names = [name for name, _ in events(out)]
    assert names == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    data = [d for _, d in events(out)]
    assert data[0]["message"]["role"] == "assistant"
    assert data[0]["message"]["content"] == []
    assert data[1]["content_block"] == {"type": "text", "text": ""}
    assert "".join(d["delta"]["text"] for d in data[2:4]) == "hello"
    assert data[5]["delta"]["stop_reason"] == "end_turn"
    # Anthropic counts input without the cached part (CC Switch #3580 reported the sum as input)
    assert data[5]["usage"] == {
        "input_tokens": 10,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 990,
        "output_tokens": 7,
    }
    usage = converter.usage  # type: ignore[attr-defined]
    assert (usage.input_tokens, usage.cached_tokens, usage.output_tokens) == (10, 990, 7)
    assert usage.extra["timings"] == {"cache_n": 990, "prompt_n": 10}


def test_thinking_text_and_two_tool_calls_become_four_blocks() -> None:
    out, _, _ = _run(sse(TOOL_STREAM))
    evs = events(out)
    starts = [d for n, d in evs if n == "content_block_start"]
    stops = [d["index"] for n, d in evs if n == "content_block_stop"]
    assert [s["index"] for s in starts] == [0, 1, 2, 3] == stops
    assert [s["content_block"]["type"] for s in starts] == ["thinking", "text", "tool_use", "tool_use"]
    assert starts[2]["content_block"] == {"type": "tool_use", "id": "call_1", "name": "Read", "input": {}}
    deltas = [d for n, d in evs if n == "content_block_delta"]
    thinking = "".join(d["delta"]["thinking"] for d in deltas if d["delta"]["type"] == "thinking_delta")
    first_args = "".join(d["delta"]["partial_json"] for d in deltas if d["index"] == 2)
    assert thinking == "I should read it"
    assert json.loads(first_args) == {"file_path": "/tmp/x"}
    # each block opens before its deltas and closes before the next opens
    order = [(n, d.get("index")) for n, d in evs if n and n.startswith("content_block")]
    for index in range(4):
        own = [n for n, i in order if i == index]
        assert own[0] == "content_block_start"
        assert own[-1] == "content_block_stop"
    (delta,) = [d for n, d in evs if n == "message_delta"]
    assert delta["delta"]["stop_reason"] == "tool_use"


@settings(max_examples=80, deadline=None)
@given(cuts=st.lists(st.integers(0, 100_000), max_size=12))
def test_any_split_of_the_upstream_bytes_gives_the_same_answer(cuts: list[int]) -> None:
    raw = sse(TOOL_STREAM).replace(b"\n\n", b"\r\n\r\n")
    whole, _, _ = _run(raw)
    pieces, _, _ = _run(raw, split(raw, cuts))
    assert pieces == whole


def test_a_stream_without_done_still_ends_with_message_stop() -> None:
    out, _, _ = _run(sse(TEXT_STREAM, done=False))
    assert [n for n, _ in events(out)][-2:] == ["message_delta", "message_stop"]


def test_length_maps_to_max_tokens() -> None:
    out, _, _ = _run(sse([chunk({"content": "a"}), chunk({}, "length")]))
    (delta,) = [d for n, d in events(out) if n == "message_delta"]
    assert delta["delta"]["stop_reason"] == "max_tokens"


def test_an_error_in_the_stream_becomes_an_messages_error_event() -> None:
    raw = sse([chunk({"content": "a"})], done=False) + b'data: {"error": {"message": "slot unavailable"}}\n\n'
    out, _, _ = _run(raw)
    name, data = events(out)[-1]
    assert name == "error"
    assert data == {"type": "error", "error": {"type": "api_error", "message": "slot unavailable"}}


def test_an_empty_or_unreadable_stream_is_an_error_not_a_hang() -> None:
    out, _, _ = _run(b"")
    assert events(out)[-1][0] == "error"
    out, _, _ = _run(b"data: {not json\n\n")
    assert events(out)[-1][1]["error"]["type"] == "api_error"


def test_a_json_answer() -> None:
    answer = {
        "id": "chatcmpl-xyz",
        "model": "tiny",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": "Reading.",
                    "reasoning_content": "hmm",
                    "tool_calls": [
                        {
                            "id": "call_9",
                            "type": "function",
                            "function": {"name": "Read", "arguments": '{"file_path":"/a"}'},
                        }
                    ],
                },
            }
        ],
        "usage": USAGE,
    }
    converter = MessagesToChat().response_converter({"model": "tiny"}, streaming=False)
    raw = json.dumps(answer).encode()
    assert converter.feed(raw[:10]) == b""
    assert converter.feed(raw[10:]) == b""
    message = json.loads(converter.close())
    assert message["id"] == "msg_xyz"
    assert message["type"] == "message"
    assert message["role"] == "assistant"
    assert message["content"] == [
        {"type": "thinking", "thinking": "hmm", "signature": ""},
        {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "call_9", "name": "Read", "input": {"file_path": "/a"}},
    ]
    assert message["stop_reason"] == "tool_use"
    assert message["usage"]["input_tokens"] == 10
    assert message["usage"]["cache_read_input_tokens"] == 990


def test_upstream_errors_in_anthropics_shape() -> None:
    bridge = MessagesToChat()
    body = json.dumps({"error": {"message": "bad key", "type": "invalid_api_key"}}).encode()
    assert json.loads(bridge.convert_error(401, body)) == {
        "type": "error",
        "error": {"type": "authentication_error", "message": "bad key"},
    }
    assert json.loads(bridge.convert_error(429, b"slow down"))["error"]["type"] == "rate_limit_error"
    assert json.loads(bridge.convert_error(503, b"<html>"))["error"] == {
        "type": "api_error",
        "message": "<html>",
    }
