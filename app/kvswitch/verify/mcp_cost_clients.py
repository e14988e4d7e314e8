"""What differs between the clients when an MCP server's cost is measured: one small description each.

The measurement itself (``verify.mcp_cost``) is the same for every client: a run without MCP servers,
one with each server alone, one without again, each counted by the server's own prompt tokens. What a
client needs is here: how the run's MCP servers reach it (only ever through the run's own temporary
files: Claude Code's ``--strict-mcp-config --mcp-config FILE``; Codex's ``$CODEX_HOME/config.toml`` and
OpenCode's ``opencode.json`` of the run's throw-away home, written by the same MCP writers as
``kvswitch mcp enable``), and how the request names a server's tools, so that a figure is given only
when the tools were really sent:

- Claude Code 2.1.332: ``mcp__NAME__tool``, in ``tools`` or (tool search on, its default) listed by name
  in the deferred-tools text of the messages.
- Codex 0.169.0 / 0.171.0: one ``namespace`` tool ``mcp__NAME`` (the name's characters other than
  letters, digits and ``_`` become ``_``) holding the server's tools; shown as ``mcp__NAME__tool``.
- OpenCode 1.18.33: ``NAME_tool`` function tools (characters other than letters, digits, ``_`` and
  ``-`` become ``_``).

Codex and OpenCode also add their MCP resource tools (``list_mcp_resources``…) once any server is
configured: those are part of what enabling a server costs and are counted, but only names new in the
run and under the server's own prefix prove that the client connected to it.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import tomlkit

from kvswitch.core.fsutil import atomic_write
from kvswitch.core.mcp import McpServer
from kvswitch.core.mcp_formats import to_client
from kvswitch.core.strictparse import loads as strict_json
from kvswitch.targets.mcp_files import mcp_target
from kvswitch.verify.capture import Capture
from kvswitch.verify.client_specs import ClaudeClient, ClientSpec, CodexClient, OpenCodeClient, RunLayout

#: the run's words: the same in every run, so only the MCP servers differ between the requests
PROMPT = "Reply with one word: ready."
#: make Claude Code's ``-p`` wait for the MCP servers to connect before its first request: without it
#: Claude Code 2.1.332 sends that request saying they are "still connecting"; with only the first, a
#: server whose start took seconds on a loaded machine (Python importing the ``mcp`` SDK) was left out
WAIT_FOR_SERVERS = {"MCP_CONNECTION_NONBLOCKING": "false",
                    "CLAUDE_CODE_MCP_STARTUP_WAIT_MS": "30000"}
#: the same wait for Codex (``startup_timeout_sec``) and OpenCode (``timeout``, ms), in the run's file
STARTUP_WAIT_S = 30


def offered(body: Any) -> list[str]:
    """Every tool name a request offers: Messages/Responses ``name``, Chat Completions
    ``function.name``, and a Responses ``namespace`` tool's members as ``NAMESPACE__tool``."""
    names: list[str] = []
    tools = body.get("tools") if isinstance(body, dict) else None
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        function = tool.get("function")
        name = function.get("name") if isinstance(function, dict) else tool.get("name")
        if tool.get("type") == "namespace" and isinstance(tool.get("tools"), list):
            names.extend(f"{name}__{inner.get('name')}" for inner in tool["tools"]
                         if isinstance(inner, dict) and isinstance(inner.get("name"), str))
        elif isinstance(name, str):
            names.append(name)
    return names


class McpCostClient:
    """One client's part of a cost run: subclasses say how the servers are given and named."""

    spec: ClientSpec
    #: added to the run's environment
    env: dict[str, str] = {}
    #: how a user sees whether the client connects to a server, for the error that says it did not
    check = ""

    def argv(self, binary: Path, layout: RunLayout, root: Path, chosen: list[McpServer]) -> list[str]:
        """Give ``chosen`` (maybe none) to the run's client, in the run's own files only; its command line."""
        raise NotImplementedError

    def prefix(self, server: str) -> str:
        """How the names of ``server``'s tools begin in this client's requests."""
        raise NotImplementedError

    def tool_names(self, body: Any) -> list[str]:
        return offered(body)

    def server_tools(self, body: Any, baseline: Any, server: str) -> tuple[str, ...]:
        """The server's tools as the client sent them: under its prefix and not offered without it."""
        before = set(self.tool_names(baseline))
        start = self.prefix(server)
        names = self.tool_names(body)
        return tuple(dict.fromkeys(n for n in names if n.startswith(start) and n not in before))


class _InClientFile(McpCostClient):
    """A client whose MCP servers live in its own config file: the run's copy is written by the MCP
    writer ``kvswitch mcp enable`` uses, each run starting again from the file as the layout made it."""

    def argv(self, binary: Path, layout: RunLayout, root: Path, chosen: list[McpServer]) -> list[str]:
        target = mcp_target(self.spec.name, layout.env, chosen)
        kept = root / f"{self.spec.name}-config-as-laid-out"
        if not kept.exists():
            shutil.copyfile(target.path, kept)
        shutil.copyfile(kept, target.path)
        if chosen:
            target.apply(target.plan_servers({}))
            text = self.wait_longer(target.path.read_text(encoding="utf-8"), chosen)
            atomic_write(target.path, text.encode(), secret=True)
        return self.spec.argv(binary, 1, 1, PROMPT)

    def wait_longer(self, text: str, chosen: list[McpServer]) -> str:
        """The run's config with a longer wait for the servers to start than the client's default, as
        Claude Code's is (``WAIT_FOR_SERVERS``): on a loaded machine Python importing the ``mcp`` SDK can
        take most of a default's seconds. The wait is the run's only, never written to the user's file."""
        raise NotImplementedError


class ClaudeMcpCost(McpCostClient):
    spec = ClaudeClient()
    env = WAIT_FOR_SERVERS
    check = "'claude mcp list' says why"

    def argv(self, binary: Path, layout: RunLayout, root: Path, chosen: list[McpServer]) -> list[str]:
        config = root / "mcp.json"
        entries = {s.name: to_client(s, "claude") for s in chosen}
        atomic_write(config, json.dumps({"mcpServers": entries}).encode(), secret=True)
        return [*self.spec.argv(binary, 1, 1, PROMPT), "--strict-mcp-config", "--mcp-config", str(config)]

    def prefix(self, server: str) -> str:
        return f"mcp__{server}__"

    def tool_names(self, body: Any) -> list[str]:
        """With tool search on, the deferred tools are listed by name in the messages' text."""
        names = offered(body)
        if not isinstance(body, dict):
            return names
        text = json.dumps(body.get("messages", []), ensure_ascii=False) + json.dumps(body.get("system", ""))
        for word in text.replace("\\n", "\n").split():
            word = word.strip("\",.;:`'")
            if word.startswith("mcp__") and word not in names:
                names.append(word)
        return names


class CodexMcpCost(_InClientFile):
    spec = CodexClient()
    # Codex 0.169.0's exec printed nothing about a server that exited at once: its own command shows why
    check = ("'codex mcp list' shows what Codex would start; run the server's command yourself to see why "
             "it does not start")

    def prefix(self, server: str) -> str:
        return f"mcp__{re.sub(r'[^A-Za-z0-9_]', '_', server)}__"

    def wait_longer(self, text: str, chosen: list[McpServer]) -> str:
        doc = tomlkit.parse(text)  # Codex's default start-up wait is 10 s a server
        for server in chosen:
            doc["mcp_servers"][server.name]["startup_timeout_sec"] = STARTUP_WAIT_S
        return tomlkit.dumps(doc)


class OpenCodeMcpCost(_InClientFile):
    spec = OpenCodeClient()
    check = "'opencode mcp list' says why"

    def prefix(self, server: str) -> str:
        return re.sub(r"[^A-Za-z0-9_-]", "_", server) + "_"

    def wait_longer(self, text: str, chosen: list[McpServer]) -> str:
        data = strict_json(text)  # the run's file, written as plain JSON by the writers
        for server in chosen:
            data["mcp"][server.name]["timeout"] = STARTUP_WAIT_S * 1000
        return json.dumps(data, indent=2)


MCP_COST_CLIENTS: dict[str, McpCostClient] = {
    way.spec.name: way for way in (ClaudeMcpCost(), CodexMcpCost(), OpenCodeMcpCost())
}


def conversation(spec: ClientSpec, captures: list[Capture]) -> Capture | None:
    """The run's conversation request: the client's turn request that offers tools (a side request, such
    as a session title, offers none)."""
    for capture in captures:
        body = capture.body if isinstance(capture.body, dict) else {}
        if spec.is_turn_request(capture) and body.get("tools"):
            return capture
    return None
