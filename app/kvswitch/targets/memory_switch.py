"""Writing a prompt preset to clients' memory files: planned, backed up, journaled, undoable.

The same transaction an apply of a profile runs (``targets.transaction``), under the same lock and in
the same ledger, so ``kvswitch undo`` takes back a preset switch like a profile switch, and a crash
half-way is rolled back by the next KV Switch run. The profile in use (``active``) is left as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kvswitch.core.backups import DEFAULT_KEEP, BackupStore
from kvswitch.core.ledger import Ledger, TargetRecord
from kvswitch.core.lock import FileLock
from kvswitch.core.paths import AppPaths
from kvswitch.core.prompts import memory_file
from kvswitch.targets.base import Plan
from kvswitch.targets.memoryfile import MemoryFileTarget
from kvswitch.targets.outcome import ApplyResult, check_preview
from kvswitch.targets.transaction import (
    recover_interrupted,
    run_transaction,
    stage_writes,
)


@dataclass(frozen=True)
class MemoryWrite:
    """What to write: ``text`` as preset ``preset`` into each client's memory file."""

    preset: str
    text: str
    clients: tuple[str, ...]
    force: bool = False


class MemoryWriter:
    """Plans and writes memory files; ``known_texts`` are the stored presets' texts (not hand-made)."""

    def __init__(self, paths: AppPaths, env: Mapping[str, str], known_texts: set[str],
                 lock_timeout: float = 120.0):
        self.paths = paths
        self.env = env
        self.known_texts = known_texts
        self.ledger = Ledger(paths.state_file)
        self.lock_timeout = lock_timeout

    def targets(self, clients: tuple[str, ...]) -> list[MemoryFileTarget]:
        return [MemoryFileTarget(c, memory_file(c, self.env)) for c in dict.fromkeys(clients)]

    def read(self, client: str) -> tuple[str | None, str | None]:
        """(text of ``client``'s memory file or ``None`` when absent, the preset KV Switch wrote there
        if its bytes are still the ones written)."""
        target = MemoryFileTarget(client, memory_file(client, self.env))
        raw = target.read_raw()
        record = self.ledger.load().targets.get(target.target_id)
        owned = dict(record.owned) if record else {}
        preset = owned.get("@prompt") if owned and target.hand_edit(raw, owned) is None else None
        return (None if raw is None else raw.decode("utf-8", "surrogateescape")), preset

    def plan(self, change: MemoryWrite) -> list[Plan]:
        """The plans for ``change`` (reads only); raises ``HandEdited`` for a file only the user has."""
        state = self.ledger.load()
        plans = []
        for target in self.targets(change.clients):
            record = state.targets.get(target.target_id)
            raw = target.read_raw()
            known = raw is not None and raw.decode("utf-8", "replace") in self.known_texts
            plans.append(target.plan_text(change.text, change.preset, dict(record.owned) if record else {},
                                          known_text=known, force=change.force))
        return plans

    def apply(self, change: MemoryWrite, confirmed: list[Plan] | None = None) -> ApplyResult:
        """Write ``change`` to all its files or none. ``confirmed``: the preview shown; exactly those
        bytes are written, or ``PlanOutdated`` is raised and nothing is."""
        backups = BackupStore(self.paths.backups_dir, DEFAULT_KEEP)
        with FileLock(self.paths.lock_file, timeout=self.lock_timeout):
            state = self.ledger.load()
            notes = recover_interrupted(self.ledger, state, self.env) if state.pending else []
            plans = self.plan(change)
            if confirmed is not None:
                check_preview(confirmed, plans)
            result = ApplyResult("apply", f"prompt {change.preset}", plans, notes=notes,
                                 warnings=[w for p in plans for w in p.warnings])
            ops, records = stage_writes(state, (
                (target, plan, TargetRecord(location=plan.location, profile=None, owned=plan.owned))
                for target, plan in zip(self.targets(change.clients), plans, strict=True)
            ))
            run_transaction(self.ledger, backups, state, "apply", state.active, ops, result, records)
            return result
