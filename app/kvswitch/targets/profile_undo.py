"""Undoing a profile save puts the profile back with the files it was written to.

Saving a profile that clients run writes it through to their files (``live_sync.save_profile``); that
apply records the profile as stored before and after the save (``ProfileEdit``). Undo restores the
files, then the profile — unless it was changed again since (then it is left, and the undo says so),
as a file edited by hand since an apply is left. Without this, undo restored settings.json and kept the
profile's change: the profile no longer matched any client, and ``current`` showed nothing live.
"""

from __future__ import annotations

from kvswitch.core.errors import KvSwitchError
from kvswitch.core.ledger import ProfileEdit
from kvswitch.core.models import Profile
from kvswitch.core.store import ProfileStore
from kvswitch.core.store_rows import STORED, dump
from kvswitch.targets.outcome import ApplyResult


def saved_edit(before: Profile, after: Profile) -> ProfileEdit:
    """The record of a save: both versions as the store writes them (key included)."""
    return ProfileEdit(before=dump(before), after=dump(after))


def put_back_edit(store: ProfileStore, edit: ProfileEdit, result: ApplyResult) -> None:
    """Restore the profile ``edit`` saved, when the store still holds what that save stored."""
    name, old_name = str(edit.after.get("name", "")), str(edit.before.get("name", ""))
    try:
        current = store.get(name)
        if dump(current) != edit.after:
            result.warnings.append(f"profile {name!r} was changed again after that save; it is left as it is")
            return
        store.update(name, Profile.model_validate(edit.before, context=STORED))
    except KvSwitchError as exc:
        result.warnings.append(f"profile {name!r} could not be put back as it was: {exc}")
        return
    result.notes.append(f"profile {old_name!r} is back as it was before the save")
