"""Skills: folders holding a ``SKILL.md`` whose frontmatter names and describes them.

Where each client looks (measured by running each with skill folders in place against a recording
loopback server and reading its request; docs/prompts-and-skills.md):

- Claude Code 2.1.332: ``$CLAUDE_CONFIG_DIR/skills`` (``~/.claude/skills``);
- Codex 0.171.0: ``$CODEX_HOME/skills`` and the shared ``~/.agents/skills``;
- OpenCode 1.18.33: ``~/.config/opencode/skills`` (and ``skill``), ``~/.agents/skills`` and
  ``~/.claude/skills``.

KV Switch keeps its own copy of each skill it installed (``<data>/skills/NAME``) and enables it for a
client by a symlink (or a copy) in that client's own folder. ``skills.json`` records where each came
from (to update it) and, per client, how it was enabled and, for a copy, the digest of what was copied
(so a copy edited by hand is never replaced or deleted silently).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kvswitch.core.errors import ConfigParseError, UsageError
from kvswitch.core.fsutil import atomic_write, read_bytes
from kvswitch.core.lock import FileLock
from kvswitch.core.paths import AppPaths, claude_config_dir, codex_home, home_dir, opencode_config_dir
from kvswitch.core.prompts import check_entry_name
from kvswitch.core.strictparse import loads as strict_json

SKILL_FILE = "SKILL.md"
SKILL_CLIENTS = ("claude", "codex", "opencode")
#: the most a SKILL.md may hold (real ones are a few kB; Codex's own guide says under 500 lines)
MAX_SKILL_MD_BYTES = 256 * 1024
_FRONTMATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)


class SkillError(UsageError):
    """A skill cannot be read, installed or enabled as asked; nothing was changed."""


@dataclass(frozen=True)
class SkillInfo:
    """What a SKILL.md's frontmatter says (the two fields every client reads)."""

    name: str
    description: str

    def listing_line(self) -> str:
        """The line Claude Code 2.1.332 adds to every request's skill list for this skill."""
        return f"- {self.name}: {self.description}"


def client_skill_dir(client: str, env: Mapping[str, str]) -> Path:
    """The client's own user skills folder, where KV Switch enables a skill for it."""
    if client == "claude":
        return claude_config_dir(env) / "skills"
    if client == "codex":
        return codex_home(env) / "skills"
    if client == "opencode":
        return opencode_config_dir(env) / "skills"
    raise SkillError(f"no skills folder is known for {client!r} (clients: {', '.join(SKILL_CLIENTS)})")


def readers_of(env: Mapping[str, str]) -> dict[Path, tuple[str, ...]]:
    """Every user skills folder a measured client reads -> the clients that read it."""
    shared = home_dir(env) / ".agents" / "skills"
    return {
        client_skill_dir("claude", env): ("claude", "opencode"),
        client_skill_dir("codex", env): ("codex",),
        client_skill_dir("opencode", env): ("opencode",),
        opencode_config_dir(env) / "skill": ("opencode",),
        shared: ("codex", "opencode"),
    }


def parse_skill_md(text: str, where: Path | str) -> SkillInfo:
    """The ``name`` and ``description`` of a SKILL.md; a clear error when either is missing."""
    found = _FRONTMATTER.match(text)
    if found is None:
        raise SkillError(f"{where}: no frontmatter: a SKILL.md starts with '---', 'name: ...', "
                         "'description: ...', '---'")
    fields = _simple_yaml(found.group(1))
    name, description = fields.get("name", "").strip(), " ".join(fields.get("description", "").split())
    if not name:
        raise SkillError(f"{where}: the frontmatter has no 'name'")
    if not description:
        raise SkillError(f"{where}: the frontmatter has no 'description' (clients skip such a skill)")
    try:
        check_entry_name(name, "skill")
    except UsageError as exc:
        raise SkillError(f"{where}: {exc}") from None
    return SkillInfo(name, description)


def _simple_yaml(block: str) -> dict[str, str]:
    """Top-level ``key: value`` pairs, with quoted values, ``|``/``>`` blocks and indented continuations."""
    fields: dict[str, str] = {}
    key: str | None = None
    for line in block.splitlines():
        match = re.match(r"^([A-Za-z_][\w-]*)[ \t]*:[ \t]*(.*)$", line)
        if match and not line[:1].isspace():
            key, value = match.group(1), match.group(2).strip()
            if value in ("|", ">", "|-", ">-"):
                value = ""
            elif len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            fields[key] = value
        elif key is not None and line[:1].isspace():
            fields[key] = (fields[key] + " " + line.strip()).strip()
    return fields


def read_skill_dir(folder: Path) -> SkillInfo:
    """The SkillInfo of ``folder``'s SKILL.md (bounded read; refuses non-files)."""
    path = folder / SKILL_FILE
    raw = read_bytes(path, limit=MAX_SKILL_MD_BYTES)
    if raw is None:
        raise SkillError(f"{folder}: no {SKILL_FILE} in it, so it is not a skill")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillError(f"{path}: not UTF-8 text") from None
    return parse_skill_md(text, path)


def tree_digest(folder: Path) -> str:
    """A digest of every regular file's relative path and bytes (symlinks by their target text)."""
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(folder, followlinks=False):
        dirs.sort()
        for name in sorted(files + [d for d in dirs if os.path.islink(os.path.join(root, d))]):
            path = os.path.join(root, name)
            digest.update(os.path.relpath(path, folder).encode("utf-8", "surrogateescape") + b"\0")
            if os.path.islink(path):
                digest.update(b"link:" + os.readlink(path).encode("utf-8", "surrogateescape"))
            else:
                with open(path, "rb") as handle:
                    for chunk in iter(lambda: handle.read(1 << 16), b""):
                        digest.update(chunk)
            digest.update(b"\0")
    return "sha256:" + digest.hexdigest()


@dataclass
class Enabled:
    """How a skill is enabled for one client: ``link`` or ``copy`` (with the copied tree's digest)."""

    how: str
    path: str
    digest: str = ""


@dataclass
class ManagedSkill:
    """A skill KV Switch installed: its source (to update it) and where it is enabled."""

    name: str
    description: str
    source: str
    kind: str  # folder | zip | git
    subpath: str = ""
    installed_at: str = ""
    digest: str = ""
    enabled: dict[str, Enabled] = field(default_factory=dict)


class SkillManifest:
    """``skills.json`` in KV Switch's config folder; every change re-reads it under a lock."""

    def __init__(self, paths: AppPaths):
        self.path = paths.config_dir / "skills.json"
        self.store_dir = paths.data_dir / "skills"
        self._lock_path = paths.config_dir / "skills.lock"

    def skills(self) -> dict[str, ManagedSkill]:
        return self._read()

    @contextlib.contextmanager
    def editing(self, timeout: float = 120.0) -> Iterator[dict[str, ManagedSkill]]:
        """Hold the lock; yields the current skills; writes them back when the block succeeds."""
        with FileLock(self._lock_path, timeout=timeout, what="changing skills"):
            skills = self._read()
            yield skills
            payload = {"schema_version": 1, "skills": [asdict(s) for s in skills.values()]}
            atomic_write(self.path, (json.dumps(payload, indent=2, ensure_ascii=False) + "\n").encode())

    def _read(self) -> dict[str, ManagedSkill]:
        raw = read_bytes(self.path)
        if raw is None or not raw.strip():
            return {}
        try:
            data = strict_json(raw.decode("utf-8"))
            items = data["skills"]
            skills = {}
            for item in items:
                enabled = {c: Enabled(**e) for c, e in (item.pop("enabled", None) or {}).items()}
                skill = ManagedSkill(**item, enabled=enabled)
                skills[check_entry_name(skill.name, "skill")] = skill
            return skills
        except (UnicodeDecodeError, ValueError, KeyError, TypeError, UsageError) as exc:
            raise ConfigParseError(self.path, f"KV Switch's skill list is damaged ({exc}); delete it "
                                   "to start over (installed skill folders stay where they are)") from None
