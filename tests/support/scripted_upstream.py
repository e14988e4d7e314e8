"""A loopback upstream that records every request body and answers with the smallest valid stream.

Tests that only need to see what a real client *sends* (its system prompt, its skill list, its memory
file) use it where llama-server would add minutes and nothing to the assertion. It speaks the three
protocols the clients use: Anthropic Messages (Claude Code), OpenAI Responses (Codex) and Chat
Completions (OpenCode); every answer is one short "ok" turn, so the client ends its run at once.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: the most one recorded request may hold (a client's real prompt is well under this)
MAX_BODY = 32 << 20


def _sse(events: list[tuple[str | None, dict[str, Any] | str]]) -> bytes:
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    return "".join(out).encode()


def _messages_answer(model: str) -> bytes:
    usage = {"input_tokens": 1, "output_tokens": 1}
    return _sse([
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_scripted", "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": usage}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": "ok"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "usage": {"output_tokens": 1},
                           "delta": {"stop_reason": "end_turn", "stop_sequence": None}}),
        ("message_stop", {"type": "message_stop"}),
    ])


def tool_use_answer(
    model: str, tool: str, arguments: dict[str, Any], call_id: str = "toolu_scripted"
) -> bytes:
    """A Messages stream whose one block asks the client to call ``tool`` with ``arguments``: what a
    model says to make a real client run a tool (an MCP server's, say) and send its result back."""
    usage = {"input_tokens": 1, "output_tokens": 1}
    block = {"type": "tool_use", "id": call_id, "name": tool, "input": {}}
    return _sse([
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_scripted_tool", "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": usage}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
            "type": "input_json_delta", "partial_json": json.dumps(arguments)}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "usage": {"output_tokens": 1},
                           "delta": {"stop_reason": "tool_use", "stop_sequence": None}}),
        ("message_stop", {"type": "message_stop"}),
    ])


def _responses_answer(model: str) -> bytes:
    item = {"type": "message", "id": "msg_scripted", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "ok", "annotations": []}]}
    response = {"id": "resp_scripted", "object": "response", "model": model, "status": "completed",
                "output": [item], "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
                                            "input_tokens_details": {"cached_tokens": 0},
                                            "output_tokens_details": {"reasoning_tokens": 0}}}
    return _sse([
        ("response.created", {"type": "response.created", "response": {**response, "status": "in_progress",
                                                                       "output": []}}),
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "response": response}),
    ])


def _chat_answer(model: str) -> bytes:
    base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0, "model": model}
    return _sse([
        (None, {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "ok"},
                                     "finish_reason": None}]}),
        (None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}),
        (None, "[DONE]"),
    ])


class ScriptedUpstream:
    """``with scripted_upstream() as up``: ``up.url``; ``up.requests`` (path, JSON body) in arrival order.

    ``scripted``: answers given, in order, to the Messages requests that name tools (the conversation's
    own; a client's side requests name none) before the plain "ok" ones, e.g. ``tool_use_answer``."""

    def __init__(self, scripted: list[bytes] | None = None) -> None:
        self.requests: list[tuple[str, Any]] = []
        self.scripted = list(scripted or [])
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # keep test output clean
                return

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                body = json.dumps({"object": "list", "data": [{"id": "tiny", "object": "model"}]}).encode()
                self._reply(200, "application/json", body)

            def do_HEAD(self) -> None:  # noqa: N802
                self._reply(200, "application/json", b"")

            def do_POST(self) -> None:  # noqa: N802
                length = min(int(self.headers.get("content-length") or 0), MAX_BODY)
                raw = self.rfile.read(length)
                try:
                    body: Any = json.loads(raw or b"null")
                except ValueError:
                    body = None
                with owner._lock:
                    owner.requests.append((self.path, body))
                model = body.get("model", "tiny") if isinstance(body, dict) else "tiny"
                path = self.path.split("?")[0]
                if path.endswith("/count_tokens"):
                    self._reply(200, "application/json", b'{"input_tokens": 1}')
                elif path.endswith("/messages"):
                    with owner._lock:
                        wants_tools = isinstance(body, dict) and bool(body.get("tools"))
                        answer = owner.scripted.pop(0) if owner.scripted and wants_tools else None
                    self._reply(200, "text/event-stream", answer or _messages_answer(model))
                elif path.endswith("/responses"):
                    self._reply(200, "text/event-stream", _responses_answer(model))
                else:
                    self._reply(200, "text/event-stream", _chat_answer(model))

            def _reply(self, status: int, kind: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def bodies(self, suffix: str) -> list[Any]:
        """The JSON bodies of the requests whose path ends with ``suffix`` (query ignored)."""
        with self._lock:
            return [body for path, body in self.requests if path.split("?")[0].endswith(suffix)]


@contextmanager
def scripted_upstream(scripted: list[bytes] | None = None) -> Iterator[ScriptedUpstream]:
    upstream = ScriptedUpstream(scripted)
    upstream._thread.start()
    try:
        yield upstream
    finally:
        upstream._server.shutdown()
        upstream._server.server_close()
