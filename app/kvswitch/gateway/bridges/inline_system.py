"""Inline system messages as user messages, in place (opt-in per profile: ``inline_system_as_user``).

Since 2.1.154 Claude Code sends ``system``-role messages inside ``messages`` (2.1.332: the environment
block right after the first user message; agents, skills and reminders later on). Some chat templates
take a system message only at the beginning and refuse the request (HTTP 400), and Claude Code then
retries the turn without them. ``as_user`` gives each such message the ``user`` role and wraps its text
in ``<system-reminder>`` tags, Claude Code's own form for context inside a user turn. Nothing moves and
the same message becomes the same bytes on every turn, so a continued conversation still extends its
own prefix. The body's top-level ``system`` is the template's first message and is left as it is.
"""

from __future__ import annotations

from typing import Any

from kvswitch.core.models import MESSAGES_PROTOCOL, Profile

OPEN, CLOSE = "<system-reminder>\n", "\n</system-reminder>"
#: what a chat template says when it refuses a system message after the first (the Qwen3 and Qwen3.5
#: templates' ``raise_exception``, as llama-server b11434 passes it on)
REFUSAL = "System message must be at the beginning"


def _is_text(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)


def _wrapped(content: Any) -> Any:
    if isinstance(content, str):
        return OPEN + content + CLOSE
    if isinstance(content, list):
        return [{**block, "text": OPEN + block["text"] + CLOSE} if _is_text(block) else block
                for block in content]
    return content


def as_user(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with every ``system`` message of ``messages`` as a ``user`` message in its place (a new
    dict; ``body`` is left as it was). A body without one is returned as is."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not any(
            isinstance(m, dict) and m.get("role") == "system" for m in messages):
        return body
    changed = [{**m, "role": "user", "content": _wrapped(m.get("content"))}
               if isinstance(m, dict) and m.get("role") == "system" else m for m in messages]
    return {**body, "messages": changed}


def applies(*, inline_system_as_user: bool, local_backend: bool, client: str) -> bool:
    """Whether the gateway hands inline system messages on as user messages: opt-in, local backends,
    Claude Code's Messages requests."""
    return inline_system_as_user and local_backend and client == MESSAGES_PROTOCOL


def remedies(profile: Profile, error: str) -> bool:
    """Whether the option would have avoided this refusal: the server's template refused a later system
    message, on a local profile that does not have the option on yet."""
    return REFUSAL in error and profile.kind.is_local and not profile.inline_system_as_user
