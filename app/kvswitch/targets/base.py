"""The contract every writer follows: read, plan a readable diff, apply atomically, restore.

A target owns only what KV Switch wrote. What it wrote last time (``owned``: key -> value) comes from
the ledger the engine keeps, so a target never has to guess which keys are the user's. Planning is pure
(reads only); ``apply`` writes exactly what the plan showed, so a dry run and a real run cannot differ.
"""

from __future__ import annotations

import os
import stat
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

from kvswitch.core.models import Profile


@dataclass(frozen=True)
class Snapshot:
    """The complete prior state of one target, enough to put it back byte for byte.

    For a file: ``content`` is its bytes (``None`` = it did not exist) and ``mode`` its permission bits.
    For a non-file target (Windows environment): ``values`` maps each name it may touch to its old value
    (``None`` = absent).
    """

    target_id: str
    location: str
    content: bytes | None = None
    mode: int | None = None
    values: dict[str, str | None] | None = None



def file_snapshot(target_id: str, path: Path, raw: bytes | None) -> Snapshot:
    """The snapshot of a file target whose bytes are ``raw`` (each target reads them with its own size
    limit); its permission bits are read best effort, none when the file went away meanwhile."""
    mode = None
    if raw is not None:
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except OSError:
            mode = None
    return Snapshot(target_id, str(path), content=raw, mode=mode)

@dataclass
class Plan:
    """What applying a profile to one target would change.

    Attributes:
        target_id: e.g. ``claude``, ``claude-project:/src/app``, ``bash``.
        location: the file path (or ``HKCU\\Environment``) shown to the user.
        before: current text ('' when the file is absent); for display and for the diff.
        after: text to write; ``None`` means the file must be removed (KV Switch created it and
            nothing else is left in it).
        changes: one human line per change (``set env.ANTHROPIC_BASE_URL``, ``remove env.X``).
        warnings: things the user should know before confirming (e.g. an owned key edited by hand).
        owned: the ledger entry after apply: every key/value KV Switch will own in this target.
        secrets: values to mask whenever this plan is displayed.
        new_values: for non-file targets, name -> value (``None`` = delete) to set.
        existed: whether the file existed when planned.
        source_digest: digest of the exact bytes the plan was computed from (``absent`` for a
            missing file; ``None`` for non-file targets); apply refuses when the file no longer has
            them, so what is written is what the preview showed.
    """

    target_id: str
    location: str
    before: str
    after: str | None
    changes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    owned: dict[str, str] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)
    new_values: dict[str, str | None] | None = None
    existed: bool = True
    source_digest: str | None = None

    @property
    def changed(self) -> bool:
        if self.new_values is not None:
            return bool(self.new_values)
        if self.after is None:
            return self.existed
        return not self.existed or self.after != self.before


class Target(ABC):
    """One kind of config file (or store) that KV Switch writes into."""

    #: stable id used in the ledger and the CLI (``claude``, ``codex``, ``bash``...)
    target_id: str

    @abstractmethod
    def location(self) -> str:
        """Where this target writes, for display."""

    @abstractmethod
    def snapshot(self) -> Snapshot:
        """Capture the current state (raises ``KvSwitchError`` if it cannot be read)."""

    @abstractmethod
    def plan(self, profile: Profile | None, owned: dict[str, str]) -> Plan:
        """Plan the change from the current state to ``profile`` (``None`` = remove what we own).

        Raises ``ConfigParseError`` naming file and line when the current content cannot be parsed;
        in that case nothing anywhere may be written.
        """

    @abstractmethod
    def apply(self, plan: Plan) -> None:
        """Write exactly ``plan`` (atomically for files)."""

    @abstractmethod
    def restore(self, snapshot: Snapshot) -> None:
        """Put back a snapshot taken earlier (used for rollback and undo)."""
