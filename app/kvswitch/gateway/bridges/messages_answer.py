"""A chat-completions answer told to Claude Code as a Messages API answer (JSON or SSE).

The stream Claude Code reads is strict about order: ``message_start``, then for each content block
``content_block_start`` / ``…_delta`` / ``content_block_stop`` (thinking, text and tool_use blocks,
one open at a time, indices counting up), then ``message_delta`` with the stop reason and usage, then
``message_stop``. Chat chunks interleave reasoning, text and tool-call pieces freely, so a block is
closed whenever the next piece belongs to another one. Tool calls are the exception: a chat stream
may interleave the pieces of two calls (``index`` 0, 1, 0 ...), which one-block-at-a-time cannot
follow, so their pieces are collected by index (``tool_calls.ToolCalls``) and each call goes out as
one whole block after the text (Claude Code runs a tool only once the message ended anyway). Usage
arrives in the last chunk (``stream_options.include_usage``) and goes into ``message_delta``:
``input_tokens`` there is the prompt without its cached part, as the Messages API counts it, with
the cached part in ``cache_read_input_tokens`` (CC Switch's #3580 was the sum reported as input).
"""

from __future__ import annotations

import json
from typing import Any

from kvswitch.core.strictparse import loads as strict_json
from kvswitch.gateway.bridges.base import BridgeUsage, json_bytes
from kvswitch.gateway.bridges.chat_stream import (
    ChatAnswerConverter,
    as_list,
    as_object,
    chat_token_counts,
    error_message,
)
from kvswitch.gateway.bridges.sse import StreamError, encode_event, parse_object
from kvswitch.gateway.bridges.tool_calls import ToolCalls

STOP_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
}

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def error_payload(status: int, message: str) -> dict[str, Any]:
    kind = _ERROR_TYPES.get(status, "api_error" if status >= 500 or status == 0 else "invalid_request_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def messages_error(status: int, body: bytes) -> bytes:
    return json_bytes(error_payload(status, error_message(body)))


def usage_from_chat(usage: Any, target: BridgeUsage) -> dict[str, int]:
    """Chat ``usage`` into ``target`` and as the Messages API's usage object."""
    counts = chat_token_counts(usage, target)
    if counts is None:
        return {"input_tokens": 0, "output_tokens": 0}
    prompt, cached, output = counts
    return {
        "input_tokens": max(prompt - cached, 0),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": cached,
        "output_tokens": output,
    }


#: the one key of a tool call's ``input`` when the model's arguments were not a JSON object: the
#: Messages API has no place for raw text in a ``tool_use``, so the text goes into the object, where
#: Claude Code's tool check names it back to the model (instead of running the tool on a silent ``{}``)
UNPARSED_ARGUMENTS = "_unparsed_arguments"


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        value = strict_json(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def tool_input(arguments: Any) -> dict[str, Any]:
    """A chat tool call's ``arguments`` as a ``tool_use`` ``input``: the object they encode (``{}``
    for none), else ``{UNPARSED_ARGUMENTS: the raw text}``."""
    if isinstance(arguments, dict):
        return arguments
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return {}
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    value = _json_object(text)
    return value if value is not None else {UNPARSED_ARGUMENTS: text}


def input_json(arguments: str) -> str:
    """The ``partial_json`` of a finished streamed tool call: the model's text when it is a JSON
    object (byte for byte), else what ``tool_input`` makes of it (the answer the non-streaming path
    gives)."""
    if not arguments.strip():
        return "{}"
    if _json_object(arguments) is not None:
        return arguments
    return json.dumps({UNPARSED_ARGUMENTS: arguments}, ensure_ascii=False)


def message_id(chat_id: Any) -> str:
    text = str(chat_id or "")
    return "msg_" + (text.removeprefix("chatcmpl-") or "bridge")


class MessagesFromChat(ChatAnswerConverter):
    """One answer: chat JSON or chat SSE in, Messages API JSON or SSE out."""

    def __init__(self, *, model: str, streaming: bool) -> None:
        super().__init__(streaming=streaming)
        self._model = model
        self._block: tuple[str, int] | None = None  # (kind, chat tool index or -1)
        self._index = -1
        self._stop_reason: str | None = None
        self._usage: dict[str, int] = {"input_tokens": 0, "output_tokens": 0}
        self._calls = ToolCalls()

    # -- non-streaming -------------------------------------------------------------------------
    def _json_error(self, message: str) -> bytes:
        self.failure = message
        return json_bytes(error_payload(502, message))

    def _json_answer(self) -> bytes:
        try:
            data = parse_object(bytes(self._body).decode("utf-8", errors="replace"), "upstream answer")
        except StreamError as exc:
            return self._json_error(str(exc))
        if "error" in data and "choices" not in data:
            self.failure = error_message(bytes(self._body))
            return messages_error(502, bytes(self._body))
        choices = data.get("choices") if isinstance(data.get("choices"), list) else []
        choice = as_object(choices[0] if choices else None)
        message = as_object(choice.get("message"))
        content: list[dict[str, Any]] = []
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            content.append({"type": "thinking", "thinking": reasoning, "signature": ""})
        if isinstance(message.get("content"), str) and message["content"]:
            content.append({"type": "text", "text": message["content"]})
        for call in as_list(message.get("tool_calls")):
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                content.append(
                    {
                        "type": "tool_use",
                        "id": str(call.get("id") or f"toolu_{len(content)}"),
                        "name": str(function.get("name") or ""),
                        "input": tool_input(function.get("arguments")),
                    }
                )
        stop = STOP_REASONS.get(str(choice.get("finish_reason")), "end_turn")
        if any(block["type"] == "tool_use" for block in content):
            stop = "tool_use"
        answer = {
            "id": message_id(data.get("id")),
            "type": "message",
            "role": "assistant",
            "model": str(data.get("model") or self._model),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage_from_chat(data.get("usage"), self.usage),
        }
        self._keep_timings(data)
        return json_bytes(answer)

    # -- streaming -----------------------------------------------------------------------------
    def _start(self, chunk: dict[str, Any]) -> bytes:
        self._started = True
        message: dict[str, Any] = {
            "id": message_id(chunk.get("id")),
            "type": "message",
            "role": "assistant",
            "model": str(chunk.get("model") or self._model),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }
        return encode_event("message_start", {"type": "message_start", "message": message})

    def _close_block(self) -> bytes:
        if self._block is None:
            return b""
        self._block = None
        return encode_event("content_block_stop", {"type": "content_block_stop", "index": self._index})

    def _open_block(self, kind: str, key: int, block: dict[str, Any]) -> bytes:
        out = self._close_block()
        self._index += 1
        self._block = (kind, key)
        start = {"type": "content_block_start", "index": self._index, "content_block": block}
        return out + encode_event("content_block_start", start)

    def _delta(self, delta: dict[str, Any]) -> bytes:
        return encode_event(
            "content_block_delta", {"type": "content_block_delta", "index": self._index, "delta": delta}
        )

    def _piece(self, delta: dict[str, Any]) -> bytes:
        out = b""
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            if self._block != ("thinking", -1):
                out += self._open_block("thinking", -1, {"type": "thinking", "thinking": "", "signature": ""})
            out += self._delta({"type": "thinking_delta", "thinking": reasoning})
        text = delta.get("content")
        if isinstance(text, str) and text:
            if self._block != ("text", -1):
                out += self._open_block("text", -1, {"type": "text", "text": ""})
            out += self._delta({"type": "text_delta", "text": text})
        for call in as_list(delta.get("tool_calls")):
            if isinstance(call, dict):
                self._calls.add(call)
        return out

    def _tool_blocks(self) -> bytes:
        """The collected tool calls, one whole block each, after the streamed text and thinking."""
        out = b""
        for call in self._calls.finished():
            block = {"type": "tool_use", "id": call.id or f"toolu_{self._index + 1}", "name": call.name,
                     "input": {}}
            out += self._open_block("tool_use", self._index + 1, block)
            out += self._delta({"type": "input_json_delta", "partial_json": input_json(call.arguments)})
        return out

    def _chunk(self, data: str) -> bytes:
        if data.strip() == "[DONE]":
            return self._finish()
        chunk = parse_object(data, "upstream stream")
        if "error" in chunk and "choices" not in chunk:
            return self._fail(error_message(data.encode()))
        out = b"" if self._started else self._start(chunk)
        for choice in as_list(chunk.get("choices")):
            if not isinstance(choice, dict):
                continue
            if isinstance(choice.get("delta"), dict):
                out += self._piece(choice["delta"])
            if choice.get("finish_reason"):
                self._stop_reason = STOP_REASONS.get(str(choice["finish_reason"]), "end_turn")
        if chunk.get("usage"):
            self._usage = usage_from_chat(chunk["usage"], self.usage)
        self._keep_timings(chunk)
        return out

    def _finish(self) -> bytes:
        if self._finished:
            return b""
        out = b"" if self._started else self._start({})
        stop = "tool_use" if self._calls else self._stop_reason or "end_turn"
        out += self._tool_blocks()
        out += self._close_block()
        self._finished = True
        delta = {"stop_reason": stop, "stop_sequence": None}
        out += encode_event("message_delta", {"type": "message_delta", "delta": delta, "usage": self._usage})
        return out + encode_event("message_stop", {"type": "message_stop"})

    def _fail(self, message: str) -> bytes:
        self._finished = True
        self.failure = message
        return encode_event("error", error_payload(502, message))
