"""The prefix stabiliser: Claude Code's shared context before the user's words, for a local server.

Claude Code 2.1.332 opens every conversation with ``messages[0]`` = the user message (its
``<system-reminder>`` blocks, then the user's own words) and ``messages[1]`` = a ``system``-role
message holding the environment block (working directory, platform, deferred tools, agent types,
skills, today's date). Every conversation in a project shares the system prompt, the tools, the
reminders and the environment block; only the words differ. Because the words come first, a local
server matching by longest common prefix reuses only the system prompt and tools of an earlier
conversation (about 6k of 13.8k tokens, measured), and re-processes the environment block each time.

``stabilise`` moves that environment message (the run of ``system`` messages right after the first
user message) before it, and puts the first user message's reminder blocks before its other blocks
(Claude Code already sends them first; the rule only makes it so). It touches nothing else, and it
does the same to the same first messages on every turn, so a continued conversation still extends
its own prefix. It is for local backends only (a cloud vendor's cache is the vendor's business, and
the prompt it receives should be what the client sent) and only when the profile asks for it.
"""

from __future__ import annotations

from typing import Any

from kvswitch.core.models import MESSAGES_PROTOCOL

REMINDER_PREFIX = "<system-reminder>"


def _is_reminder(block: Any) -> bool:
    return (
        isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
        and block["text"].lstrip().startswith(REMINDER_PREFIX)
    )


def stabilise(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with the shared context first (a new dict; ``body`` itself is left as it was).

    A body of another shape (no user message first, no system message after it) is returned as is.
    """
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return body
    first = messages[0]
    if not isinstance(first, dict) or first.get("role") != "user":
        return body
    end = 1
    while end < len(messages) and isinstance(messages[end], dict) and messages[end].get("role") == "system":
        end += 1
    content = first.get("content")
    if isinstance(content, list):
        reminders = [b for b in content if _is_reminder(b)]
        first = {**first, "content": reminders + [b for b in content if not _is_reminder(b)]}
    if end == 1 and first == messages[0]:
        return body
    return {**body, "messages": [*messages[1:end], first, *messages[end:]]}


def applies(*, stable_prefix: bool, local_backend: bool, client: str) -> bool:
    """Whether the gateway runs the stabiliser for a request: opt-in, local backends, Claude Code."""
    return stable_prefix and local_backend and client == MESSAGES_PROTOCOL
