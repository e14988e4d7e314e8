"""A chat-completions answer told to Codex as an OpenAI Responses answer (JSON or SSE).

Codex acts on ``response.output_item.done`` (each finished item: reasoning, message, function call)
and ends the turn on ``response.completed`` (its usage is the token count Codex shows); the deltas
in between (``response.output_text.delta``, ``response.reasoning_text.delta``,
``response.function_call_arguments.delta``) stream the text, each inside an item opened by
``response.output_item.added``. The shapes follow the Responses endpoint of the local server the
tests run (b11434), which Codex 0.169 works with. ``input_tokens`` in a Responses usage includes the
cached part (OpenAI's meaning), with the cached part in ``input_tokens_details.cached_tokens``.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from kvswitch.gateway.bridges.base import json_bytes
from kvswitch.gateway.bridges.chat_stream import (
    ChatAnswerConverter,
    as_list,
    as_object,
    chat_token_counts,
    error_message,
)
from kvswitch.gateway.bridges.responses_store import ResponseStore
from kvswitch.gateway.bridges.sse import StreamError, encode_event, parse_object
from kvswitch.gateway.bridges.tool_calls import ToolCalls

NAMESPACE_SEPARATOR = "__"


def responses_error(status: int, body: bytes) -> bytes:
    kind = "server_error" if status >= 500 or status == 0 else "invalid_request_error"
    if status == 429:
        kind = "rate_limit_exceeded"
    return json_bytes({"error": {"type": kind, "code": None, "message": error_message(body)}})


class ResponsesFromChat(ChatAnswerConverter):
    """One answer: chat JSON or chat SSE in, Responses JSON or Responses SSE out."""

    def __init__(
        self,
        *,
        model: str,
        streaming: bool,
        namespaces: frozenset[str] = frozenset(),
        store: ResponseStore | None = None,
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(streaming=streaming)
        self._model = model
        self._namespaces = namespaces
        self._store = store
        self._messages = messages
        self._id = ""
        self._output: list[dict[str, Any]] = []
        self._open: dict[str, Any] | None = None  # the item being streamed
        self._open_key: tuple[str, int] | None = None
        self._finish_reason: str | None = None
        self._usage: dict[str, Any] = {}
        self._calls = ToolCalls()

    def _response_id(self, chat_id: Any) -> str:
        """The id this answer is given. When it is kept for ``previous_response_id`` the gateway mints
        it: an upstream that sends no id, or the same one twice (some servers count from 1 per
        process), would otherwise let one client continue another's conversation. An answer nobody
        can continue keeps the upstream's id (easier to find in its log)."""
        if self._store is not None:
            return "resp_" + secrets.token_hex(12)
        return "resp_" + str(chat_id or "bridge").removeprefix("chatcmpl-")

    # -- items ---------------------------------------------------------------------------------
    def _call_item(self, call_id: str, name: str, arguments: str) -> dict[str, Any]:
        item: dict[str, Any] = {
            "id": "fc_" + call_id,
            "type": "function_call",
            "status": "completed",
            "arguments": arguments,
            "call_id": call_id,
            "name": name,
        }
        namespace, sep, short = name.partition(NAMESPACE_SEPARATOR)
        if sep and namespace in self._namespaces:
            item["name"], item["namespace"] = short, namespace
        return item

    def _response(self, status: str) -> dict[str, Any]:
        response: dict[str, Any] = {
            "id": self._id,
            "object": "response",
            "created_at": int(time.time()),
            "status": status,
            "model": self._model,
            "output": self._output,
        }
        if self._usage:
            response["usage"] = self._usage
        if status == "incomplete":
            response["incomplete_details"] = {"reason": "max_output_tokens"}
        return response

    def _set_usage(self, usage: Any) -> None:
        counts = chat_token_counts(usage, self.usage)
        if counts is None:
            return
        prompt, cached, output = counts
        self._usage = {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": output,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + output,
        }

    def _remember(self) -> None:
        """The conversation including this answer, for a later ``previous_response_id``."""
        if self._store is None or self._messages is None:
            return
        answer: dict[str, Any] = {"role": "assistant", "content": None}
        for item in self._output:
            if item["type"] == "message":
                answer["content"] = item["content"][0]["text"]
            elif item["type"] == "reasoning":
                answer["reasoning_content"] = item["content"][0]["text"]
            elif item["type"] == "function_call":
                name = (
                    item["name"]
                    if "namespace" not in item
                    else item["namespace"] + NAMESPACE_SEPARATOR + item["name"]
                )
                call = {
                    "id": item["call_id"],
                    "type": "function",
                    "function": {"name": name, "arguments": item["arguments"]},
                }
                answer.setdefault("tool_calls", []).append(call)
        if answer["content"] is None and "tool_calls" not in answer:
            answer["content"] = ""
        self._store.put(self._id, [*self._messages, answer])

    # -- non-streaming -------------------------------------------------------------------------
    def _json_error(self, message: str) -> bytes:
        self.failure = message
        return json_bytes({"error": {"type": "server_error", "code": None, "message": message}})

    def _json_answer(self) -> bytes:
        try:
            data = parse_object(bytes(self._body).decode("utf-8", errors="replace"), "upstream answer")
        except StreamError as exc:
            return self._json_error(str(exc))
        if "error" in data and "choices" not in data:
            self.failure = error_message(bytes(self._body))
            return responses_error(502, bytes(self._body))
        self._id = self._response_id(data.get("id"))
        self._model = str(data.get("model") or self._model)
        choices = data.get("choices") if isinstance(data.get("choices"), list) else []
        choice = as_object(choices[0] if choices else None)
        message = as_object(choice.get("message"))
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            self._output.append(self._reasoning_item(reasoning))
        if isinstance(message.get("content"), str) and message["content"]:
            self._output.append(self._message_item(message["content"]))
        for call in as_list(message.get("tool_calls")):
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                arguments = function.get("arguments")
                arguments = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
                self._output.append(
                    self._call_item(str(call.get("id") or ""), str(function.get("name") or ""), arguments)
                )
        self._set_usage(data.get("usage"))
        self._keep_timings(data)
        self._remember()
        status = "incomplete" if choice.get("finish_reason") == "length" else "completed"
        return json_bytes(self._response(status))

    def _message_item(self, text: str) -> dict[str, Any]:
        content = [{"type": "output_text", "text": text, "annotations": []}]
        return {
            "id": self._id.replace("resp_", "msg_", 1),
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": content,
        }

    def _reasoning_item(self, text: str) -> dict[str, Any]:
        content = [{"type": "reasoning_text", "text": text}]
        return {
            "id": self._id.replace("resp_", "rs_", 1),
            "type": "reasoning",
            "summary": [],
            "content": content,
            "encrypted_content": "",
        }

    # -- streaming -----------------------------------------------------------------------------
    def _event(self, payload: dict[str, Any]) -> bytes:
        return encode_event(payload["type"], payload)

    def _start(self, chunk: dict[str, Any]) -> bytes:
        self._started = True
        self._id = self._response_id(chunk.get("id"))
        self._model = str(chunk.get("model") or self._model)
        head = {
            "id": self._id,
            "object": "response",
            "status": "in_progress",
            "model": self._model,
            "output": [],
        }
        return self._event({"type": "response.created", "response": head}) + self._event(
            {"type": "response.in_progress", "response": head}
        )

    def _close_item(self) -> bytes:
        item, self._open, self._open_key = self._open, None, None
        if item is None:
            return b""
        index = len(self._output)
        out = b""
        if item["type"] == "message":
            text = item.pop("_text")
            done = {**self._message_item(text), "id": item["id"]}
            out += self._event(
                {
                    "type": "response.output_text.done",
                    "item_id": done["id"],
                    "output_index": index,
                    "content_index": 0,
                    "text": text,
                }
            )
            out += self._event(
                {
                    "type": "response.content_part.done",
                    "item_id": done["id"],
                    "output_index": index,
                    "content_index": 0,
                    "part": done["content"][0],
                }
            )
        elif item["type"] == "reasoning":
            done = {**self._reasoning_item(item.pop("_text")), "id": item["id"]}
        else:
            done = self._call_item(item["call_id"], item["_name"], item["_arguments"])
            out += self._event(
                {
                    "type": "response.function_call_arguments.done",
                    "item_id": done["id"],
                    "output_index": index,
                    "arguments": done["arguments"],
                }
            )
        self._output.append(done)
        return out + self._event({"type": "response.output_item.done", "output_index": index, "item": done})

    def _open_item(self, key: tuple[str, int], item: dict[str, Any]) -> bytes:
        out = self._close_item()
        self._open, self._open_key = item, key
        index = len(self._output)
        shown = {k: v for k, v in item.items() if not k.startswith("_")}
        out += self._event({"type": "response.output_item.added", "output_index": index, "item": shown})
        if item["type"] == "message":
            part = {"type": "output_text", "text": "", "annotations": []}
            out += self._event(
                {
                    "type": "response.content_part.added",
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "part": part,
                }
            )
        return out

    def _piece(self, delta: dict[str, Any]) -> bytes:
        out = b""
        index = len(self._output)
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            if self._open_key != ("reasoning", -1):
                rid = self._id.replace("resp_", "rs_", 1) + (f"_{index}" if index else "")
                out += self._open_item(
                    ("reasoning", -1),
                    {
                        "id": rid,
                        "type": "reasoning",
                        "summary": [],
                        "content": [],
                        "status": "in_progress",
                        "_text": "",
                    },
                )
                index = len(self._output)
            assert self._open is not None
            self._open["_text"] += reasoning
            out += self._event(
                {
                    "type": "response.reasoning_text.delta",
                    "item_id": self._open["id"],
                    "output_index": index,
                    "content_index": 0,
                    "delta": reasoning,
                }
            )
        text = delta.get("content")
        if isinstance(text, str) and text:
            if self._open_key != ("message", -1):
                mid = self._id.replace("resp_", "msg_", 1) + (f"_{index}" if index else "")
                out += self._open_item(
                    ("message", -1),
                    {
                        "id": mid,
                        "type": "message",
                        "status": "in_progress",
                        "role": "assistant",
                        "content": [],
                        "_text": "",
                    },
                )
                index = len(self._output)
            assert self._open is not None
            self._open["_text"] += text
            out += self._event(
                {
                    "type": "response.output_text.delta",
                    "item_id": self._open["id"],
                    "output_index": index,
                    "content_index": 0,
                    "delta": text,
                }
            )
        for call in as_list(delta.get("tool_calls")):
            if isinstance(call, dict):
                self._calls.add(call)
        return out

    def _call_items(self) -> bytes:
        """The collected function calls, each one whole item, after the streamed text and reasoning
        (``tool_calls.ToolCalls``: a chat stream may interleave their pieces)."""
        out = b""
        for number, call in enumerate(self._calls.finished()):
            index = len(self._output) + (1 if self._open is not None else 0)
            call_id = call.id or f"call_{index}"
            shown = self._call_item(call_id, call.name, "")
            item = {**shown, "status": "in_progress", "_name": call.name, "_arguments": call.arguments}
            out += self._open_item(("function_call", number), item)
            if call.arguments:
                out += self._event({"type": "response.function_call_arguments.delta", "item_id": item["id"],
                                    "output_index": len(self._output), "delta": call.arguments})
        return out

    def _chunk(self, data: str) -> bytes:
        if data.strip() == "[DONE]":
            return self._finish()
        chunk = parse_object(data, "upstream stream")
        if "error" in chunk and "choices" not in chunk:
            return self._fail(error_message(data.encode()))
        out = b"" if self._started else self._start(chunk)
        for choice in as_list(chunk.get("choices")):
            if isinstance(choice, dict) and isinstance(choice.get("delta"), dict):
                out += self._piece(choice["delta"])
            if isinstance(choice, dict) and choice.get("finish_reason"):
                self._finish_reason = str(choice["finish_reason"])
        if chunk.get("usage"):
            self._set_usage(chunk["usage"])
        self._keep_timings(chunk)
        return out

    def _finish(self) -> bytes:
        if self._finished:
            return b""
        out = b"" if self._started else self._start({})
        out += self._call_items()
        out += self._close_item()
        self._finished = True
        self._remember()
        if self._finish_reason == "length":
            return out + self._event(
                {"type": "response.incomplete", "response": self._response("incomplete")}
            )
        return out + self._event({"type": "response.completed", "response": self._response("completed")})

    def _fail(self, message: str) -> bytes:
        self._finished = True
        self.failure = message
        out = b"" if self._started else self._start({})
        response = {**self._response("failed"), "error": {"code": "server_error", "message": message}}
        return out + self._event({"type": "response.failed", "response": response})
