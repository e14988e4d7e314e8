"""What an apply or undo reports, and the check that an apply writes exactly the preview confirmed."""

from __future__ import annotations

from dataclasses import dataclass, field

from kvswitch.core.errors import KvSwitchError
from kvswitch.targets.base import Plan


class ApplyFailed(KvSwitchError):
    """Writing one target failed; the ones already written were put back."""


class NothingToUndo(KvSwitchError):
    """No apply is recorded (or every recorded one was undone already)."""


class PlanOutdated(KvSwitchError):
    """A file (or KV Switch's own record) changed between the preview and the confirmation.

    Nothing was written. ``locations`` names the files whose bytes differ from the preview's, so a
    window can show a fresh preview with those files pointed out.
    """

    def __init__(self, message: str, locations: list[str]):
        super().__init__(message)
        self.locations = locations


@dataclass
class ApplyResult:
    """What an apply or undo did. ``str()`` gives a one-paragraph summary for people.

    ``notes`` are facts about the writes worth knowing (a file's mode was tightened to 0600).
    """

    action: str
    profile: str | None
    plans: list[Plan] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    backups: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        verb = {
            "apply": f"Applied {self.profile!r}",
            "undo": "Undid the last apply",
            "restore-original": "Put back the files as they were before KV Switch first wrote them",
        }.get(self.action, self.action)
        if self.action in ("undo", "restore-original"):
            verb += f" (now {self.profile!r})" if self.profile else " (no profile active now)"
        if not self.written:
            return f"{verb}: nothing needed to change."
        text = f"{verb}: wrote " + ", ".join(self.written) + "."
        return " ".join([text, *self.notes])

    def __str__(self) -> str:
        return self.summary()


def check_preview(confirmed: list[Plan], fresh: list[Plan]) -> None:
    """Raise ``PlanOutdated`` unless planning now gives exactly the plans the user confirmed.

    Comparing whole plans (source bytes, result, ownership) catches a file edited in between, another
    KV Switch process applying meanwhile, and a profile edited after its preview was shown.
    """
    if [p.target_id for p in confirmed] != [p.target_id for p in fresh]:
        raise PlanOutdated(
            "not applied: the set of files to change is different from the preview you confirmed "
            "(the profile or KV Switch's records changed meanwhile); nothing was written, review the "
            "new preview",
            [],
        )
    pairs = list(zip(confirmed, fresh, strict=True))
    moved = [old.location for old, new in pairs if old.source_digest != new.source_digest]
    if moved:
        raise PlanOutdated(
            "not applied: " + ", ".join(moved) + " changed after the preview you confirmed; nothing "
            "was written, review the new preview",
            moved,
        )
    differ = [old.location for old, new in pairs if _result(old) != _result(new)]
    if differ:
        raise PlanOutdated(
            "not applied: what would be written to " + ", ".join(differ) + " is no longer what the "
            "preview showed (the profile or KV Switch's records changed meanwhile); nothing was "
            "written, review the new preview",
            differ,
        )


def _result(plan: Plan) -> tuple[object, ...]:
    return plan.after, plan.existed, plan.owned, plan.new_values


def mode_note(location: str, before: int | None, after: int | None) -> str | None:
    """A note when a write changed a file's permission bits: an apply tightens them to 0600 for a key;
    an undo gives back the mode a file had before a key was written to it (and holds no key now)."""
    if before is None or after is None or before == after:
        return None
    if after & 0o077 and not before & 0o077:
        return f"{location}: mode {before:04o} -> {after:04o} (as it was before; it holds no key now)."
    return f"{location}: mode {before:04o} -> {after:04o} (it holds a key, so only you may read it)."
