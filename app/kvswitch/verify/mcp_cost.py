"""What an MCP server adds to every Claude Code request, measured with the real client and the server's
own numbers (issue 36).

The installed Claude Code runs headless, as a profile configures it, through the recorder to the
profile's backend (like a real-client verify), with one MCP configuration per run passed by
``--strict-mcp-config --mcp-config FILE`` so that nothing of the user's own files is read or changed:
no MCP server, then each server alone, then none again. The conversation request of each run carries
the server's own prompt token count; a server's cost is its run's count less the first run's. The
two runs without any server must agree: if they do not, something else in the request changed between
runs and no figure is given. ``WAIT_FOR_SERVERS`` makes ``-p`` wait for the servers to connect, as an
interactive session has them connected by the time the user types.
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from kvswitch import servers as server_kinds
from kvswitch.core.errors import KvSwitchError
from kvswitch.core.fsutil import atomic_write
from kvswitch.core.mcp import McpServer
from kvswitch.core.mcp_costs import McpCost, definition_fingerprint
from kvswitch.core.mcp_formats import to_client
from kvswitch.core.models import Profile, mask_url
from kvswitch.verify.capture import Capture
from kvswitch.verify.client_run import (
    SETTLE_S,
    ClientFailed,
    _check_turn,
    _run,
    _settle,
    client_version,
)
from kvswitch.verify.client_specs import ClaudeClient
from kvswitch.verify.recorder import Recorder

#: the run's words: the same in every run, so only the MCP servers differ between the requests
PROMPT = "Reply with one word: ready."
#: make ``-p`` wait for the MCP servers to connect before its first request: without it Claude Code
#: 2.1.332 sends that request saying they are "still connecting"; with only the first, a server whose
#: start took seconds on a loaded machine (Python importing the ``mcp`` SDK) was still left out
WAIT_FOR_SERVERS = {"MCP_CONNECTION_NONBLOCKING": "false",
                    "CLAUDE_CODE_MCP_STARTUP_WAIT_MS": "30000"}
#: runs of one configuration before giving up on an answer that carries the server's counts
ATTEMPTS = 3


class CostUnmeasured(KvSwitchError):
    """The runs could not give a figure (no counts in the answers, or the baseline moved)."""

    exit_code = 4


@dataclass(frozen=True)
class _Run:
    prompt_tokens: int
    tools: tuple[str, ...]


def _tool_names(capture: Capture, server: str) -> tuple[str, ...]:
    """The server's tools as the client sent them: full definitions in ``tools``, or (tool search on,
    Claude Code 2.1.332's default) their names listed in the deferred-tools text."""
    prefix = f"mcp__{server}__"
    body = capture.body if isinstance(capture.body, dict) else {}
    named = [t.get("name", "") for t in body.get("tools", []) if isinstance(t, dict)]
    found = [n for n in named if isinstance(n, str) and n.startswith(prefix)]
    text = json.dumps(body.get("messages", []), ensure_ascii=False) + json.dumps(body.get("system", ""))
    for word in text.replace("\\n", "\n").split():
        word = word.strip("\",.;:`'")
        if word.startswith(prefix) and word not in found:
            found.append(word)
    return tuple(found)


def _conversation(captures: list[Capture]) -> Capture | None:
    """The run's conversation request: the Messages request that offers tools (a side request, such as
    a title, offers none)."""
    for capture in captures:
        body = capture.body if isinstance(capture.body, dict) else {}
        if capture.method == "POST" and "/messages" in capture.path and body.get("tools"):
            return capture
    return None


def measure_claude(
    profile: Profile,
    binary: Path,
    mcp_servers: list[McpServer],
    *,
    timeout: float = 600.0,
    on_step: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
) -> list[McpCost]:
    """One cost per server in ``mcp_servers``, measured with Claude Code through ``profile``'s backend."""
    spec = ClaudeClient()
    step = on_step or (lambda _text: None)
    deadline = time.monotonic() + timeout
    version = client_version(binary, min(60.0, timeout), "claude")
    kind = server_kinds.find(profile.kind.value)
    measured_on = f"{kind.short_label if kind else profile.kind.value} at {mask_url(profile.base_url)}"
    with tempfile.TemporaryDirectory(prefix="kvswitch-mcp-cost-") as scratch:
        root = Path(scratch)
        captures: list[Capture] = []
        with Recorder(spec.upstream(profile), root / "captures", on_capture=captures.append) as recorder:
            layout = spec.layout(profile, recorder.url, root)
            env = {**layout.env, **WAIT_FOR_SERVERS}

            def run(label: str, chosen: list[McpServer]) -> _Run:
                config = root / f"mcp-{len(captures)}.json"
                entries = {s.name: to_client(s, "claude") for s in chosen}
                atomic_write(config, json.dumps({"mcpServers": entries}).encode(), secret=True)
                argv = [str(binary), "-p", PROMPT, "--max-turns", "1", "--strict-mcp-config",
                        "--mcp-config", str(config)]
                # the local server (b11434) sometimes streams an answer without counts: the run is repeated
                for _attempt in range(ATTEMPTS):
                    step(label)
                    seen = len(captures)
                    done = _run(argv, layout.cwd, env, deadline - time.monotonic(), cancel)
                    _settle(captures, seen, spec, SETTLE_S)
                    _check_turn(spec, profile, done, captures[seen:], 1, 1)
                    capture = _conversation(captures[seen:])
                    if capture is not None and capture.cache is not None and capture.cache.prompt is not None:
                        tools = _tool_names(capture, chosen[0].name) if chosen else ()
                        return _Run(capture.cache.prompt, tools)
                raise CostUnmeasured(
                    f"{measured_on} did not say how many prompt tokens the request of {label} had "
                    f"({ATTEMPTS} runs): a cost needs the server's own count")

            without = run("Claude Code without MCP servers", [])
            alone = {s.name: run(f"Claude Code with {s.name!r}", [s]) for s in mcp_servers}
            again = run("Claude Code without MCP servers, again", [])
    if again.prompt_tokens != without.prompt_tokens:
        raise CostUnmeasured(
            f"two runs without MCP servers had {without.prompt_tokens:,} and {again.prompt_tokens:,} prompt "
            "tokens: something else in Claude Code's request changed between runs, so no cost is given")
    now = datetime.now(UTC).isoformat(timespec="seconds")
    costs = []
    for server in mcp_servers:
        measured = alone[server.name]
        if not measured.tools:
            raise ClientFailed(
                f"Claude Code sent no tool of MCP server {server.name!r} (mcp__{server.name}__...): it "
                "did not connect to it, so its cost is not measured ('claude mcp list' says why)")
        costs.append(McpCost(server.name, "claude", measured.prompt_tokens - without.prompt_tokens,
                             measured.prompt_tokens, without.prompt_tokens, now, measured_on,
                             f"Claude Code {version}", definition_fingerprint(server), measured.tools))
    return costs
