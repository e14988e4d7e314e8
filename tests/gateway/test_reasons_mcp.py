"""MCP servers in a ``tools_changed`` reason (issue 36): Claude Code 2.1.332 names an MCP server's tools
``mcp__<server>__<tool>``, so the tools a request added or removed are grouped by server, and the Usage
tab's words name the server. The real client's case (a server enabled mid-session through the gateway to
a real llama-server) is tests/e2e/test_e2e_mcp_live.py."""

from __future__ import annotations

from kvswitch.gateway.truth.reasons import mcp_servers
from kvswitch.ui.control.reason_words import explanation


def test_tools_are_grouped_by_their_mcp_server() -> None:
    names: list[str | None] = ["Bash", "mcp__kvs-stdio__kvswitch_echo", "mcp__github__create_issue",
                               "mcp__github__list_issues", "ListMcpResourcesTool", None, "mcp__", "mcp____x"]
    assert mcp_servers(names) == {"kvs-stdio": 1, "github": 2}
    assert mcp_servers(["Read", "Write"]) == {}


def test_the_usage_words_name_the_servers() -> None:
    detail = {"looks_like": "tools_changed", "added": ["mcp__github__create_issue"], "removed": [],
              "mcp_servers": {"added": {"github": 1}, "removed": {"old-one": 3}}}
    words = dict(explanation("prefix_changed", detail))
    assert words["MCP servers enabled"] == "github (1 tools)"
    assert words["MCP servers disabled"] == "old-one (3 tools)"
    assert "MCP servers enabled" not in dict(explanation("prefix_changed", {"added": ["Bash"]}))
