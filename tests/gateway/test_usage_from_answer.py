"""Token counts from an answer's kept bytes: only the events that can hold counts are parsed, and the
result equals parsing every event, for streams of each protocol and for JSON bodies."""

from __future__ import annotations

import json

import pytest

from kvswitch.servers.answers import answer_events
from kvswitch.usage.answer import Tokens, tokens_from_answer, tokens_from_events


def _sse(event: str | None, data: dict[str, object]) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def _messages_stream(deltas: int) -> bytes:
    start = {"type": "message_start", "message": {"id": "msg_1", "role": "assistant", "usage": {
        "input_tokens": 12, "cache_read_input_tokens": 13788, "cache_creation_input_tokens": 0,
        "output_tokens": 1}}}
    # text that mentions the keys, escaped inside JSON as a model would write them
    delta = {"type": "content_block_delta", "index": 0,
             "delta": {"type": "text_delta", "text": 'the "usage" and "timings" fields, data: '}}
    end = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": deltas}}
    return (_sse("message_start", start) + b"".join(_sse("content_block_delta", delta) for _ in range(deltas))
            + _sse("message_delta", end) + _sse("message_stop", {"type": "message_stop"}))


def _chat_stream(deltas: int) -> bytes:
    chunk = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "usage"}}]}
    last = {"object": "chat.completion.chunk", "choices": [], "usage": {
        "prompt_tokens": 13800, "completion_tokens": deltas,
        "prompt_tokens_details": {"cached_tokens": 13788}},
        "timings": {"prompt_n": 12, "cache_n": 13788, "predicted_n": deltas, "predicted_per_second": 50.0}}
    return b"".join(_sse(None, chunk) for _ in range(deltas)) + _sse(None, last) + b"data: [DONE]\n\n"


def _kept(answer: bytes, limit: int = 64 * 1024) -> bytes:
    """What the gateway keeps of an answer: its head, and its tail when it is longer."""
    return answer if len(answer) <= limit else answer[:limit] + b"\n" + answer[-limit:]


BODY = {"id": "msg_1", "type": "message", "content": [{"type": "text", "text": "data: usage"}],
        "usage": {"input_tokens": 5, "cache_read_input_tokens": 95, "output_tokens": 7}}


@pytest.mark.parametrize(("answer", "expected"), [
    (_kept(_messages_stream(3)), Tokens(13800, 13788, 3)),
    (_kept(_messages_stream(2000)), Tokens(13800, 13788, 2000)),
    (_kept(_chat_stream(2000)), Tokens(13800, 13788, 2000, 50.0)),
    (json.dumps(BODY).encode(), Tokens(100, 95, 7)),
    (json.dumps(BODY, indent=2).encode(), Tokens(100, 95, 7)),
])
def test_counts_equal_parsing_every_event(answer: bytes, expected: Tokens) -> None:
    assert tokens_from_answer(answer) == expected
    assert tokens_from_answer(answer) == tokens_from_events(answer_events(answer))
