"""What an MCP server adds to every request of a client, measured with the real client and the server's
own numbers (issue 36): Claude Code, Codex and OpenCode.

The installed client runs headless, as a profile configures it, through the recorder to the profile's
backend (like a real-client verify), with the run's MCP servers given only through the run's own
temporary files (``verify.mcp_cost_clients``), so that nothing of the user's own files is read or
changed: no MCP server, then each server alone, then none again. The conversation request of each run
carries the server's own prompt token count; a server's cost is its run's count less the first run's.
The request of a server's run must carry that server's tools (by their names in the client's own
naming): when it does not, the client did not connect to the server and no figure is given. The two
runs without any server must agree: if they do not, something else in the request changed between runs
and no figure is given.
"""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kvswitch import servers as server_kinds
from kvswitch.core.errors import KvSwitchError
from kvswitch.core.mcp import McpServer
from kvswitch.core.mcp_costs import McpCost, definition_fingerprint
from kvswitch.core.mcp_formats import to_client
from kvswitch.core.models import Profile, mask_url
from kvswitch.verify.capture import Capture
from kvswitch.verify.client_run import (
    SETTLE_S,
    ClientFailed,
    _check_turn,
    _clean,
    _run,
    _settle,
    client_version,
)
from kvswitch.verify.mcp_cost_clients import MCP_COST_CLIENTS, PROMPT, WAIT_FOR_SERVERS, conversation
from kvswitch.verify.recorder import Recorder

__all__ = ["ATTEMPTS", "PROMPT", "WAIT_FOR_SERVERS", "CostUnmeasured", "measure"]

#: runs of one configuration before giving up on an answer that carries the server's counts
ATTEMPTS = 3
#: the most of the client's own lines about a server that did not connect quoted in the error
QUOTED_LINES = 3


class CostUnmeasured(KvSwitchError):
    """The runs could not give a figure (no counts in the answers, or the baseline moved)."""

    exit_code = 4


@dataclass(frozen=True)
class _Run:
    prompt_tokens: int
    body: Any
    #: what the client printed (keys masked), to quote when it did not connect to a server
    output: str
    #: the chosen server's tools the request carried (a run with one server chosen)
    tools: tuple[str, ...] = ()


def _said_about(output: str, name: str) -> str:
    """The client's own lines naming the server (why it did not start, in its words), if any."""
    lines = [line.strip() for line in output.splitlines() if name in line and line.strip()]
    return f"; it said: {' | '.join(lines[:QUOTED_LINES])}" if lines else ""


def measure(
    profile: Profile,
    binary: Path,
    mcp_servers: list[McpServer],
    *,
    client: str = "claude",
    timeout: float = 600.0,
    on_step: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
) -> list[McpCost]:
    """One cost per server in ``mcp_servers``, measured with ``client`` through ``profile``'s backend."""
    way = MCP_COST_CLIENTS[client]
    spec = way.spec
    for server in mcp_servers:
        to_client(server, spec.name)  # what the client cannot be given (SSE for Codex) is refused first
    step = on_step or (lambda _text: None)
    deadline = time.monotonic() + timeout
    version = client_version(binary, min(60.0, timeout), spec.name)
    kind = server_kinds.find(profile.kind.value)
    measured_on = f"{kind.short_label if kind else profile.kind.value} at {mask_url(profile.base_url)}"
    with tempfile.TemporaryDirectory(prefix="kvswitch-mcp-cost-") as scratch:
        root = Path(scratch)
        captures: list[Capture] = []
        with Recorder(spec.upstream(profile), root / "captures", on_capture=captures.append) as recorder:
            layout = spec.layout(profile, recorder.url, root)
            env = {**layout.env, **way.env}

            def run(label: str, chosen: list[McpServer], baseline: Any = None) -> _Run:
                """One configuration's run; with ``baseline`` (the run without servers' body), a run whose
                request lacks the chosen server's tools is repeated too: the client may have sent its
                request before the server connected (Codex 0.171.0 did, once in a CI run)."""
                argv = way.argv(binary, layout, root, chosen)
                unconnected: _Run | None = None
                # the local server (b11434) sometimes streams an answer without counts: the run is repeated
                for _attempt in range(ATTEMPTS):
                    step(label)
                    seen = len(captures)
                    done = _run(argv, layout.cwd, env, deadline - time.monotonic(), cancel)
                    _settle(captures, seen, spec, SETTLE_S)
                    _check_turn(spec, profile, done, captures[seen:], 1, 1)
                    capture = conversation(spec, captures[seen:])
                    if capture is not None and capture.cache is not None and capture.cache.prompt is not None:
                        output = _clean(done.stdout + done.stderr, [profile.key], None)
                        tools = (way.server_tools(capture.body, baseline, chosen[0].name)
                                 if baseline is not None else ())
                        got = _Run(capture.cache.prompt, capture.body, output, tools)
                        if baseline is None or tools:
                            return got
                        unconnected = got
                if unconnected is not None:
                    return unconnected  # said below: the client never connected to it
                raise CostUnmeasured(
                    f"{measured_on} did not say how many prompt tokens the request of {label} had "
                    f"({ATTEMPTS} runs): a cost needs the server's own count")

            without = run(f"{spec.label} without MCP servers", [])
            alone: dict[str, _Run] = {}
            for server in mcp_servers:
                measured = run(f"{spec.label} with {server.name!r}", [server], without.body)
                if not measured.tools:
                    raise ClientFailed(
                        f"{spec.label} sent no tool of MCP server {server.name!r} "
                        f"({way.prefix(server.name)}...): it did not connect to it, so its cost is not "
                        f"measured ({way.check}){_said_about(measured.output, server.name)}")
                alone[server.name] = measured
            again = run(f"{spec.label} without MCP servers, again", [])
    if again.prompt_tokens != without.prompt_tokens:
        raise CostUnmeasured(
            f"two runs without MCP servers had {without.prompt_tokens:,} and {again.prompt_tokens:,} prompt "
            f"tokens: something else in {spec.label}'s request changed between runs, so no cost is given")
    now = datetime.now(UTC).isoformat(timespec="seconds")
    costs = []
    for server in mcp_servers:
        measured = alone[server.name]
        costs.append(McpCost(server.name, spec.name, measured.prompt_tokens - without.prompt_tokens,
                             measured.prompt_tokens, without.prompt_tokens, now, measured_on,
                             f"{spec.label} {version}", definition_fingerprint(server), measured.tools))
    return costs

