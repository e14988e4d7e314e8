"""The state of each file before KV Switch first wrote it, kept for good.

Undo walks back ``UNDO_DEPTH`` applies; after more, the user's own file would be gone from the undo
history. So the first write of each target also keeps its prior state apart (``original.kept`` next to
its backups, named in the ledger's ``originals``), which no rotation prunes and
``kvswitch undo --original`` puts back.
"""

from __future__ import annotations

import os
import time

from kvswitch.core.backups import BackupStore
from kvswitch.core.errors import KvSwitchError
from kvswitch.core.ledger import LedgerState, Original, digest_bytes
from kvswitch.targets.base import Snapshot
from kvswitch.targets.diff import state_digest
from kvswitch.targets.outcome import NothingToUndo


def keep_original(backups: BackupStore, state: LedgerState, before: Snapshot) -> None:
    """Record ``before`` as the target's original unless one is kept already (this is its first write)."""
    if before.target_id in state.originals:
        return
    backup = None
    digest = state_digest(before)
    if before.content is not None:
        path = backups.save_original(before.location, before.content)
        with open(path, "rb") as handle:  # one kept before the ledger was reset is older: it wins
            digest = digest_bytes(handle.read())
        backup = str(path)
    state.originals[before.target_id] = Original(
        location=before.location,
        existed=before.content is not None or before.values is not None,
        mode=before.mode,
        backup=backup,
        values=before.values,
        digest=digest,
        saved_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )


def original_snapshot(target_id: str, original: Original) -> Snapshot:
    """The kept original as a snapshot a target can restore."""
    content = None
    if original.backup is not None:
        try:
            with open(original.backup, "rb") as handle:
                content = handle.read()
        except OSError as exc:
            raise KvSwitchError(
                f"the kept original of {original.location} cannot be read ({original.backup}: "
                f"{exc.strerror or exc}); nothing was changed"
            ) from exc
    return Snapshot(target_id, original.location, content=content, mode=original.mode, values=original.values)


def choose_originals(originals: dict[str, Original], locations: list[str] | None) -> dict[str, Original]:
    """The kept originals named by path (or target id) in ``locations``; all when ``None``."""
    if not originals:
        raise NothingToUndo("no original is kept: KV Switch has not written any file yet")
    if not locations:
        return dict(originals)
    chosen: dict[str, Original] = {}
    for wanted in locations:
        resolved = os.path.abspath(os.path.expanduser(wanted))
        hits = {
            target_id: original
            for target_id, original in originals.items()
            if wanted == target_id or resolved == os.path.abspath(original.location)
        }
        if not hits:
            known = ", ".join(o.location for o in originals.values())
            raise NothingToUndo(f"no original is kept for {wanted} (kept: {known})")
        chosen.update(hits)
    return chosen
