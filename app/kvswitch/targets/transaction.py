"""One all-or-nothing write of several target files, and its roll-back after a crash.

``Engine`` decides what to write (an apply, an undo, a restore of the originals) as a list of ``Op``;
``run_transaction`` backs every file up, writes the journal, writes the files one by one (atomically),
puts back the ones already written when one fails, and only then commits ownership, ``active`` and the
undo history to the ledger. ``recover_interrupted`` reads a journal a SIGKILL left behind and puts back
the files it may have written, so the next run starts from the state before that write.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from kvswitch.core.backups import BackupStore
from kvswitch.core.errors import KvSwitchError
from kvswitch.core.fsutil import remove_temp_files
from kvswitch.core.ledger import (
    JournalEntry,
    Ledger,
    LedgerState,
    ProfileEdit,
    TargetRecord,
    Transaction,
    digest_bytes,
)
from kvswitch.targets.base import Plan, Snapshot, Target
from kvswitch.targets.diff import state_digest
from kvswitch.targets.originals import journal_snapshot, keep_original
from kvswitch.targets.outcome import ApplyFailed, ApplyResult, mode_note
from kvswitch.targets.registry import target_for_id

#: how many applies ``undo`` can walk back (backups keep more copies per file than this); the state
#: before KV Switch's first write of each file is kept apart, for good (``restore_originals``)
UNDO_DEPTH = 5


@dataclass
class Op:
    """One file write of a transaction: what the target held, how to write it, what it holds after."""

    target: Target
    before: Snapshot
    write: Callable[[], None]
    expected_after: str | None
    before_record: TargetRecord | None
    after_record: TargetRecord | None


def run_transaction(
    ledger: Ledger,
    backups: BackupStore,
    state: LedgerState,
    action: str,
    new_active: str | None,
    ops: list[Op],
    result: ApplyResult,
    records: dict[str, TargetRecord | None],
    *,
    undoing: bool = False,
    edit: ProfileEdit | None = None,
) -> None:
    """Back up, journal, write ``ops``; then commit ``records``, ``active`` and the undo history.

    ``state`` is not changed before the writes succeed, so a failure leaves the ledger as it was.
    """
    tx = Transaction(
        action=action,
        profile=new_active,
        previous_active=state.active,
        created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        edit=edit,
    )
    survivors = state.history if undoing else state.history[-(UNDO_DEPTH - 1) :]
    needed = frozenset(e.backup for t in survivors for e in t.entries if e.backup)
    for op in ops:
        if action == "apply":  # an undo or restore writes nothing the user had before
            keep_original(backups, state, op.before)
        backup = None
        if op.before.content is not None:
            backup = str(backups.save(op.before.location, op.before.content, needed))
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
        ledger.save(state)
    done: list[Op] = []
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
        problems = _rollback(done)
        state.pending = None
        ledger.save(state)
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
    ledger.save(state)


def _rollback(done: list[Op]) -> list[str]:
    problems = []
    for op in reversed(done):
        try:
            op.target.restore(op.before)
        except Exception as exc:  # keep putting back the others
            problems.append(f"{op.before.location} ({exc})")
    return problems


def recover_interrupted(ledger: Ledger, state: LedgerState, env: Mapping[str, str]) -> list[str]:
    """Roll back an apply a crash interrupted (``state.pending``), if any; its journal says which files
    it may have written. Returns what was done, one note per file."""
    notes: list[str] = []
    if state.pending is None:
        return notes
    for entry in reversed(state.pending.entries):
        remove_temp_files(Path(entry.location))
        target = target_for_id(entry.target_id, env)
        current = state_digest(target.snapshot())
        if current == entry.before_digest:
            continue
        if entry.after_digest is None or current == entry.after_digest:
            target.restore(journal_snapshot(entry))
            notes.append(f"put back {entry.location} (an apply was interrupted)")
        else:
            notes.append(
                f"{entry.location} changed after an interrupted apply; left as it is "
                f"(backup: {entry.backup or 'none'})"
            )
    state.pending = None
    ledger.save(state)
    return notes



def _set_record(state: LedgerState, target_id: str, record: TargetRecord | None) -> None:
    if record is None or not record.owned:
        state.targets.pop(target_id, None)
    else:
        state.targets[target_id] = record


def stage_writes(
    state: LedgerState, planned: Iterable[tuple[Target, Plan, TargetRecord]]
) -> tuple[list[Op], dict[str, TargetRecord | None]]:
    """What ``run_transaction`` takes for an apply of ``planned`` (each target, its plan and the record
    to keep after): an ``Op`` (the target's snapshot taken now) per plan that changes its file, and for
    a plan that changes nothing only the record, so ownership still follows without a write."""
    ops: list[Op] = []
    records: dict[str, TargetRecord | None] = {}
    for target, plan, after in planned:
        if plan.changed:
            ops.append(Op(target, target.snapshot(), writer(target, plan), expected_digest(plan),
                          state.targets.get(target.target_id), after))
        else:
            records[target.target_id] = after
    return ops, records


def writer(target: Target, plan: Plan) -> Callable[[], None]:
    return lambda: target.apply(plan)


def restorer(target: Target, snapshot: Snapshot) -> Callable[[], None]:
    return lambda: target.restore(snapshot)


def expected_digest(plan: Plan) -> str | None:
    """The digest the target will have once ``plan`` is written (``None`` when it cannot be known)."""
    if plan.new_values is not None:
        return None
    if plan.after is None:
        return digest_bytes(None)
    return digest_bytes(plan.after.encode("utf-8", "surrogateescape"))
