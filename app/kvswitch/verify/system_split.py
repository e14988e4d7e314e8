"""A system prompt split into several system messages: a known cache trap on local servers.

Many Jinja chat templates of local servers accept one system message, at the beginning only ("System message
must be at the beginning"). A client that sends its system prompt as two or more system messages (an
open OpenCode change does) makes such a template refuse the request, or renders it differently from
turn to turn, and the server re-processes the whole prompt. The request body shows it before any
server does, so a client verify names it for the turn whose request has it.
"""

from __future__ import annotations

from typing import Any


def system_messages(body: Any) -> int:
    """How many system messages a Chat Completions body carries (0 for other bodies)."""
    if not isinstance(body, dict):
        return 0
    messages = body.get("messages")
    if not isinstance(messages, list):
        return 0
    return sum(1 for m in messages if isinstance(m, dict) and m.get("role") in ("system", "developer"))


def split_system_note(body: Any) -> str | None:
    """The sentence to show when the body's system prompt is split, else ``None``."""
    count = system_messages(body)
    if count < 2:
        return None
    return (
        f"the request carries its system prompt as {count} system messages; Jinja chat templates that "
        "accept one system message at the beginning refuse it or render it differently, and the server "
        "then re-processes the whole prompt (keep one system message, or a template that joins them)"
    )
