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

It also puts the MCP servers' tool definitions (``mcp__<server>__<tool>``) in name order, each in one
of the places MCP tools held: a server that lists its tools in another order on each start (some build
the list from a dict or a directory) otherwise changes the tool list between two starts of the client,
and with it everything after (issue 36; the fix proxies such as claude-code-cache-fix make). The client's
own tools keep their order and places.
"""

from __future__ import annotations

from typing import Any

from kvswitch.core.models import MESSAGES_PROTOCOL

REMINDER_PREFIX = "<system-reminder>"
#: how Claude Code 2.1.332 names an MCP server's tools
MCP_PREFIX = "mcp__"


def _is_reminder(block: Any) -> bool:
    return (
        isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
        and block["text"].lstrip().startswith(REMINDER_PREFIX)
    )


def _is_mcp_tool(tool: Any) -> bool:
    name = tool.get("name") if isinstance(tool, dict) else None
    return isinstance(name, str) and name.startswith(MCP_PREFIX)


def sort_mcp_tools(tools: Any) -> Any:
    """``tools`` with the MCP tools in name order in the places MCP tools held (a new list), or
    ``tools`` itself when there is nothing to reorder."""
    if not isinstance(tools, list):
        return tools
    places = [index for index, tool in enumerate(tools) if _is_mcp_tool(tool)]
    ordered = sorted((tools[index] for index in places), key=lambda tool: tool["name"])
    if [tools[index] for index in places] == ordered:
        return tools
    result = list(tools)
    for index, tool in zip(places, ordered, strict=True):
        result[index] = tool
    return result


def stabilise(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with the shared context first and the MCP tools in name order (a new dict; ``body``
    itself is left as it was).

    A body of another shape (no user message first, no system message after it) keeps its messages.
    """
    tools = sort_mcp_tools(body.get("tools"))
    if tools is not body.get("tools"):
        body = {**body, "tools": tools}
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
