"""Write KV Switch's MCP list into every client's file: planned, all or nothing, journaled, undoable.

The same transaction as a profile's apply (``targets.transaction``): under the apply lock, an apply a
crash interrupted is rolled back first, every file about to change is backed up, the journal written,
the files written one by one (put back if one fails), and ownership committed to the ledger with an
undo record, so ``kvswitch undo`` takes an MCP change back like a profile switch. The active profile is
left as it is.

Which files: every client some server is enabled in, plus every MCP section KV Switch wrote before (a
server disabled everywhere is removed from the files it was in).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from pathlib import Path

from kvswitch.core.errors import KvSwitchError
from kvswitch.core.ledger import LedgerState, TargetRecord
from kvswitch.core.lock import FileLock
from kvswitch.core.mcp import McpServer
from kvswitch.core.mcp_formats import SECTIONS, client_kind, servers_in
from kvswitch.core.paths import AppPaths
from kvswitch.targets.diff import mask_text, render_plan
from kvswitch.targets.engine import Engine
from kvswitch.targets.mcp_files import (
    TARGET_PREFIX,
    McpFileTarget,
    McpPlan,
    client_of,
    is_mcp_target,
    mcp_target,
)
from kvswitch.targets.outcome import ApplyResult
from kvswitch.targets.transaction import (
    recover_interrupted,
    run_transaction,
    stage_writes,
)

#: files larger than this show only their MCP section in a preview (a 50 MB ``~/.claude.json``)
FULL_DIFF_LIMIT = 1 << 20


class McpSync:
    """Plans and applies the MCP list; ``paths``/``env`` as for ``Engine``."""

    def __init__(self, paths: AppPaths, env: Mapping[str, str] | None = None, lock_timeout: float = 120.0):
        self.engine = Engine(paths, env, lock_timeout=lock_timeout)
        self.notes: list[str] = []

    @property
    def env(self) -> Mapping[str, str]:
        return self.engine.env

    def owned_names(self) -> dict[str, set[str]]:
        """Client spec -> names of the servers KV Switch wrote there (from the ledger)."""
        result: dict[str, set[str]] = {}
        for target_id, record in self.engine.state().targets.items():
            if is_mcp_target(target_id):
                client = client_of(target_id)
                head = SECTIONS[client_kind(client)] + "."
                result[client] = {k[len(head) :] for k in record.owned if k.startswith(head)}
        return result

    def _targets(self, servers: list[McpServer], state: LedgerState) -> list[McpFileTarget]:
        clients = list(dict.fromkeys(c for s in servers for c in s.clients))
        clients += [client_of(t) for t in state.targets if is_mcp_target(t) and client_of(t) not in clients]
        return [mcp_target(c, self.env, [s for s in servers if c in s.clients]) for c in clients]

    def plan(self, servers: list[McpServer], replace: frozenset[str] = frozenset()) -> list[McpPlan]:
        """Every file's plan (reads only). ``McpConflict`` for a hand-made server of a taken name."""
        state = self.engine.state()
        return [t.plan_servers(_owned(state, t), replace) for t in self._targets(servers, state)]

    def apply(self, servers: list[McpServer], replace: frozenset[str] = frozenset()) -> ApplyResult:
        """Write ``servers`` to every client file, all or nothing (see the module docstring)."""
        ledger = self.engine.ledger
        with FileLock(self.engine.paths.lock_file, timeout=self.engine.lock_timeout):
            state = ledger.load()
            if state.pending is not None:
                self.notes = recover_interrupted(ledger, state, self.env)
            targets = self._targets(servers, state)
            plans = [t.plan_servers(_owned(state, t), replace) for t in targets]
            ops, records = stage_writes(state, (
                (target, plan, TargetRecord(location=plan.location, owned=plan.owned))
                for target, plan in zip(targets, plans, strict=True)
            ))
            result = ApplyResult(
                "mcp",
                state.active,
                list(plans),
                warnings=[mask_text(w, p.secrets) for p in plans for w in p.warnings],
            )
            run_transaction(ledger, self.engine.backups, state, "mcp", state.active, ops, result, records)
            return result


def _owned(state: LedgerState, target: McpFileTarget) -> dict[str, str]:
    record = state.targets.get(target.target_id)
    return dict(record.owned) if record else {}


def render_mcp_plans(plans: list[McpPlan], show_secrets: bool = False) -> str:
    """Each changed file's diff, secrets masked; a big file shows only its MCP section."""
    out = []
    for plan in plans:
        if not plan.changed:
            continue
        if len(plan.before) + len(plan.after or "") <= FULL_DIFF_LIMIT:
            out.append(render_plan(plan, show_secrets))
            continue
        secrets = [] if show_secrets else plan.secrets
        before = mask_text(json.dumps(plan.section_before, indent=2, ensure_ascii=False), secrets)
        after = mask_text(json.dumps(plan.section_after, indent=2, ensure_ascii=False), secrets)
        size = len(plan.before) / (1 << 20)
        name = f"{plan.location} ({size:,.1f} MiB; only its MCP servers are shown)"
        diff = difflib.unified_diff(before.splitlines(True), after.splitlines(True), name, name)
        out.append("".join(line if line.endswith("\n") else line + "\n" for line in diff))
    return "".join(out)


def read_client(client: str, env: Mapping[str, str]) -> tuple[list[McpServer], list[str]]:
    """The servers one client's file holds now, marked enabled in that client (OpenCode's
    ``"enabled": false`` ones are brought in disabled); unreadable entries come back as problems."""
    target = mcp_target(client, env)
    _, _, doc = target.load(target.read_raw())
    entries = doc.entries()  # type: ignore[attr-defined]
    plain = {str(k): (v.unwrap() if hasattr(v, "unwrap") else v) for k, v in entries.items()}
    found, problems = servers_in(plain, client_kind(client), target.location())
    marked = []
    for server in found:
        off = client_kind(client) == "opencode" and plain.get(server.name, {}).get("enabled") is False
        marked.append(server if off else server.with_clients([client]))
    return marked, problems


def client_locations(env: Mapping[str, str], clients: list[str]) -> dict[str, Path]:
    return {c: Path(mcp_target(c, env).location()) for c in clients}


__all__ = ["TARGET_PREFIX", "KvSwitchError", "McpSync", "read_client", "render_mcp_plans"]
