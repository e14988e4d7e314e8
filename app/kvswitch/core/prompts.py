"""Memory-file presets: named texts KV Switch can write as a client's user memory file.

Each client reads one user-level memory file at the start of every session and puts its whole text
near the start of every request (measured: Claude Code 2.1.332, Codex 0.171.0, OpenCode 1.18.33; see
docs/prompts-and-skills.md). A preset is just a name and that text; which file holds which preset is
the switching ledger's business (``targets.memoryfile``), so undo works as for a profile.

The presets live in one JSON file under KV Switch's config folder, re-read under a lock before every
change (the window and the CLI may both edit it) and written atomically.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from kvswitch.core.errors import ConfigParseError, UsageError
from kvswitch.core.fsutil import atomic_write, read_bytes
from kvswitch.core.lock import FileLock
from kvswitch.core.paths import AppPaths, claude_config_dir, codex_home, opencode_config_dir
from kvswitch.core.strictparse import loads as strict_json

#: the clients with a user memory file, in the order they are listed
PROMPT_CLIENTS = ("claude", "codex", "opencode")
#: a memory file larger than this is not a memory file (real ones are a few kB); it is refused unread
MAX_PROMPT_BYTES = 1 << 20
PRESETS_SCHEMA = 1
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._ -]{0,63}$")


def memory_file(client: str, env: Mapping[str, str]) -> Path:
    """The user memory file ``client`` reads (the paths measured on the versions the docs name)."""
    if client == "claude":
        return claude_config_dir(env) / "CLAUDE.md"
    if client == "codex":
        return codex_home(env) / "AGENTS.md"
    if client == "opencode":
        return opencode_config_dir(env) / "AGENTS.md"
    raise UsageError(f"no memory file is known for {client!r} (clients: {', '.join(PROMPT_CLIENTS)})")


def check_entry_name(name: str, what: str) -> str:
    """A preset or skill name: letters, digits, ``.``, ``_``, ``-`` (and spaces for presets), at most
    64 characters, never a path (``/``, ``\\``, ``..``) nor a hidden name."""
    cleaned = name.strip()
    if "/" in cleaned or "\\" in cleaned or ".." in cleaned or "\x00" in cleaned:
        raise UsageError(f"{what} name {name[:80]!r} is refused: it must not contain '/', '\\' or '..'")
    if not _NAME.match(cleaned) or (what == "skill" and " " in cleaned):
        raise UsageError(
            f"{what} name {name[:80]!r} is refused: use 1-64 letters, digits, '.', '_' or '-'"
            + (" (or spaces)" if what != "skill" else "") + ", starting with a letter or digit"
        )
    return cleaned


def decode_prompt(raw: bytes, where: Path | str) -> str:
    """Memory-file bytes as text; refuses what no client could read as instructions."""
    if len(raw) > MAX_PROMPT_BYTES:
        raise UsageError(f"{where}: {len(raw):,} bytes is more than the {MAX_PROMPT_BYTES:,} a memory "
                         "file may hold here; nothing was stored")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{where}: not UTF-8 text (byte {exc.start}); nothing was stored") from None
    if "\x00" in text:
        raise UsageError(f"{where}: holds a NUL byte, so it is not a text file; nothing was stored")
    return text


@dataclass(frozen=True)
class PromptPreset:
    """One preset: ``origin`` says where its text came from (a file, stdin, an import)."""

    name: str
    text: str
    origin: str = ""
    saved_at: str = ""


class PromptStore:
    """The presets in ``prompts.json`` (config folder): ``presets``, ``get``, ``add``, ``remove``."""

    def __init__(self, paths: AppPaths):
        self.path = paths.config_dir / "prompts.json"
        self._lock_path = paths.config_dir / "prompts.lock"

    def presets(self) -> list[PromptPreset]:
        return self._read()

    def get(self, name: str) -> PromptPreset:
        key = name.strip().casefold()
        presets = self._read()
        for preset in presets:
            if preset.name.casefold() == key:
                return preset
        known = ", ".join(p.name for p in presets) or "none yet"
        raise UsageError(f"no prompt preset named {name!r} (presets: {known}); add one with "
                         f"'kvswitch prompt add {name} FILE' or 'kvswitch prompt import'")

    def find_text(self, text: str) -> PromptPreset | None:
        """The first preset holding exactly ``text`` (a memory file that is a preset is not hand-made)."""
        return next((p for p in self._read() if p.text == text), None)

    def add(self, name: str, text: str, origin: str, *, replace: bool = False) -> PromptPreset:
        """Store ``text`` as preset ``name``; an existing name is refused unless ``replace``."""
        name = check_entry_name(name, "prompt preset")
        decode_prompt(text.encode("utf-8"), f"preset {name!r}")
        preset = PromptPreset(name, text, origin, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        with self._locked() as presets:
            index = next((i for i, p in enumerate(presets) if p.name.casefold() == name.casefold()), None)
            if index is not None and not replace:
                raise UsageError(f"a prompt preset named {presets[index].name!r} exists already; "
                                 "choose another name or pass --replace")
            if index is None:
                presets.append(preset)
            else:
                presets[index] = preset
            self._write(presets)
        return preset

    def free_name(self, wanted: str) -> str:
        """``wanted``, or ``wanted-2``, ``wanted-3``... whichever no preset has."""
        taken = {p.name.casefold() for p in self._read()}
        name, number = wanted, 2
        while name.casefold() in taken:
            name, number = f"{wanted}-{number}", number + 1
        return name

    def remove(self, name: str) -> PromptPreset:
        """Forget a preset; memory files holding its text keep it (they are the user's files)."""
        with self._locked() as presets:
            found = self.get(name)
            presets[:] = [p for p in presets if p.name != found.name]
            self._write(presets)
        return found

    # -- file ------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _locked(self) -> Iterator[list[PromptPreset]]:
        with FileLock(self._lock_path, timeout=10.0, what="saving prompt presets"):
            yield self._read()

    def _read(self) -> list[PromptPreset]:
        raw = read_bytes(self.path, limit=64 * MAX_PROMPT_BYTES)
        if raw is None or not raw.strip():
            return []
        try:
            data = strict_json(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise ConfigParseError(self.path, f"KV Switch's prompt presets are damaged ({exc}); restore "
                                   "the file from a backup or delete it") from None
        items = data.get("presets") if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise ConfigParseError(self.path, "expected {'schema_version': 1, 'presets': [...]}")
        presets = []
        for number, item in enumerate(items, 1):
            if not (isinstance(item, dict) and isinstance(item.get("name"), str)
                    and isinstance(item.get("text"), str)):
                raise ConfigParseError(self.path, f"preset {number} has no name or text")
            presets.append(PromptPreset(item["name"], item["text"], str(item.get("origin", "")),
                                        str(item.get("saved_at", ""))))
        return presets

    def _write(self, presets: list[PromptPreset]) -> None:
        payload = {"schema_version": PRESETS_SCHEMA, "presets": [asdict(p) for p in presets]}
        text = json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
        atomic_write(self.path, text.encode("utf-8"), secret=True)
