"""A request body cut into the parts a chat template renders, in render order, canonically serialised.

Each part is one line ``<label> <compact JSON, sorted keys, UTF-8>``; ``cache_control`` markers are
dropped because they never reach the rendered prompt (Claude Code moves them between turns).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

#: top-level keys that render into the prompt, in the order most chat templates emit them
PROMPT_KEYS = ("system", "instructions", "tools", "functions", "messages", "input", "prompt")


@dataclass(frozen=True)
class PromptPart:
    """One piece of the rendered prompt: its label (``system[0]``, ``messages[2].content[1]``) and bytes."""

    label: str
    data: bytes
    role: str | None = None
    message_index: int | None = None

    @property
    def line(self) -> bytes:
        return self.label.encode() + b" " + self.data + b"\n"


def canonical(value: Any) -> bytes:
    return json.dumps(
        _strip_cache_control(value), ensure_ascii=False, sort_keys=True, separators=(",", ":")
    ).encode("utf-8")


def _strip_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip_cache_control(v) for v in value]
    return value


def prompt_parts(body: dict[str, Any]) -> list[PromptPart]:
    """Cut a request body (Messages, OpenAI chat/Responses, a native completion or chat API) into parts."""
    return list(_iter_parts(body))


def _iter_parts(body: dict[str, Any]) -> Iterator[PromptPart]:
    for key in PROMPT_KEYS:
        if key not in body:
            continue
        value = body[key]
        if key in ("system", "instructions") and isinstance(value, list):
            for i, block in enumerate(value):
                yield PromptPart(f"{key}[{i}]", canonical(block), role="system")
        elif key in ("messages", "input") and isinstance(value, list):
            for i, message in enumerate(value):
                yield from _message_parts(key, i, message)
        else:
            role = "system" if key in ("system", "instructions") else None
            yield PromptPart(key, canonical(value), role=role)


def _message_parts(key: str, index: int, message: Any) -> Iterator[PromptPart]:
    if not isinstance(message, dict):
        yield PromptPart(f"{key}[{index}]", canonical(message), message_index=index)
        return
    role = message.get("role") if isinstance(message.get("role"), str) else None
    content = message.get("content")
    header = {k: v for k, v in message.items() if k != "content"}
    yield PromptPart(f"{key}[{index}]", canonical(header), role=role, message_index=index)
    if isinstance(content, list):
        for j, block in enumerate(content):
            yield PromptPart(f"{key}[{index}].content[{j}]", canonical(block), role=role, message_index=index)
    elif content is not None:
        yield PromptPart(f"{key}[{index}].content", canonical(content), role=role, message_index=index)


def serialise(body: dict[str, Any]) -> bytes:
    """The canonical serialisation that offsets refer to."""
    return b"".join(part.line for part in prompt_parts(body))
