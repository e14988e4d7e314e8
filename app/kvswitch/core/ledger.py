"""What KV Switch wrote where: the only source of truth for ownership, "current" and undo.

Guessing ownership from file contents is how switchers lose user settings; instead every apply records,
per target, each key and the exact value written. An apply is journaled here *before* any file is
touched (``pending``), so a crash half-way can be rolled back on the next run.

The file holds the same secrets as the targets (the values written), so it is 0600.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from kvswitch.core.errors import ConfigParseError
from kvswitch.core.fsutil import atomic_write, read_bytes
from kvswitch.core.strictparse import loads_json

LEDGER_SCHEMA = 1


class TargetRecord(BaseModel):
    """Ownership in one target after an apply. ``digest`` is the target's state right after it."""

    location: str
    profile: str | None = None
    owned: dict[str, str] = Field(default_factory=dict)
    digest: str | None = None


class JournalEntry(BaseModel):
    """One target inside an apply or undo: enough to roll it back or to undo it later.

    ``backup`` is the file holding the prior content (``None`` when the file did not exist; see
    ``existed``); ``values`` is the prior state of a non-file target.
    """

    target_id: str
    location: str
    existed: bool = True
    mode: int | None = None
    backup: str | None = None
    values: dict[str, str | None] | None = None
    before_digest: str
    after_digest: str | None = None
    before_record: TargetRecord | None = None
    after_record: TargetRecord | None = None


class ProfileEdit(BaseModel):
    """A profile saved while clients ran it, as stored before and after the save (its JSON, key
    included: this file is 0600). The save's writes carry it, so undoing them puts the profile back
    too: one undo step, never the files without the profile they were written from."""

    before: dict[str, Any]
    after: dict[str, Any]


class Transaction(BaseModel):
    """A whole apply (or undo): the pending journal while running, the undo record once committed."""

    action: str  # "apply" | "undo"
    profile: str | None = None
    previous_active: str | None = None
    created_at: str = ""
    entries: list[JournalEntry] = Field(default_factory=list)
    #: the profile save these writes brought to the clients, when that is what they were
    edit: ProfileEdit | None = None


class Original(BaseModel):
    """A target as it was before KV Switch first wrote it, kept for good (outside undo's rotation).

    ``backup`` holds the bytes (``None`` when the file did not exist, see ``existed``); ``values`` is
    the prior state of a non-file target.
    """

    location: str
    existed: bool = True
    mode: int | None = None
    backup: str | None = None
    values: dict[str, str | None] | None = None
    digest: str
    saved_at: str = ""


class LedgerState(BaseModel):
    schema_version: int = LEDGER_SCHEMA
    active: str | None = None
    targets: dict[str, TargetRecord] = Field(default_factory=dict)
    #: committed applies, oldest first; ``undo`` pops the newest
    history: list[Transaction] = Field(default_factory=list)
    #: the journal of an apply in progress (left behind only by a crash)
    pending: Transaction | None = None
    #: target id -> its state before KV Switch's first write (``kvswitch undo --original``)
    originals: dict[str, Original] = Field(default_factory=dict)


def digest_bytes(content: bytes | None) -> str:
    """Identity of a file state; absent files have their own digest."""
    if content is None:
        return "absent"
    return "sha256:" + hashlib.sha256(content).hexdigest()


def digest_values(values: dict[str, str | None] | None) -> str:
    return "values:" + hashlib.sha256(json.dumps(values or {}, sort_keys=True).encode()).hexdigest()


class Ledger:
    """Loads and saves ``state.json`` atomically; callers hold the apply lock while they mutate it."""

    def __init__(self, path: Path):
        self.path = path

    def load(self) -> LedgerState:
        raw = read_bytes(self.path)
        if raw is None or not raw.strip():
            return LedgerState()
        try:
            data: Any = loads_json(self.path, raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            line = getattr(exc, "lineno", None)
            col = getattr(exc, "colno", None)
            raise ConfigParseError(
                self.path,
                f"KV Switch's ledger is damaged ({exc}); restore it from a "
                "backup or delete it (KV Switch then forgets what it owns)",
                line,
                col,
            ) from exc
        if not isinstance(data, dict):
            raise ConfigParseError(
                self.path, "KV Switch's ledger is not a JSON object; delete it to start over"
            )
        version = data.get("schema_version", LEDGER_SCHEMA)
        if isinstance(version, int) and version > LEDGER_SCHEMA:
            raise ConfigParseError(
                self.path, f"written by a newer KV Switch (schema {version}); upgrade KV Switch"
            )
        try:
            return LedgerState.model_validate(data)
        except ValidationError as exc:
            raise ConfigParseError(
                self.path, f"KV Switch's ledger is damaged: {exc.errors()[0]['msg']}"
            ) from exc

    def save(self, state: LedgerState) -> None:
        text = json.dumps(state.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
        atomic_write(self.path, text.encode("utf-8"), secret=True)
