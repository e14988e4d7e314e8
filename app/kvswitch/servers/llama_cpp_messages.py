"""A Messages body as llama-server turns it into a Chat Completions body before rendering.

llama-server's ``/apply-template`` takes only Chat Completions bodies, while Claude Code sends Messages
bodies. To render a Claude Code request exactly as the server does, this module repeats the server's own
conversion (``server_chat_convert_anthropic_to_oai`` in ``tools/server/server-chat.cpp``, b11434),
including its normalisation of a ``cch=`` field in the billing header. Only what reaches the chat
template is kept (messages, tools, tool choice, template options); sampling parameters are dropped.

The conversion is checked on every use: the caller compares the token count of the rendered prompt with
the server's own ``/v1/messages/count_tokens`` answer for the original body, so a server whose conversion
has moved on is noticed rather than trusted.
"""

from __future__ import annotations

import json
from typing import Any

BILLING_PREFIX = "x-anthropic-billing-header:"
_CCH_LENGTH = 5


def _text(value: Any, key: str) -> str:
    if isinstance(value, dict):
        got = value.get(key)
        if isinstance(got, str):
            return got
    return ""


def normalise_billing_header(text: str) -> str:
    """The server replaces the 5-character ``cch=`` value of a billing header with ``fffff``."""
    if not text.startswith(BILLING_PREFIX):
        return text
    index = text.find("cch=", len(BILLING_PREFIX))
    if index < 0:
        return text
    start = index + 4
    if start + _CCH_LENGTH < len(text) and text[start + _CCH_LENGTH] == ";":
        return text[:start] + "f" * _CCH_LENGTH + text[start + _CCH_LENGTH :]
    return text


def server_json_dump(value: Any) -> str:
    """``nlohmann::json::dump()``: compact, object keys sorted (they are kept in a ``std::map``)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _image_part(source: Any) -> dict[str, Any] | None:
    if not isinstance(source, dict):
        return None
    kind = source.get("type")
    if kind == "base64":
        media = _text(source, "media_type") or "image/jpeg"
        return {"type": "image_url", "image_url": {"url": f"data:{media};base64,{_text(source, 'data')}"}}
    if kind == "url":
        return {"type": "image_url", "image_url": {"url": _text(source, "url")}}
    return None


def _tool_result(block: dict[str, Any]) -> dict[str, Any]:
    call_id = _text(block, "tool_use_id")
    content = block.get("content")
    if isinstance(content, str):
        return {"role": "tool", "tool_call_id": call_id, "content": content}
    if not isinstance(content, list):
        return {"role": "tool", "tool_call_id": call_id, "content": ""}
    text, parts, images = "", [], False
    for item in content:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "text":
            text += _text(item, "text")
            parts.append({"type": "text", "text": _text(item, "text")})
        elif kind == "image":
            images = True
            image = _image_part(item.get("source"))
            if image is not None:
                parts.append(image)
    return {"role": "tool", "tool_call_id": call_id, "content": parts if images else text}


def _message(message: Any) -> list[Any]:
    """One Anthropic message as the Chat Completions messages the server makes of it."""
    if not isinstance(message, dict):
        return [message]
    role = _text(message, "role")
    if "content" not in message:
        return [] if role == "assistant" else [message]
    content = message["content"]
    if not isinstance(content, list):
        return [message]
    converted: list[Any] = []
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    reasoning = ""
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            converted.append(block)
        elif kind == "thinking":
            reasoning += _text(block, "thinking")
        elif kind == "image":
            image = _image_part(block.get("source"))
            if image is not None:
                converted.append(image)
        elif kind == "tool_use":
            arguments = block.get("input", {})
            calls.append(
                {
                    "id": _text(block, "id"),
                    "type": "function",
                    "function": {"name": _text(block, "name"), "arguments": server_json_dump(arguments)},
                }
            )
        elif kind == "tool_result":
            results.append(_tool_result(block))
    out: list[Any] = []
    if converted or calls or reasoning:
        new: dict[str, Any] = {"role": role, "content": converted if converted else ""}
        if calls:
            new["tool_calls"] = calls
        if reasoning:
            new["reasoning_content"] = reasoning
        out.append(new)
    return out + results


def _system(system: Any) -> str | None:
    if isinstance(system, str):
        return normalise_billing_header(system)
    if isinstance(system, list):
        return "".join(
            normalise_billing_header(_text(block, "text"))
            for block in system
            if isinstance(block, dict) and block.get("type") == "text"
        )
    return None


def anthropic_to_chat(body: dict[str, Any]) -> dict[str, Any]:
    """The Chat Completions body whose rendered prompt is the one llama-server builds for ``body``."""
    messages: list[Any] = []
    system = _system(body.get("system"))
    if system is not None:
        messages.append({"role": "system", "content": system})
    if isinstance(body.get("messages"), list):
        for message in body["messages"]:
            messages.extend(_message(message))
    chat: dict[str, Any] = {"messages": messages}
    tools = body.get("tools")
    if isinstance(tools, list):
        chat["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": _text(tool, "name"),
                    "description": _text(tool, "description"),
                    "parameters": tool.get("input_schema", {}) if isinstance(tool, dict) else {},
                },
            }
            for tool in tools
        ]
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        if choice.get("type") == "auto":
            chat["tool_choice"] = "auto"
        elif choice.get("type") in ("any", "tool"):
            chat["tool_choice"] = "required"
    if "chat_template_kwargs" in body:
        chat["chat_template_kwargs"] = body["chat_template_kwargs"]
    return chat


_ANTHROPIC_ONLY_BLOCKS = ("tool_use", "tool_result", "thinking", "redacted_thinking")


def is_anthropic(body: dict[str, Any]) -> bool:
    """A Messages body: a top-level system, Anthropic-only blocks, or tools with an ``input_schema``.

    A body with none of them (plain user/assistant strings) renders the same either way.
    """
    if "system" in body:
        return True
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and "input_schema" in tool:
            return True
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
            isinstance(block, dict) and (block.get("type") in _ANTHROPIC_ONLY_BLOCKS or "source" in block)
            for block in content
        ):
            return True
    return False


def chat_body(body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The Chat Completions body to render, and whether ``body`` was a Messages body."""
    return (anthropic_to_chat(body), True) if is_anthropic(body) else (body, False)
