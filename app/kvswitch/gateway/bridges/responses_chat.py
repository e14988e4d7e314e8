"""Codex on a chat-completions backend: OpenAI Responses in, OpenAI Chat Completions out.

Codex (0.169) sends its whole history as ``input`` items on every turn: developer messages (its
instructions), a user message with its ``<environment_context>``, the user's words, and then the
turn's reasoning, assistant messages, ``function_call`` and ``function_call_output`` items. Each item
converts on its own, so a turn's items give the same chat messages on every later turn (the prefix
cache's condition). Two shapes are joined, always the same way: the leading run of developer/system
messages becomes one system message (templates such as Qwen's refuse a second system message), and a
turn's reasoning, text and function calls become one assistant message (chat has no other way to say
it). Tools: ``function`` tools pass in the client's order; a ``namespace`` tool's functions are
flattened in place as ``<namespace>__<name>`` (and named back on the way out); tools that chat cannot
express (``web_search``, ``local_shell``, ``custom`` free-form tools, file search, image generation)
are left out, as the local server's own Responses endpoint does (b11434).
"""

from __future__ import annotations

import json
from typing import Any

from kvswitch.core.models import WireProtocol
from kvswitch.gateway.bridges.base import Bridge, BridgeRequestError, ResponseConverter
from kvswitch.gateway.bridges.chat_stream import as_list
from kvswitch.gateway.bridges.messages_chat import join_text
from kvswitch.gateway.bridges.responses_answer import ResponsesFromChat, responses_error
from kvswitch.gateway.bridges.responses_store import ResponseStore

NAMESPACE_SEPARATOR = "__"


class UnknownPreviousResponse(BridgeRequestError):
    """``previous_response_id`` names an answer the gateway does not (or no longer) remember."""

    def __init__(self, response_id: str) -> None:
        message = f"previous response {response_id!r} is not in the gateway's store (it keeps recent ones)"
        body = json.dumps(
            {
                "error": {
                    "type": "invalid_request_error",
                    "code": "previous_response_not_found",
                    "message": message,
                }
            }
        )
        super().__init__(400, body.encode(), message)


def _content(parts: Any) -> str | list[dict[str, Any]]:
    if isinstance(parts, str):
        return parts
    out: list[dict[str, Any]] = []
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
            out.append({"type": "text", "text": part["text"]})
        elif kind == "refusal" and isinstance(part.get("refusal"), str):
            out.append({"type": "text", "text": part["refusal"]})
        elif kind == "input_image" and isinstance(url := part.get("image_url"), str):
            out.append({"type": "image_url", "image_url": {"url": url}})
    if all(p["type"] == "text" for p in out):
        return join_text([p["text"] for p in out])
    return out


def _reasoning_text(item: dict[str, Any]) -> str:
    texts = [c.get("text") for c in as_list(item.get("content")) if isinstance(c, dict)]
    if not any(isinstance(t, str) and t for t in texts):
        texts = [s.get("text") for s in as_list(item.get("summary")) if isinstance(s, dict)]
    return join_text([t for t in texts if isinstance(t, str) and t])


def _call(item: dict[str, Any]) -> dict[str, Any]:
    kind = item.get("type")
    name = str(item.get("name") or "")
    if kind == "function_call" and isinstance(item.get("namespace"), str) and item["namespace"]:
        name = item["namespace"] + NAMESPACE_SEPARATOR + name
    if kind == "function_call":
        arguments = item.get("arguments") if isinstance(item.get("arguments"), str) else "{}"
    elif kind == "custom_tool_call":
        arguments = json.dumps({"input": item.get("input")}, ensure_ascii=False, separators=(",", ":"))
    else:  # local_shell_call
        name = "local_shell"
        arguments = json.dumps(item.get("action") or {}, ensure_ascii=False, separators=(",", ":"))
    return {
        "id": str(item.get("call_id") or item.get("id") or ""),
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def _tool_output(item: dict[str, Any]) -> dict[str, Any]:
    output = item.get("output")
    if isinstance(output, dict):  # an older shape: {"content": ..., "success": ...}
        output = output.get("content")
    return {"role": "tool", "tool_call_id": str(item.get("call_id") or ""), "content": _content(output)}


def convert_input(items: Any) -> list[dict[str, Any]]:
    """Responses ``input`` as chat messages (no instructions, no stored history)."""
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    messages: list[dict[str, Any]] = []
    turn: dict[str, Any] | None = None  # the assistant message the current turn's items go into
    leading_system = True
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        role = item.get("role")
        if kind == "message" and role in ("developer", "system"):
            text = _content(item.get("content"))
            text = text if isinstance(text, str) else join_text([p.get("text", "") for p in text])
            if leading_system and messages:
                messages[-1]["content"] = join_text([messages[-1]["content"], text])
            else:
                messages.append({"role": "system", "content": text})
            turn = None
            continue
        leading_system = False
        if kind == "message" and role == "user":
            messages.append({"role": "user", "content": _content(item.get("content"))})
            turn = None
        elif kind in ("message", "reasoning", "function_call", "custom_tool_call", "local_shell_call"):
            if turn is None:
                turn = {"role": "assistant", "content": None}
                messages.append(turn)
            if kind == "message":
                text = _content(item.get("content"))
                text = text if isinstance(text, str) else join_text([p.get("text", "") for p in text])
                turn["content"] = join_text([turn["content"], text]) if turn["content"] else text
            elif kind == "reasoning":
                if reasoning := _reasoning_text(item):
                    turn["reasoning_content"] = join_text([turn.get("reasoning_content", ""), reasoning])
            else:
                turn.setdefault("tool_calls", []).append(_call(item))
        elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            messages.append(_tool_output(item))
            turn = None
        # item_reference, web_search_call, compaction and other server-side items: nothing to carry
    for message in messages:
        if message["role"] == "assistant" and message["content"] is None and "tool_calls" not in message:
            message["content"] = ""
    return messages


def convert_tools(tools: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "function":
            out.append(_function(tool, ""))
        elif tool.get("type") == "namespace" and isinstance(tool.get("name"), str):
            prefix = tool["name"] + NAMESPACE_SEPARATOR
            out.extend(
                _function(t, prefix)
                for t in as_list(tool.get("tools"))
                if isinstance(t, dict) and t.get("type") == "function"
            )
    return out


def _function(tool: dict[str, Any], prefix: str) -> dict[str, Any]:
    function: dict[str, Any] = {"name": prefix + str(tool.get("name") or "")}
    if isinstance(tool.get("description"), str):
        function["description"] = tool["description"]
    function["parameters"] = (
        tool.get("parameters")
        if isinstance(tool.get("parameters"), dict)
        else {"type": "object", "properties": {}}
    )
    return {"type": "function", "function": function}


def convert_request(body: dict[str, Any], history: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The chat request for a Responses ``body``; ``history`` is the stored conversation it follows."""
    messages: list[dict[str, Any]] = list(history or [])
    if isinstance(body.get("instructions"), str) and body["instructions"] and not history:
        messages.append({"role": "system", "content": body["instructions"]})
    new = convert_input(body.get("input"))
    if messages and new and messages[-1]["role"] == "system" and new[0]["role"] == "system" and not history:
        messages[-1]["content"] = join_text([messages[-1]["content"], new.pop(0)["content"]])
    messages.extend(new)
    out: dict[str, Any] = {"model": body.get("model")}
    tools = convert_tools(body.get("tools"))
    if tools:
        out["tools"] = tools
    out["messages"] = messages
    choice = body.get("tool_choice")
    if tools and choice in ("auto", "none", "required"):
        out["tool_choice"] = choice
    elif tools and isinstance(choice, dict) and choice.get("type") == "function":
        out["tool_choice"] = {"type": "function", "function": {"name": str(choice.get("name") or "")}}
    if tools and isinstance(body.get("parallel_tool_calls"), bool):
        out["parallel_tool_calls"] = body["parallel_tool_calls"]
    if isinstance(body.get("max_output_tokens"), int) and not isinstance(body.get("max_output_tokens"), bool):
        out["max_tokens"] = body["max_output_tokens"]
    for name in ("temperature", "top_p"):
        if isinstance(body.get(name), int | float) and not isinstance(body.get(name), bool):
            out[name] = body[name]
    reasoning = body.get("reasoning")
    if (
        isinstance(reasoning, dict)
        and isinstance(reasoning.get("effort"), str)
        and reasoning["effort"] != "none"
    ):
        out["reasoning_effort"] = reasoning["effort"]
    text_format = body.get("text", {}).get("format") if isinstance(body.get("text"), dict) else None
    if isinstance(text_format, dict) and text_format.get("type") == "json_schema":
        schema = {k: text_format[k] for k in ("name", "schema", "strict") if k in text_format}
        out["response_format"] = {"type": "json_schema", "json_schema": schema}
    if body.get("stream"):
        out["stream"] = True
        out["stream_options"] = {"include_usage": True}
    return out


class ResponsesToChat(Bridge):
    """Codex (OpenAI Responses) to a backend that serves only Chat Completions."""

    client: WireProtocol = "openai_responses"
    upstream: WireProtocol = "openai_chat"

    def __init__(self, store: ResponseStore) -> None:
        self.store = store
        #: the conversation ``convert_request`` read for a ``previous_response_id``: the answer's
        #: converter continues from the same copy, so an entry evicted while the upstream answers
        #: (other requests filled the store) is not looked up a second time (that was a 500)
        self._read: tuple[str, list[dict[str, Any]]] | None = None

    def _history(self, body: dict[str, Any]) -> list[dict[str, Any]] | None:
        previous = body.get("previous_response_id")
        if not isinstance(previous, str) or not previous:
            return None
        if self._read is not None and self._read[0] == previous:
            return list(self._read[1])
        history = self.store.get(previous)
        if history is None:
            raise UnknownPreviousResponse(previous)
        self._read = (previous, history)
        return list(history)

    def convert_request(self, body: dict[str, Any]) -> dict[str, Any]:
        return convert_request(body, self._history(body))

    def response_converter(self, request: dict[str, Any], *, streaming: bool) -> ResponseConverter:
        keep = request.get("store") is not False
        messages = self.convert_request(request)["messages"] if keep else None
        namespaces = {
            t["name"]
            for t in as_list(request.get("tools"))
            if isinstance(t, dict) and t.get("type") == "namespace" and isinstance(t.get("name"), str)
        }
        return ResponsesFromChat(
            model=str(request.get("model") or ""),
            streaming=streaming,
            namespaces=frozenset(namespaces),
            store=self.store if keep else None,
            messages=messages,
        )

    def convert_error(self, status: int, body: bytes) -> bytes:
        return responses_error(status, body)
