"""CC Switch's prompt presets and skills, read from its database (never written).

CC Switch 4.x keeps them in ``~/.cc-switch/cc-switch.db``: ``prompts`` (``id, app_type, name, content,
description, enabled, …``; one row per app) and ``skills`` (``id, name, description, directory, …,
enabled_<app>``; the files in ``~/.cc-switch/skills/<directory>``). The columns are the ones its
``src-tauri/src/database/schema.rs`` creates (read from its source; a real CC Switch database was not
available here). The file is opened read-only, and a missing table or column is a clear error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kvswitch.core.ccswitch_db import read_only_db
from kvswitch.core.errors import ConfigParseError, FileAccessError
from kvswitch.core.paths import home_dir

#: CC Switch app ids KV Switch has a client for
KNOWN_APPS = ("claude", "codex", "opencode")


@dataclass(frozen=True)
class CcPrompt:
    app: str
    name: str
    content: str
    enabled: bool


@dataclass(frozen=True)
class CcSkill:
    name: str
    folder: Path
    enabled_for: tuple[str, ...]


def cc_switch_db(path: Path | str | None = None) -> Path:
    """The database: ``path`` (the file or the ``.cc-switch`` folder), else ``~/.cc-switch/cc-switch.db``."""
    base = Path(path).expanduser() if path else home_dir() / ".cc-switch"
    found = base / "cc-switch.db" if base.is_dir() else base
    if not found.is_file():
        raise FileAccessError(found, "not found; is CC Switch installed? (pass its cc-switch.db)")
    return found


def read_prompts(db: Path) -> list[CcPrompt]:
    rows = _select(db, "prompts", ("app_type", "name", "content", "enabled"))
    return [CcPrompt(str(app), str(name), str(content), bool(enabled)) for app, name, content, enabled in rows
            if isinstance(content, str)]


def read_skills(db: Path) -> list[CcSkill]:
    """Each skill row with its folder under ``skills/`` next to the database, and the apps it is on for."""
    columns = _columns(db, "skills")
    flags = [c for c in columns if c.startswith("enabled_")]
    rows = _select(db, "skills", ("name", "directory", *flags))
    store = db.parent / "skills"
    skills = []
    for name, directory, *enabled in rows:
        parts = Path(str(directory)).parts
        if not parts or ".." in parts or Path(str(directory)).is_absolute():
            raise ConfigParseError(db, f"skill {name!r}: directory {directory!r} is not a folder under "
                                   f"{store}; nothing was imported")
        apps = tuple(flag.removeprefix("enabled_") for flag, on in zip(flags, enabled, strict=True) if on)
        skills.append(CcSkill(str(name), store / str(directory), apps))
    return skills


def _columns(db: Path, table: str) -> list[str]:
    """The table's columns in their order (the order a flag list is shown in)."""
    with read_only_db(db) as conn:
        return [str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")]


def _select(db: Path, table: str, wanted: tuple[str, ...]) -> list[tuple[object, ...]]:
    missing = set(wanted) - set(_columns(db, table))
    if missing:
        raise ConfigParseError(db, f"no '{table}' table with {', '.join(sorted(missing))}; is this a CC "
                               "Switch 4.x database?")
    with read_only_db(db) as conn:
        return list(conn.execute(f"SELECT {', '.join(wanted)} FROM {table} ORDER BY rowid LIMIT 10000"))
