"""The answer converters on a real llama-server b11434 chat answer (streamed and JSON), with the
server's own token counts carried into each client's usage shape."""

from __future__ import annotations

import json
from pathlib import Path

from bridges.chat_streams import events, split
from kvswitch.gateway.bridges import ResponseStore
from kvswitch.gateway.bridges.messages_chat import MessagesToChat
from kvswitch.gateway.bridges.responses_chat import ResponsesToChat

ANSWERS = Path(__file__).resolve().parents[1] / "fixtures" / "llama.cpp-b11434" / "responses"


def _server_says() -> tuple[str, dict[str, int]]:
    """The text and usage as the server's stream states them (read here without the bridge)."""
    text, usage = "", {}
    for line in (ANSWERS / "chat_stream_hit.sse").read_text().splitlines():
        if line.startswith("data: {"):
            chunk = json.loads(line[6:])
            for choice in chunk["choices"]:
                text += choice["delta"].get("content") or ""
            usage = chunk.get("usage") or usage
    return text, usage


def test_claude_code_reads_the_real_stream_with_the_servers_numbers() -> None:
    raw = (ANSWERS / "chat_stream_hit.sse").read_bytes()
    text, usage = _server_says()
    converter = MessagesToChat().response_converter({"model": "tiny", "stream": True}, streaming=True)
    out = b"".join(converter.feed(p) for p in split(raw, [7, 300, 301, 900])) + converter.close()
    evs = events(out)
    assert [n for n, _ in evs][0] == "message_start"
    assert [n for n, _ in evs][-2:] == ["message_delta", "message_stop"]
    assert "".join(d["delta"]["text"] for n, d in evs if n == "content_block_delta") == text
    delta = next(d for n, d in evs if n == "message_delta")
    cached = usage["prompt_tokens_details"]["cached_tokens"]
    assert delta["usage"]["cache_read_input_tokens"] == cached
    assert delta["usage"]["input_tokens"] == usage["prompt_tokens"] - cached
    assert delta["usage"]["output_tokens"] == usage["completion_tokens"]
    assert delta["delta"]["stop_reason"] == "max_tokens"  # the request's max_tokens ended it
    assert converter.usage.extra["timings"]["cache_n"] == cached


def test_codex_reads_the_real_stream_with_the_servers_numbers() -> None:
    raw = (ANSWERS / "chat_stream_hit.sse").read_bytes()
    text, usage = _server_says()
    bridge = ResponsesToChat(ResponseStore())
    converter = bridge.response_converter({"model": "tiny", "stream": True}, streaming=True)
    evs = events(converter.feed(raw) + converter.close())
    done = next(d["item"] for n, d in evs if n == "response.output_item.done")
    assert done["content"][0]["text"] == text
    final = evs[-1][1]["response"]
    assert evs[-1][0] == "response.incomplete"  # max_output_tokens reached, as Codex is told
    assert final["usage"]["input_tokens"] == usage["prompt_tokens"]
    cached = usage["prompt_tokens_details"]["cached_tokens"]
    assert final["usage"]["input_tokens_details"]["cached_tokens"] == cached


def test_the_real_json_answer() -> None:
    raw = (ANSWERS / "chat_json_hit.json").read_bytes()
    server = json.loads(raw)
    converter = MessagesToChat().response_converter({"model": "tiny"}, streaming=False)
    converter.feed(raw)
    message = json.loads(converter.close())
    assert message["content"] == [{"type": "text", "text": server["choices"][0]["message"]["content"]}]
    cached = server["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert message["usage"]["cache_read_input_tokens"] == cached
