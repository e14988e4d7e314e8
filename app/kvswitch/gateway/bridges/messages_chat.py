"""Claude Code on a chat-completions backend: the Messages API in, OpenAI Chat Completions out.

Every rule here is a function of one message alone, so a message converts to the same bytes on every
turn it is sent again (the prompt cache's condition); Messages-only markers that move from turn to
turn (``cache_control`` on the newest block, the billing line's changing ``cch=``) are left out, and
nothing the bridge adds (ids, dates, counters) goes into the request. Every message is carried in
its place, the ``system``-role messages Claude Code puts inside ``messages`` (its environment block)
included: dropping or hoisting them is what cost other bridges their hit rate or half the prompt.
"""

from __future__ import annotations

import json
from typing import Any

from kvswitch.core.models import MESSAGES_PROTOCOL, WireProtocol
from kvswitch.gateway.bridges.base import Bridge, ResponseConverter
from kvswitch.gateway.bridges.chat_stream import as_list
from kvswitch.gateway.bridges.messages_answer import MessagesFromChat, messages_error

#: Claude Code's attribution line, first in ``system`` unless ``CLAUDE_CODE_ATTRIBUTION_HEADER=0``;
#: its ``cch=`` changes on every request, so on a converted path it would end the cached prefix there
BILLING_PREFIX = "x-anthropic-billing-header:"


def join_text(parts: list[str]) -> str:
    """Text blocks as one string: a newline between two blocks unless one already has it there."""
    out = ""
    for part in parts:
        if out and part and not out.endswith(("\n", " ")) and not part.startswith(("\n", " ")):
            out += "\n"
        out += part
    return out


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        b["text"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]


def system_text(system: Any) -> str | None:
    """The ``system`` field as one string, the billing line left out; ``None`` when there is none."""
    parts = [p for p in _texts(system) if not p.startswith(BILLING_PREFIX)]
    return join_text(parts) if parts else None


def _image_part(block: dict[str, Any]) -> dict[str, Any] | None:
    source = block.get("source")
    if not isinstance(source, dict):
        return None
    if source.get("type") == "base64":
        url = f"data:{source.get('media_type') or 'image/png'};base64,{source.get('data') or ''}"
    elif source.get("type") == "url" and isinstance(source.get("url"), str):
        url = source["url"]
    else:
        return None
    return {"type": "image_url", "image_url": {"url": url}}


def _user_content(blocks: list[dict[str, Any]]) -> str | list[dict[str, Any]] | None:
    """Text only: one string (what every chat vendor accepts); with images: OpenAI content parts."""
    parts: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append({"type": "text", "text": block["text"]})
        elif kind == "image" and (image := _image_part(block)) is not None:
            parts.append(image)
        elif (
            kind == "document"
            and isinstance(source := block.get("source"), dict)
            and source.get("type") == "text"
        ):
            parts.append({"type": "text", "text": str(source.get("data") or "")})
    if not parts:
        return None
    if all(p["type"] == "text" for p in parts):
        return join_text([p["text"] for p in parts])
    return parts


def _tool_message(block: dict[str, Any]) -> dict[str, Any]:
    content = block.get("content")
    if isinstance(content, list):
        converted = _user_content([b for b in content if isinstance(b, dict)])
        content = "" if converted is None else converted
    elif not isinstance(content, str):
        content = ""
    return {"role": "tool", "tool_call_id": str(block.get("tool_use_id") or ""), "content": content}


def arguments_text(value: Any) -> str:
    """A tool call's input as the ``arguments`` string: compact, the client's key order."""
    return json.dumps(value if isinstance(value, dict) else {}, ensure_ascii=False, separators=(",", ":"))


def _assistant_message(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    texts = [b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)]
    thinking = [
        b["thinking"] for b in blocks if b.get("type") == "thinking" and isinstance(b.get("thinking"), str)
    ]
    calls = [
        {
            "id": str(b.get("id") or ""),
            "type": "function",
            "function": {"name": str(b.get("name") or ""), "arguments": arguments_text(b.get("input"))},
        }
        for b in blocks
        if b.get("type") == "tool_use"
    ]
    message: dict[str, Any] = {"role": "assistant", "content": join_text(texts) if texts else None}
    if thinking:
        # passed back: DeepSeek and Kimi refuse a tool-call turn whose reasoning is missing
        message["reasoning_content"] = join_text(thinking)
    if calls:
        message["tool_calls"] = calls
    elif message["content"] is None:
        message["content"] = ""
    return message


def convert_message(message: dict[str, Any]) -> list[dict[str, Any]]:
    """One Messages API message as the chat messages it becomes (tool results are messages of their own)."""
    role = message.get("role")
    content = message.get("content")
    if isinstance(content, str):
        return [{"role": role if role in ("user", "assistant", "system") else "user", "content": content}]
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    if role == "assistant":
        return [_assistant_message(blocks)]
    if role == "system":
        return [{"role": "system", "content": join_text(_texts(blocks))}]
    # tool messages must follow the assistant's tool_calls at once, so they go before the user's text
    out = [_tool_message(b) for b in blocks if b.get("type") == "tool_result"]
    rest = _user_content([b for b in blocks if b.get("type") != "tool_result"])
    if rest is not None or not out:
        out.append({"role": "user", "content": "" if rest is None else rest})
    return out


def convert_tools(tools: Any) -> list[dict[str, Any]]:
    """Client tools in the client's order; the Messages API's server tools (typed, no schema) are left out."""
    out: list[dict[str, Any]] = []
    for tool in tools if isinstance(tools, list) else []:
        if (
            not isinstance(tool, dict)
            or "input_schema" not in tool
            or tool.get("type") not in (None, "custom")
        ):
            continue
        function: dict[str, Any] = {"name": str(tool.get("name") or "")}
        if isinstance(tool.get("description"), str):
            function["description"] = tool["description"]
        function["parameters"] = tool["input_schema"]
        out.append({"type": "function", "function": function})
    return out


def convert_tool_choice(choice: Any) -> tuple[Any, bool | None]:
    """``tool_choice`` and ``parallel_tool_calls`` for the Messages API's ``tool_choice``."""
    if not isinstance(choice, dict):
        return None, None
    kind = choice.get("type")
    parallel = False if choice.get("disable_parallel_tool_use") else None
    if kind == "auto":
        return "auto", parallel
    if kind == "any":
        return "required", parallel
    if kind == "none":
        return "none", None
    if kind == "tool":
        return {"type": "function", "function": {"name": str(choice.get("name") or "")}}, parallel
    return None, None


def convert_request(body: dict[str, Any]) -> dict[str, Any]:
    """The chat-completions request for a Messages API ``body`` (fixed key order)."""
    messages: list[dict[str, Any]] = []
    system = system_text(body.get("system"))
    if system is not None:
        messages.append({"role": "system", "content": system})
    for message in as_list(body.get("messages")):
        if isinstance(message, dict):
            messages.extend(convert_message(message))
    out: dict[str, Any] = {"model": body.get("model")}
    tools = convert_tools(body.get("tools"))
    if tools:
        out["tools"] = tools
    out["messages"] = messages
    choice, parallel = convert_tool_choice(body.get("tool_choice"))
    if tools and choice is not None:
        out["tool_choice"] = choice
    if tools and parallel is not None:
        out["parallel_tool_calls"] = parallel
    if isinstance(body.get("max_tokens"), int) and not isinstance(body.get("max_tokens"), bool):
        out["max_tokens"] = body["max_tokens"]
    stops = body.get("stop_sequences")
    if isinstance(stops, list) and stops:
        out["stop"] = [s for s in stops if isinstance(s, str)]
    for name in ("temperature", "top_p"):
        if isinstance(body.get(name), int | float) and not isinstance(body.get(name), bool):
            out[name] = body[name]
    if body.get("stream"):
        out["stream"] = True
        out["stream_options"] = {"include_usage": True}
    return out


class MessagesToChat(Bridge):
    """Claude Code (the Messages API) to a backend that serves only Chat Completions."""

    client: WireProtocol = MESSAGES_PROTOCOL
    upstream: WireProtocol = "openai_chat"

    def convert_request(self, body: dict[str, Any]) -> dict[str, Any]:
        return convert_request(body)

    def response_converter(self, request: dict[str, Any], *, streaming: bool) -> ResponseConverter:
        return MessagesFromChat(model=str(request.get("model") or ""), streaming=streaming)

    def convert_error(self, status: int, body: bytes) -> bytes:
        return messages_error(status, body)
