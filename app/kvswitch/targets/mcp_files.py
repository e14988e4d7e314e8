"""Writers of MCP servers, one per client file kind, on the same plan/apply/restore contract as profiles.

Target ids are ``mcp-`` + the client spec (``mcp-claude``, ``mcp-claude-project:DIR``, ``mcp-codex``,
``mcp-opencode``): the ledger records what each wrote, ``kvswitch undo`` puts it back, and a profile's
own ids (``claude``, ``codex``…) never clean these up. Each server is owned as one key (``mcp_docs``),
so only servers KV Switch wrote are changed or removed; a server of the same name the user made by
hand is refused unless the caller lets KV Switch take it over (``replace``), and one that already is
exactly what KV Switch would write is adopted as it is.

``~/.claude.json`` is Claude Code's own state file, rewritten by every running Claude Code (start-up
counters, per-project history) and big (tens of MB for heavy users). Its writer reads it with a larger
cap, parses without the duplicate-key hook, rewrites only the ``mcpServers`` member (every other byte is
copied), and right before writing re-reads the file: when Claude Code changed it since the plan, the
planned server changes are replayed onto what is there now, so none of Claude Code's keys is lost.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kvswitch.core.errors import ConfigParseError, FileAccessError, UsageError
from kvswitch.core.fsutil import atomic_delete, atomic_write, read_bytes
from kvswitch.core.ledger import digest_bytes
from kvswitch.core.mcp import PROJECT_PREFIX, McpServer
from kvswitch.core.mcp_formats import SECTIONS, client_kind, from_client, to_client
from kvswitch.core.models import Profile
from kvswitch.core.paths import claude_config_dir, codex_home, home_dir, opencode_config_dir
from kvswitch.core.strictparse import loads_json
from kvswitch.targets.base import Plan
from kvswitch.targets.claude import canonical_json, parse_json_object, render_json
from kvswitch.targets.codex import CodexConfigTarget
from kvswitch.targets.filetarget import StructuredFileTarget
from kvswitch.targets.jsonc import parse_jsonc_object
from kvswitch.targets.keyed import MISSING, PRIOR, KeyedDocument, KeyPlan, TextCodec, plan_keys
from kvswitch.targets.mcp_docs import McpJsonDocument, McpTomlDocument, section_secrets
from kvswitch.targets.mcp_splice import replace_member
from kvswitch.targets.opencode import OpenCodeTarget, config_file

TARGET_PREFIX = "mcp-"
#: the largest ``~/.claude.json`` read (Claude Code keeps every project's history in it)
MAX_CLAUDE_STATE_BYTES = 512 << 20
#: how often the write of ``~/.claude.json`` is retried while Claude Code keeps rewriting it
WRITE_ATTEMPTS = 8


class McpConflict(UsageError):
    """A client file holds a server of the same name the user made, different from KV Switch's."""


@dataclass
class McpPlan(Plan):
    """A plan plus the server changes it makes (name -> entry, ``None`` = removed)."""

    touched: dict[str, Any] = field(default_factory=dict)
    section_before: dict[str, Any] = field(default_factory=dict)
    section_after: dict[str, Any] = field(default_factory=dict)
    #: the plan removes the whole section (KV Switch created it and nothing else is left in it)
    dropped: bool = False


class McpFileTarget(StructuredFileTarget):
    """The MCP section of one client file. ``wanted``: the servers to have there (``None`` = unknown,
    for the ledger's read-only uses: such a target is only snapshotted, restored or reverted)."""

    kind = "claude"

    def __init__(self, path: Path, target_id: str, wanted: list[McpServer] | None = None):
        super().__init__(path, target_id)
        self.wanted = wanted

    @property
    def section(self) -> str:
        return SECTIONS[self.kind]

    def desired(self, profile: Profile) -> dict[str, str]:
        return self.wanted_keys()

    def wanted_keys(self) -> dict[str, str]:
        return {
            f"{self.section}.{s.name}": canonical_json(to_client(s, self.kind)) for s in self.wanted or []
        }

    def plan(self, profile: Profile | None, owned: dict[str, str]) -> McpPlan:
        return self.plan_servers(owned)

    def plan_servers(self, owned: dict[str, str], replace: frozenset[str] = frozenset()) -> McpPlan:
        """Plan the section to hold exactly ``wanted`` of what KV Switch owns (see the module docstring)."""
        raw = self.read_raw()
        codec, text, loaded = self.load(raw)
        doc = _section_doc(loaded)
        desired = self.wanted_keys()
        adopted, conflicts = [], []
        for key, value in desired.items():
            current = doc.get(key)
            if key in owned or current is MISSING:
                continue
            name = key[len(self.section) + 1 :]
            if current == value or self._same_server(name, current, value):
                adopted.append(key)
            elif name not in replace:
                conflicts.append(name)
        if conflicts:
            raise McpConflict(
                f"{self.path} already has MCP server(s) {', '.join(map(repr, conflicts))} made outside KV "
                "Switch, different from KV Switch's; import them ('kvswitch mcp import "
                f"{self.target_id[len(TARGET_PREFIX) :]}') or let KV Switch replace them (--replace NAME)"
            )
        before = _plain(doc.entries())
        result = plan_keys(doc, desired, owned, file_existed=raw is not None)
        for key in adopted:
            result.owned.pop(PRIOR + key, None)
        return self._finish(raw, codec, text, doc, result, before)

    def _same_server(self, name: str, current: str, value: str) -> bool:
        try:
            mine = from_client(name, json.loads(value), self.kind)
            theirs = from_client(name, json.loads(current), self.kind)
        except (UsageError, ValueError):
            return False
        return mine == theirs

    def _finish(
        self,
        raw: bytes | None,
        codec: TextCodec,
        text: str,
        doc: KeyedDocument,
        result: KeyPlan,
        before: dict[str, Any] | None = None,
    ) -> McpPlan:
        base = super()._finish(raw, codec, text, doc, result)
        touched = dict(getattr(doc, "touched", {}))
        after = _plain(getattr(doc, "entries", dict)())
        plan = McpPlan(
            **{f: getattr(base, f) for f in Plan.__dataclass_fields__},
            touched=touched,
            section_before=before if before is not None else {},
            section_after=after,
            dropped=bool(getattr(doc, "dropped", False)),
        )
        plan.changes = [
            f"{'remove' if entry is None else 'write'} MCP server {name!r}" for name, entry in touched.items()
        ] + [c for c in base.changes if not c.startswith(("set ", "change ", "remove " + self.section + "."))]
        plan.secrets = list(dict.fromkeys([*section_secrets(plan.section_before), *section_secrets(after)]))
        return plan

    def keeps_secret(self, plan: Plan) -> bool:
        """Env and header values are secrets: such a file is kept 0600 like any file holding a key."""
        return bool(plan.secrets)


def _section_doc(doc: KeyedDocument) -> McpJsonDocument | McpTomlDocument:
    if not isinstance(doc, McpJsonDocument | McpTomlDocument):
        raise TypeError(f"not an MCP section document: {type(doc).__name__}")
    return doc


def _plain(entries: Any) -> dict[str, Any]:
    return json.loads(canonical_json(entries.unwrap() if hasattr(entries, "unwrap") else dict(entries)))


class ClaudeProjectMcpTarget(McpFileTarget):
    """``<project>/.mcp.json``: Claude Code's project scope (a plain JSON object, ``mcpServers``)."""

    def parse(self, text: str) -> McpJsonDocument:
        return McpJsonDocument(parse_json_object(self.path, text), self.path, self.section)

    def render(self, doc: Any, original: str) -> str:
        return render_json(doc.data, original)


class ClaudeUserMcpTarget(ClaudeProjectMcpTarget):
    """``~/.claude.json`` ``mcpServers`` (see the module docstring for why it is written differently)."""

    def read_raw(self) -> bytes | None:
        return read_bytes(self.path, limit=MAX_CLAUDE_STATE_BYTES)

    def parse(self, text: str) -> McpJsonDocument:
        if not text.strip():
            return McpJsonDocument({}, self.path, self.section)
        try:  # Claude Code's JSON.parse keeps the last of two equal keys; so does json.loads
            data = json.loads(text, parse_constant=_refuse_constant)
        except json.JSONDecodeError as exc:
            raise ConfigParseError(self.path, f"not valid JSON: {exc.msg}", exc.lineno, exc.colno) from None
        except (RecursionError, ValueError):
            # too deep, NaN, a huge number: the strict reader (slow on tens of MB: it walks every
            # string in Python) runs only now, to say where
            data = loads_json(self.path, text, max_bytes=MAX_CLAUDE_STATE_BYTES)
        if not isinstance(data, dict):
            raise ConfigParseError(
                self.path, f"expected a JSON object at the top level, found {type(data).__name__}"
            )
        return McpJsonDocument(data, self.path, self.section)

    def render(self, doc: Any, original: str) -> str:
        value = doc.data.get(self.section, MISSING)
        return replace_member(original, self.section, value, self.path)

    def apply(self, plan: Plan) -> None:
        if not plan.changed:
            return
        for _ in range(WRITE_ATTEMPTS):
            seen = _signature(self.path)
            raw = self.read_raw()
            if digest_bytes(raw) == plan.source_digest:
                data = None if plan.after is None else plan.after.encode("utf-8")
            else:
                data = self._replayed(raw, plan)
            if _signature(self.path) != seen:
                continue  # rewritten while read: read again
            if data is None:
                atomic_delete(self.path)
            else:
                atomic_write(self.path, data, secret=self.keeps_secret(plan))
            return
        raise FileAccessError(
            self.path,
            "kept changing while KV Switch tried to write it (is Claude Code "
            "rewriting it in a loop?); nothing was written there, try again",
        )

    def _replayed(self, raw: bytes | None, plan: Plan) -> bytes | None:
        """The planned server changes applied onto the file as it is now (another program rewrote it)."""
        codec, text, loaded = self.load(raw)
        doc = loaded if isinstance(loaded, McpJsonDocument) else McpJsonDocument({}, self.path, self.section)
        for name, entry in getattr(plan, "touched", {}).items():
            key = f"{self.section}.{name}"
            if entry is None:
                doc.delete(key)
            else:
                doc.set(key, entry)
        if getattr(plan, "dropped", False) and self.section in doc.data and not doc.entries():
            doc.delete(self.section)
        if raw is not None and not doc.data and plan.after is None:
            return None
        return codec.encode_text(self.render(doc, text)).encode("utf-8")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)


class CodexMcpTarget(McpFileTarget):
    """``$CODEX_HOME/config.toml`` ``[mcp_servers.NAME]`` tables (tomlkit: comments and order kept)."""

    kind = "codex"

    def parse(self, text: str) -> McpTomlDocument:
        return McpTomlDocument(CodexConfigTarget(self.path, "codex").parse(text).doc, self.path)

    def render(self, doc: Any, original: str) -> str:
        return CodexConfigTarget(self.path, "codex").render(doc, original)


class OpenCodeMcpTarget(McpFileTarget):
    """``opencode.json`` (or ``opencode.jsonc``) ``mcp``: JSONC kept, comments included."""

    kind = "opencode"

    def parse(self, text: str) -> McpJsonDocument:
        return McpJsonDocument(parse_jsonc_object(self.path, text), self.path, self.section)

    def render(self, doc: Any, original: str) -> str:
        return OpenCodeTarget(self.path, "opencode").render(doc, original)


def claude_state_file(env: Mapping[str, str]) -> Path:
    """Claude Code's ``.claude.json``: in ``$CLAUDE_CONFIG_DIR`` when set, else in the home directory."""
    if env.get("CLAUDE_CONFIG_DIR"):
        return claude_config_dir(env) / ".claude.json"
    return home_dir(env) / ".claude.json"


def mcp_target(client: str, env: Mapping[str, str], wanted: list[McpServer] | None = None) -> McpFileTarget:
    """The writer of one client spec (``claude``, ``claude-project:DIR``, ``codex``, ``opencode``)."""
    target_id = TARGET_PREFIX + client
    if client == "claude":
        return ClaudeUserMcpTarget(claude_state_file(env), target_id, wanted)
    if client.startswith(PROJECT_PREFIX):
        return ClaudeProjectMcpTarget(Path(client[len(PROJECT_PREFIX) :]) / ".mcp.json", target_id, wanted)
    if client == "codex":
        return CodexMcpTarget(codex_home(env) / "config.toml", target_id, wanted)
    if client == "opencode":
        return OpenCodeMcpTarget(config_file(opencode_config_dir(env)), target_id, wanted)
    raise UsageError(f"unknown MCP client {client!r}")


def is_mcp_target(target_id: str) -> bool:
    return target_id.startswith(TARGET_PREFIX)


def client_of(target_id: str) -> str:
    return target_id[len(TARGET_PREFIX) :]


__all__ = ["McpConflict", "McpFileTarget", "McpPlan", "client_kind", "claude_state_file", "mcp_target"]
