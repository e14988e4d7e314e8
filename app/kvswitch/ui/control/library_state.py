"""What the Prompts and Skills pages show, read from the engines (``core.prompts``, ``targets``) in one
pass on a worker thread: no Qt here, so a read of every memory file, every skill folder and the token
counts (HTTP to the local server) never holds the GUI thread.

Token costs are the server's own count (``verify.entry_tokens``) or ``None`` with the reason; the rows
carry the number and the counting server apart so the page can say it in the window's language.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from kvswitch.core.errors import KvSwitchError
from kvswitch.core.prompts import PROMPT_CLIENTS, PromptStore, memory_file
from kvswitch.core.skills import SKILL_CLIENTS
from kvswitch.targets.memory_switch import MemoryWriter
from kvswitch.targets.skill_manager import SkillManager
from kvswitch.verify.entry_tokens import TokenCounts, count_tokens


@dataclass(frozen=True)
class Cost:
    """Tokens a text adds to every request: ``tokens`` counted by ``by``, or ``None`` and ``why``."""

    tokens: int | None
    by: str | None
    why: str

    @classmethod
    def of(cls, counts: TokenCounts, text: str | None) -> Cost:
        number = counts.number(text) if text else None
        return cls(number, counts.by if number is not None else None, counts.why or "not counted")


@dataclass(frozen=True)
class PresetRow:
    """One stored preset; ``live_in`` the clients whose memory file holds exactly its text."""

    name: str
    size: int
    cost: Cost
    live_in: tuple[str, ...]
    origin: str


@dataclass(frozen=True)
class MemoryRow:
    """One client's memory file: ``written`` the preset KV Switch wrote there (bytes unchanged since),
    ``same`` a preset holding the same text, ``error`` why it cannot be read."""

    client: str
    path: str
    exists: bool
    written: str | None
    same: str | None
    cost: Cost
    error: str = ""


@dataclass(frozen=True)
class PromptsState:
    presets: list[PresetRow]
    files: list[MemoryRow]


@dataclass(frozen=True)
class SkillRow:
    """One skill by name. ``cells`` per client: ``link``/``copy`` (enabled by KV Switch), ``seen``
    (the client reads it from ``seen_in[client]``, not through KV Switch) or ``off``. ``managed``:
    KV Switch installed it (so it can be enabled, updated and removed here)."""

    name: str
    description: str
    source: str
    managed: bool
    cost: Cost
    cells: dict[str, str]
    seen_in: dict[str, str] = field(default_factory=dict)
    problem: str = ""


def read_prompts(paths: Any, profile: Any) -> PromptsState:
    """Presets and the three memory files, each with its token cost."""
    store = PromptStore(paths)
    presets = store.presets()
    writer = MemoryWriter(paths, os.environ, {p.text for p in presets})
    found: list[tuple[str, str | None, str | None, str]] = []
    for client in PROMPT_CLIENTS:
        try:
            text, written = writer.read(client)
            found.append((client, text, written, ""))
        except KvSwitchError as exc:
            found.append((client, None, None, str(exc)))
    texts = [p.text for p in presets] + [text for _, text, _, _ in found if text]
    counts = count_tokens(profile, texts)
    rows = [
        PresetRow(p.name, len(p.text.encode()), Cost.of(counts, p.text),
                  tuple(c for c, text, _, _ in found if text == p.text), p.origin)
        for p in presets
    ]
    files = [
        MemoryRow(client, str(memory_file(client, os.environ)), text is not None, written,
                  next((p.name for p in presets if p.text == text), None), Cost.of(counts, text), error)
        for client, text, written, error in found
    ]
    return PromptsState(rows, files)


def read_skills(paths: Any, profile: Any) -> list[SkillRow]:
    """Every skill a client reads (whoever put it there) and every skill KV Switch installed."""
    manager = SkillManager(paths, os.environ)
    managed = manager.manifest.skills()
    found = manager.discover()
    lines = [f.info.listing_line() for f in found if f.info is not None]
    counts = count_tokens(profile, lines)
    names = list(dict.fromkeys(f.name for f in found))
    rows = []
    for name in names:
        entries = [f for f in found if f.name == name]
        skill = managed.get(name)
        info = next((f.info for f in entries if f.info is not None), None)
        cells: dict[str, str] = {}
        seen_in: dict[str, str] = {}
        for client in SKILL_CLIENTS:
            record = skill.enabled.get(client) if skill is not None else None
            if record is not None:
                cells[client] = record.how
                continue
            reader = next((f for f in entries if client in f.readers and f.owner != "kvswitch-store"), None)
            cells[client] = "seen" if reader is not None else "off"
            if reader is not None:
                seen_in[client] = reader.folder
        if skill is not None:
            source = f"{skill.kind}: {skill.source}" + (f" ({skill.subpath})" if skill.subpath else "")
        else:
            source = entries[0].folder
        problem = next((f.problem for f in entries if f.problem), "") if info is None else ""
        description = skill.description if skill is not None else info.description if info else ""
        rows.append(SkillRow(name, description, source, skill is not None,
                             Cost.of(counts, info.listing_line() if info else None), cells, seen_in, problem))
    return rows
