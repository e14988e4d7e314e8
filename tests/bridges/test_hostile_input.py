"""Whatever a client or an upstream sends, a bridge answers in bounded time without raising: odd
shapes convert to something (or to an error in the client's shape), never to a traceback."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bridges.chat_streams import events
from kvswitch.gateway.bridges import ResponseStore, dump_body
from kvswitch.gateway.bridges.chat_stream import MAX_JSON_BYTES
from kvswitch.gateway.bridges.messages_chat import MessagesToChat
from kvswitch.gateway.bridges.responses_chat import ResponsesToChat

#: the keys the converters look at, so generated values land where they matter
KEYS = ["type", "role", "content", "text", "tool_calls", "function", "arguments", "name", "id", "index",
        "delta", "choices", "usage", "messages", "input", "tools", "output", "call_id", "system",
        "input_schema", "finish_reason", "reasoning_content"]
_scalar = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=8))
_json = st.recursive(
    _scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.sampled_from(KEYS),
            inner,
            max_size=6,
        ),
    ),
    max_leaves=30,
)
_body = st.dictionaries(
    st.sampled_from(["model", "messages", "system", "tools", "tool_choice", "input", "instructions", "stream",
                     "max_tokens", "max_output_tokens", "stop_sequences", "text", "reasoning"]),
    _json,
    max_size=8,
)


def _bridges() -> list[Any]:
    return [MessagesToChat(), ResponsesToChat(ResponseStore())]


@settings(max_examples=300, deadline=None)
@given(body=_body)
def test_any_request_body_converts(body: dict[str, Any]) -> None:
    for bridge in _bridges():
        converted = bridge.convert_request(body)
        assert isinstance(converted["messages"], list)
        json.loads(dump_body(converted))


@settings(max_examples=300, deadline=None)
@given(chunks=st.lists(_json, max_size=6), streaming=st.booleans())
def test_any_upstream_answer_converts(chunks: list[Any], streaming: bool) -> None:
    for bridge in _bridges():
        converter = bridge.response_converter({"model": "m", "stream": streaming}, streaming=streaming)
        if streaming:
            raw = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
            out = converter.feed(raw) + converter.close()
            assert events(out)  # at least a start and an end, or an error event
        else:
            body = json.dumps(chunks[0] if chunks else None).encode()
            out = converter.feed(body) + converter.close()
            assert isinstance(json.loads(out), dict)


def test_an_oversized_json_answer_is_an_error_not_a_memory_hog() -> None:
    converter = MessagesToChat().response_converter({"model": "m"}, streaming=False)
    piece = b" " * (1024 * 1024)
    for _ in range(MAX_JSON_BYTES // len(piece) + 2):
        converter.feed(piece)
    answer = json.loads(converter.close())
    assert answer["type"] == "error"
    assert "larger than" in answer["error"]["message"]
