"""Switching: plan every target, then apply all of them or none, journaled and undoable.

Order of an apply (under the cross-process lock):

1. roll back an apply a crash interrupted (the ledger's ``pending`` journal);
2. plan every target (any unreadable or unparseable file stops here: nothing written anywhere);
3. back up every file about to change and write the journal;
4. write the files one by one, atomically; if one fails, put back the ones already written;
5. commit ownership, ``active`` and the undo history to the ledger.

A SIGKILL at any point leaves each file either old or new (atomic rename) and the journal says which
files to put back, so the next KV Switch run returns to the state before the interrupted apply.
Steps 3-5 and that roll-back are ``targets.transaction``'s; what to write is decided here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace

from kvswitch.core.backups import DEFAULT_KEEP, BackupStore
from kvswitch.core.ledger import Ledger, LedgerState, Original, ProfileEdit, TargetRecord
from kvswitch.core.lock import FileLock
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.core.store import ProfileStore
from kvswitch.targets.base import Plan, Target
from kvswitch.targets.claude import attach_picker
from kvswitch.targets.codex_models import attach_codex_picker
from kvswitch.targets.diff import render_plans, state_digest
from kvswitch.targets.filetarget import StructuredFileTarget, holds_secret
from kvswitch.targets.gateway_view import client_view
from kvswitch.targets.live import client_of_target
from kvswitch.targets.originals import choose_originals, journal_snapshot, original_snapshot
from kvswitch.targets.outcome import ApplyFailed, ApplyResult, NothingToUndo, PlanOutdated, check_preview
from kvswitch.targets.profile_undo import put_back_edit
from kvswitch.targets.registry import target_for_id, targets_for_profile
from kvswitch.targets.transaction import (
    Op,
    expected_digest,
    recover_interrupted,
    restorer,
    run_transaction,
    stage_writes,
    writer,
)

__all__ = ["ApplyFailed", "ApplyResult", "Engine", "NothingToUndo", "PlanOutdated"]

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

    def plan(self, profile: Profile, *, cleanup: bool = True) -> list[Plan]:
        """Plans for every target ``profile`` touches, plus cleanup of its clients' files it no longer uses
        (``cleanup=False``: only its own targets, as a write-through of a saved profile wants).

        Reads only. Raises ``ConfigParseError`` / ``FileAccessError`` for a file that cannot be merged.
        """
        state = self.ledger.load()
        plans = [
            target.plan(wanted, self._owned(state, target))
            for target, wanted in self._pairs(profile, state, cleanup)
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

    def apply(
        self, profile: Profile, plans: list[Plan] | None = None, *, cleanup: bool = True,
        edit: ProfileEdit | None = None,
    ) -> ApplyResult:
        """Write ``profile`` to all its targets, all or nothing (see the module docstring).

        ``plans``: the preview the user confirmed (from ``plan``). Exactly those bytes are written;
        if any file or KV Switch's records changed since, ``PlanOutdated`` is raised and nothing is
        written. Without it the engine plans and writes in one go. ``cleanup``: as for ``plan``.
        ``edit``: the profile save these writes bring to the clients; ``undo`` puts it back with them.
        """
        with self._lock():
            state = self._recover(self.ledger.load())
            pairs = self._pairs(profile, state, cleanup)
            fresh = [target.plan(wanted, self._owned(state, target)) for target, wanted in pairs]
            if plans is None:
                plans = fresh
            else:
                check_preview(plans, fresh)
            ops, records = stage_writes(state, (
                (target, plan, TargetRecord(
                    location=plan.location, profile=profile.name if wanted else None, owned=plan.owned
                ))
                for (target, wanted), plan in zip(pairs, plans, strict=True)
            ))
            result = ApplyResult(
                "apply", profile.name, plans, warnings=[w for p in plans for w in p.warnings]
            )
            self._commit(state, "apply", profile.name, ops, result, records, edit=edit)
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
            ops: list[Op] = []
            records: dict[str, TargetRecord | None] = {}
            result = ApplyResult("undo", last.previous_active)
            for entry in last.entries:
                target = target_for_id(entry.target_id, self.env)
                now = target.snapshot()
                current = state_digest(now)
                before = journal_snapshot(entry)
                if before.mode is not None and entry.before_record is not None and holds_secret(
                        entry.before_record.owned):  # what comes back holds a key: it stays private
                    before = replace(before, mode=before.mode & 0o700)
                if current == entry.before_digest:
                    pass
                elif current == entry.after_digest:
                    ops.append(
                        Op(
                            target,
                            now,
                            restorer(target, before),
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
                            Op(
                                target,
                                now,
                                writer(target, plan),
                                expected_digest(plan),
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
            self._commit(state, "undo", last.previous_active, ops, result, records, undoing=True)
        if last.edit is not None:  # after the engine's lock: the store takes it for a rename
            put_back_edit(ProfileStore(self.paths), last.edit, result)
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
            ops: list[Op] = []
            records: dict[str, TargetRecord | None] = {}
            for target_id, original in chosen.items():
                target = target_for_id(target_id, self.env)
                now = target.snapshot()
                records[target_id] = None
                if state_digest(now) != original.digest:
                    snapshot = original_snapshot(target_id, original)
                    ops.append(
                        Op(target, now, restorer(target, snapshot), original.digest,
                            state.targets.get(target_id), None)
                    )
            left = set(state.targets) - set(chosen)
            active = state.active if left else None
            result = ApplyResult("restore-original", active)
            self._commit(state, "restore-original", active, ops, result, records)
            return result

    # -- transaction -------------------------------------------------------------------------------
    def _commit(self, state: LedgerState, action: str, new_active: str | None, ops: list[Op],
                result: ApplyResult, records: dict[str, TargetRecord | None], undoing: bool = False,
                edit: ProfileEdit | None = None) -> None:
        run_transaction(self.ledger, self.backups, state, action, new_active, ops, result, records,
                        undoing=undoing, edit=edit)

    def _recover(self, state: LedgerState) -> LedgerState:
        """Roll back an apply a crash interrupted (``recover_interrupted``), noting what it did."""
        if state.pending is not None:
            self.recovery_notes = recover_interrupted(self.ledger, state, self.env)
        return state

    # -- helpers -----------------------------------------------------------------------------------
    def _lock(self) -> FileLock:
        return FileLock(self.paths.lock_file, timeout=self.lock_timeout)

    def _pairs(
        self, profile: Profile, state: LedgerState, cleanup: bool = True
    ) -> list[tuple[Target, Profile | None]]:
        profile = client_view(profile, self.paths)
        targets = targets_for_profile(profile, self.env)
        if profile.via_gateway:  # every gateway profile's models in Claude Code's and Codex's pickers
            every = ProfileStore(self.paths).profiles()
            attach_picker(targets, every)
            attach_codex_picker(targets, every)
        pairs: list[tuple[Target, Profile | None]] = [(t, profile) for t in targets]
        if not cleanup:
            return pairs
        wanted = {t.target_id for t in targets}
        # each client keeps its own profile: a Codex-only profile leaves Claude Code's files alone, and
        # only a file of a client this profile writes is cleaned up (another scope, a dropped auth.json)
        clients = {client_of_target(t) for t in wanted}
        for target_id in state.targets:
            if target_id not in wanted and client_of_target(target_id) in clients:
                pairs.append((target_for_id(target_id, self.env), None))
        return pairs

    @staticmethod
    def _owned(state: LedgerState, target: Target) -> dict[str, str]:
        record = state.targets.get(target.target_id)
        return dict(record.owned) if record else {}
