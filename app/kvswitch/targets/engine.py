"""Switching: plan every target, then apply all of them or none, journaled and undoable.

Order of an apply (under the cross-process lock):

1. roll back an apply a crash interrupted (the ledger's ``pending`` journal);
2. plan every target (any unreadable or unparseable file stops here: nothing written anywhere);
3. back up every file about to change and write the journal;
4. write the files one by one, atomically; if one fails, put back the ones already written;
5. commit ownership, ``active`` and the undo history to the ledger.

A SIGKILL at any point leaves each file either old or new (atomic rename) and the journal says which
files to put back, so the next KV Switch run returns to the state before the interrupted apply.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from kvswitch.core.backups import DEFAULT_KEEP, BackupStore
from kvswitch.core.errors import KvSwitchError
from kvswitch.core.fsutil import remove_temp_files
from kvswitch.core.ledger import (
    JournalEntry,
    Ledger,
    LedgerState,
    Original,
    TargetRecord,
    Transaction,
    digest_bytes,
)
from kvswitch.core.lock import FileLock
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.targets.base import Plan, Snapshot, Target
from kvswitch.targets.diff import render_plans, state_digest
from kvswitch.targets.filetarget import StructuredFileTarget
from kvswitch.targets.gateway_view import client_view
from kvswitch.targets.originals import choose_originals, keep_original, original_snapshot
from kvswitch.targets.outcome import (
    ApplyFailed,
    ApplyResult,
    NothingToUndo,
    PlanOutdated,
    check_preview,
    mode_note,
)
from kvswitch.targets.registry import target_for_id, targets_for_profile

__all__ = ["UNDO_DEPTH", "ApplyFailed", "ApplyResult", "Engine", "NothingToUndo", "PlanOutdated"]

#: how many applies ``undo`` can walk back (backups keep more copies per file than this); the state
#: before KV Switch's first write of each file is kept apart, for good (``restore_originals``)
UNDO_DEPTH = 5


@dataclass
class _Op:
    target: Target
    before: Snapshot
    write: Callable[[], None]
    expected_after: str | None
    before_record: TargetRecord | None
    after_record: TargetRecord | None


class Engine:
    """The switching engine the window and the CLI share.

    Args:
        paths: KV Switch's own directories (ledger, backups, lock).
        env: the environment that locates the target files (HOME, CLAUDE_CONFIG_DIR, CODEX_HOME...);
            default: this process's.
        backups_keep: backups kept per file.
        lock_timeout: seconds to wait for another KV Switch process before ``LockedError``.
    """

    def __init__(
        self,
        paths: AppPaths,
        env: Mapping[str, str] | None = None,
        *,
        backups_keep: int = DEFAULT_KEEP,
        lock_timeout: float = 10.0,
    ):
        self.paths = paths
        self.env: Mapping[str, str] = os.environ if env is None else env
        self.ledger = Ledger(paths.state_file)
        self.backups = BackupStore(paths.backups_dir, backups_keep)
        self.lock_timeout = lock_timeout
        #: what the last recovery of an interrupted apply did (shown by doctor / the CLI)
        self.recovery_notes: list[str] = []

    # -- read-only ---------------------------------------------------------------------------------
    def current(self) -> str | None:
        """Name of the profile last applied (``None`` before the first apply or after undoing it)."""
        return self.ledger.load().active

    def state(self) -> LedgerState:
        return self.ledger.load()

    def plan(self, profile: Profile) -> list[Plan]:
        """Plans for every target ``profile`` touches, plus cleanup of targets it no longer uses.

        Reads only. Raises ``ConfigParseError`` / ``FileAccessError`` for a file that cannot be merged.
        """
        state = self.ledger.load()
        plans = [
            target.plan(wanted, self._owned(state, target)) for target, wanted in self._pairs(profile, state)
        ]
        if state.pending is not None:
            for plan in plans[:1]:
                plan.warnings.insert(0, "an earlier apply was interrupted; it is rolled back before this one")
        return plans

    def render_diff(self, plans: list[Plan], show_secrets: bool = False) -> str:
        """A unified diff per changed file, keys masked unless ``show_secrets``."""
        return render_plans(plans, show_secrets=show_secrets)

    # -- writing -----------------------------------------------------------------------------------
    def recover(self) -> list[str]:
        """Roll back an apply a crash interrupted, if any (what ``apply`` does first); returns notes."""
        with self._lock():
            self.recovery_notes = []
            self._recover(self.ledger.load())
            return list(self.recovery_notes)

    def apply(self, profile: Profile, plans: list[Plan] | None = None) -> ApplyResult:
        """Write ``profile`` to all its targets, all or nothing (see the module docstring).

        ``plans``: the preview the user confirmed (from ``plan``). Exactly those bytes are written;
        if any file or KV Switch's records changed since, ``PlanOutdated`` is raised and nothing is
        written. Without it the engine plans and writes in one go.
        """
        with self._lock():
            state = self._recover(self.ledger.load())
            pairs = self._pairs(profile, state)
            fresh = [target.plan(wanted, self._owned(state, target)) for target, wanted in pairs]
            if plans is None:
                plans = fresh
            else:
                check_preview(plans, fresh)
            ops: list[_Op] = []
            records: dict[str, TargetRecord | None] = {}
            for (target, wanted), plan in zip(pairs, plans, strict=True):
                after_record = TargetRecord(
                    location=plan.location, profile=profile.name if wanted else None, owned=plan.owned
                )
                if plan.changed:
                    ops.append(
                        _Op(
                            target,
                            target.snapshot(),
                            _writer(target, plan),
                            _expected_digest(plan),
                            state.targets.get(target.target_id),
                            after_record,
                        )
                    )
                else:
                    records[target.target_id] = after_record
            result = ApplyResult(
                "apply", profile.name, plans, warnings=[w for p in plans for w in p.warnings]
            )
            self._run(state, "apply", profile.name, ops, result, records)
            return result

    def undo(self) -> ApplyResult:
        """Put back the files as they were before the last apply.

        A file edited by hand since that apply is not overwritten: its keys are reverted one by one
        where KV Switch's value is still in place, and everything the user changed is kept (and
        reported in ``warnings``).
        """
        with self._lock():
            state = self._recover(self.ledger.load())
            if not state.history:
                raise NothingToUndo("nothing to undo: no apply is recorded")
            last = state.history[-1]
            ops: list[_Op] = []
            records: dict[str, TargetRecord | None] = {}
            result = ApplyResult("undo", last.previous_active)
            for entry in last.entries:
                target = target_for_id(entry.target_id, self.env)
                now = target.snapshot()
                current = state_digest(now)
                before = self._entry_snapshot(entry)
                if current == entry.before_digest:
                    pass
                elif current == entry.after_digest:
                    ops.append(
                        _Op(
                            target,
                            now,
                            _restorer(target, before),
                            entry.before_digest,
                            state.targets.get(entry.target_id),
                            entry.before_record,
                        )
                    )
                    continue
                elif isinstance(target, StructuredFileTarget) and entry.after_record is not None:
                    plan = target.plan_revert(
                        before.content,
                        entry.before_record.owned if entry.before_record else {},
                        entry.after_record.owned,
                    )
                    result.warnings.extend(plan.warnings)
                    result.plans.append(plan)
                    if plan.changed:
                        ops.append(
                            _Op(
                                target,
                                now,
                                _writer(target, plan),
                                _expected_digest(plan),
                                state.targets.get(entry.target_id),
                                entry.before_record,
                            )
                        )
                        continue
                else:
                    result.warnings.append(
                        f"{entry.location} was changed by hand since the last apply; left as "
                        f"it is (its earlier version is in {entry.backup or 'no backup'})"
                    )
                    continue
                records[entry.target_id] = entry.before_record
            self._run(state, "undo", last.previous_active, ops, result, records, undoing=True)
            return result

    def originals(self) -> dict[str, Original]:
        """Target id -> the state it had before KV Switch first wrote it."""
        return dict(self.ledger.load().originals)

    def restore_originals(self, locations: list[str] | None = None) -> ApplyResult:
        """Put files back as they were before KV Switch's first write (all, or those in ``locations``).

        Journaled and backed up like an apply, so ``undo`` takes it back; KV Switch then owns nothing
        in those files. Raises ``NothingToUndo`` when no original is kept for what was asked.
        """
        with self._lock():
            state = self._recover(self.ledger.load())
            chosen = choose_originals(state.originals, locations)
            ops: list[_Op] = []
            records: dict[str, TargetRecord | None] = {}
            for target_id, original in chosen.items():
                target = target_for_id(target_id, self.env)
                now = target.snapshot()
                records[target_id] = None
                if state_digest(now) != original.digest:
                    snapshot = original_snapshot(target_id, original)
                    ops.append(
                        _Op(target, now, _restorer(target, snapshot), original.digest,
                            state.targets.get(target_id), None)
                    )
            left = set(state.targets) - set(chosen)
            active = state.active if left else None
            result = ApplyResult("restore-original", active)
            self._run(state, "restore-original", active, ops, result, records)
            return result

    # -- transaction -------------------------------------------------------------------------------
    def _run(
        self,
        state: LedgerState,
        action: str,
        new_active: str | None,
        ops: list[_Op],
        result: ApplyResult,
        records: dict[str, TargetRecord | None],
        undoing: bool = False,
    ) -> None:
        """Back up, journal, write ``ops``; then commit ``records``, ``active`` and the undo history.

        ``state`` is not changed before the writes succeed, so a failure leaves the ledger as it was.
        """
        tx = Transaction(
            action=action,
            profile=new_active,
            previous_active=state.active,
            created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        )
        survivors = state.history if undoing else state.history[-(UNDO_DEPTH - 1) :]
        needed = frozenset(e.backup for t in survivors for e in t.entries if e.backup)
        for op in ops:
            keep_original(self.backups, state, op.before)
            backup = None
            if op.before.content is not None:
                backup = str(self.backups.save(op.before.location, op.before.content, needed))
                result.backups[op.before.location] = backup
            tx.entries.append(
                JournalEntry(
                    target_id=op.target.target_id,
                    location=op.before.location,
                    existed=op.before.content is not None,
                    mode=op.before.mode,
                    backup=backup,
                    values=op.before.values,
                    before_digest=state_digest(op.before),
                    after_digest=op.expected_after,
                    before_record=op.before_record,
                    after_record=op.after_record,
                )
            )
        if ops:
            state.pending = tx
            self.ledger.save(state)
        done: list[_Op] = []
        try:
            for op, entry in zip(ops, tx.entries, strict=True):
                op.write()
                done.append(op)
                after = op.target.snapshot()
                entry.after_digest = state_digest(after)
                result.written.append(op.before.location)
                if (note := mode_note(op.before.location, op.before.mode, after.mode)) is not None:
                    result.notes.append(note)
        except BaseException as exc:
            problems = self._rollback(done)
            state.pending = None
            self.ledger.save(state)
            if not isinstance(exc, Exception):
                raise
            where = ops[len(done)].before.location
            detail = str(exc) if isinstance(exc, KvSwitchError) else f"{type(exc).__name__}: {exc}"
            tail = (
                "; the files already written were put back"
                if done and not problems
                else "; nothing was changed"
                if not done
                else "; putting back failed for: " + "; ".join(problems)
            )
            raise ApplyFailed(f"could not write {where}: {detail}{tail}") from exc
        for target_id, record in records.items():
            _set_record(state, target_id, record)
        for op in ops:
            _set_record(state, op.target.target_id, op.after_record)
        state.active = new_active
        state.pending = None
        if undoing:
            state.history = state.history[:-1]
        elif tx.entries or new_active != tx.previous_active:
            state.history = [*state.history, tx][-UNDO_DEPTH:]
        self.ledger.save(state)

    def _rollback(self, done: list[_Op]) -> list[str]:
        problems = []
        for op in reversed(done):
            try:
                op.target.restore(op.before)
            except Exception as exc:  # keep putting back the others
                problems.append(f"{op.before.location} ({exc})")
        return problems

    def _recover(self, state: LedgerState) -> LedgerState:
        """Roll back an apply a crash interrupted; its journal says which files it may have written."""
        if state.pending is None:
            return state
        self.recovery_notes = []
        for entry in reversed(state.pending.entries):
            remove_temp_files(Path(entry.location))
            target = target_for_id(entry.target_id, self.env)
            current = state_digest(target.snapshot())
            if current == entry.before_digest:
                continue
            if entry.after_digest is None or current == entry.after_digest:
                target.restore(self._entry_snapshot(entry))
                self.recovery_notes.append(f"put back {entry.location} (an apply was interrupted)")
            else:
                self.recovery_notes.append(
                    f"{entry.location} changed after an interrupted apply; left as it is "
                    f"(backup: {entry.backup or 'none'})"
                )
        state.pending = None
        self.ledger.save(state)
        return state

    # -- helpers -----------------------------------------------------------------------------------
    def _lock(self) -> FileLock:
        return FileLock(self.paths.lock_file, timeout=self.lock_timeout)

    def _pairs(self, profile: Profile, state: LedgerState) -> list[tuple[Target, Profile | None]]:
        profile = client_view(profile, self.paths)
        targets = targets_for_profile(profile, self.env)
        pairs: list[tuple[Target, Profile | None]] = [(t, profile) for t in targets]
        wanted = {t.target_id for t in targets}
        for target_id in state.targets:
            if target_id not in wanted:
                pairs.append((target_for_id(target_id, self.env), None))
        return pairs

    @staticmethod
    def _owned(state: LedgerState, target: Target) -> dict[str, str]:
        record = state.targets.get(target.target_id)
        return dict(record.owned) if record else {}

    def _entry_snapshot(self, entry: JournalEntry) -> Snapshot:
        content = None
        if entry.existed and entry.values is None:
            if not entry.backup or not os.path.exists(entry.backup):
                raise KvSwitchError(
                    f"the backup of {entry.location} is missing ({entry.backup}); cannot put it back"
                )
            with open(entry.backup, "rb") as handle:
                content = handle.read()
        return Snapshot(
            entry.target_id, entry.location, content=content, mode=entry.mode, values=entry.values
        )


def _set_record(state: LedgerState, target_id: str, record: TargetRecord | None) -> None:
    if record is None or not record.owned:
        state.targets.pop(target_id, None)
    else:
        state.targets[target_id] = record


def _writer(target: Target, plan: Plan) -> Callable[[], None]:
    return lambda: target.apply(plan)


def _restorer(target: Target, snapshot: Snapshot) -> Callable[[], None]:
    return lambda: target.restore(snapshot)


def _expected_digest(plan: Plan) -> str | None:
    """The digest the target will have once ``plan`` is written (``None`` when it cannot be known)."""
    if plan.new_values is not None:
        return None
    if plan.after is None:
        return digest_bytes(None)
    return digest_bytes(plan.after.encode("utf-8", "surrogateescape"))
