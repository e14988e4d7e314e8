"""Chat-completions answers in the shape llama-server b11434 and OpenAI send them, for the converters.

Streams are written out here (not captured) because the tiny test model never produces reasoning or
tool calls; the end-to-end tests run the converters on the real server's own streams.
"""

from __future__ import annotations

import json
from typing import Any


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {
        "id": "chatcmpl-abc",
        "object": "chat.completion.chunk",
        "model": "tiny",
        "choices": choices,
        **extra,
    }


def sse(chunks: list[dict[str, Any]], done: bool = True) -> bytes:
    out = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
    return out + (b"data: [DONE]\n\n" if done else b"")


USAGE = {"prompt_tokens": 1000, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 990}}

TEXT_STREAM = [
    chunk({"role": "assistant", "content": None}),
    chunk({"content": "hel"}),
    chunk({"content": "lo"}),
    chunk({}, "stop"),
    chunk(None, usage=USAGE, timings={"cache_n": 990, "prompt_n": 10}),
]

TOOL_STREAM = [
    chunk({"role": "assistant", "reasoning_content": "I should "}),
    chunk({"reasoning_content": "read it"}),
    chunk({"content": "Reading."}),
    chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "Read", "arguments": ""},
                }
            ]
        }
    ),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"file_path":'}}]}),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"/tmp/x"}'}}]}),
    chunk(
        {
            "tool_calls": [
                {
                    "index": 1,
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "Bash", "arguments": '{"command":"ls"}'},
                }
            ]
        }
    ),
    chunk({}, "tool_calls"),
    chunk(None, usage=USAGE),
]


def events(raw: bytes) -> list[tuple[str | None, dict[str, Any]]]:
    """An SSE body as (event name, data) pairs."""
    out: list[tuple[str | None, dict[str, Any]]] = []
    for block in raw.decode().split("\n\n"):
        if not block.strip():
            continue
        name = None
        data = ""
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data += line[6:]
        out.append((name, json.loads(data)))
    return out


def split(raw: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(raw) + 1) for c in cuts})
    pieces, start = [], 0
    for point in points:
        pieces.append(raw[start:point])
        start = point
    return [*pieces, raw[start:]]
