"""A client's user memory file (``CLAUDE.md``, ``AGENTS.md``) as a switching target.

Unlike a settings file, KV Switch owns the whole file once it wrote a preset there, so ownership is the
preset's name and the digest of the bytes written (``@prompt``, ``@sha256``). A file whose bytes no
longer have that digest was edited by hand: it is never overwritten silently (the plan is refused and
``--force`` asked for), and ``undo`` leaves it as it is, like any hand-edited target.

Target ids are ``prompt:<client>``; the engine's undo, recovery and doctor find the target through
``targets.registry.target_for_id`` like every other.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from kvswitch.core.errors import FileAccessError, KvSwitchError, UsageError
from kvswitch.core.fsutil import atomic_delete, atomic_write, read_bytes, resolve_for_write
from kvswitch.core.ledger import digest_bytes
from kvswitch.core.models import Profile
from kvswitch.core.prompts import MAX_PROMPT_BYTES, PROMPT_CLIENTS, memory_file
from kvswitch.targets.base import Plan, Snapshot, Target, file_snapshot

TARGET_PREFIX = "prompt:"
OWNED_NAME = "@prompt"
OWNED_DIGEST = "@sha256"


class HandEdited(KvSwitchError):
    """The memory file holds text KV Switch did not write; replacing it needs ``--force``."""

    exit_code = 4


class MemoryFileTarget(Target):
    """``prompt:<client>``: the whole memory file of one client."""

    def __init__(self, client: str, path: Path):
        self.client = client
        self.path = path
        self.target_id = TARGET_PREFIX + client

    def location(self) -> str:
        return str(self.path)

    def read_raw(self) -> bytes | None:
        return read_bytes(self.path, limit=MAX_PROMPT_BYTES)

    def snapshot(self) -> Snapshot:
        return file_snapshot(self.target_id, self.path, self.read_raw())

    def hand_edit(self, raw: bytes | None, owned: Mapping[str, str]) -> str | None:
        """Why the file counts as the user's own text now, or ``None`` when KV Switch's bytes are there."""
        if raw is None or not owned:
            return None
        if digest_bytes(raw) == owned.get(OWNED_DIGEST):
            return None
        return (f"{self.path} was edited by hand since KV Switch wrote preset "
                f"{owned.get(OWNED_NAME, '?')!r} there")

    def plan(self, profile: Profile | None, owned: dict[str, str]) -> Plan:
        """A profile never writes a memory file: this only reports (doctor asks with ``None``)."""
        raw = self.read_raw()
        text = _text(raw)
        plan = Plan(self.target_id, self.location(), before=text, after=text if raw is not None else None,
                    owned=dict(owned), existed=raw is not None, source_digest=digest_bytes(raw))
        if self.hand_edit(raw, owned) is not None:  # doctor shows it after the file's name
            preset = owned.get(OWNED_NAME, "?")
            plan.warnings.append(f"edited by hand since KV Switch wrote preset {preset!r} there; KV Switch "
                                 "leaves it as it is")
        return plan

    def plan_text(self, text: str, preset: str, owned: Mapping[str, str], *, known_text: bool,
                  force: bool) -> Plan:
        """Plan writing ``text`` (preset ``preset``) as the whole file.

        ``known_text``: the file's current text is one of the user's presets (so nothing unsaved would
        be replaced). Refuses with ``HandEdited`` when the file holds text only the user has, unless
        ``force`` (the backup then keeps it, and ``kvswitch undo`` puts it back).
        """
        raw = self.read_raw()
        before = _text(raw)
        data = text.encode("utf-8")
        reason = self.hand_edit(raw, owned)
        if reason is None and raw is not None and raw.strip() and not owned and not known_text:
            reason = f"{self.path} holds text KV Switch did not write (and no preset has)"
        plan = Plan(self.target_id, self.location(), before=before, after=text,
                    owned={OWNED_NAME: preset, OWNED_DIGEST: digest_bytes(data)},
                    existed=raw is not None, source_digest=digest_bytes(raw))
        if reason is not None and raw != data:
            if not force:
                raise HandEdited(f"{reason}; nothing was written. Keep it as a preset first "
                                 f"('kvswitch prompt import --client {self.client}'), or pass --force "
                                 "to replace it (a backup is kept and 'kvswitch undo' puts it back)")
            plan.warnings.append(reason + "; replaced because of --force (a backup is kept)")
        plan.changes.append(f"write preset {preset!r} ({len(data):,} bytes)")
        return plan

    def apply(self, plan: Plan) -> None:
        if not plan.changed:
            return
        if digest_bytes(self.read_raw()) != plan.source_digest:
            raise FileAccessError(self.path, "changed since KV Switch planned this change; nothing was "
                                  "written there, try again")
        if plan.after is None:
            atomic_delete(self.path)
        else:
            atomic_write(self.path, plan.after.encode("utf-8"))

    def restore(self, snapshot: Snapshot) -> None:
        if snapshot.content is None:
            if resolve_for_write(self.path).exists():
                atomic_delete(self.path)
            return
        atomic_write(self.path, snapshot.content, mode=snapshot.mode)
        if snapshot.mode is not None:
            try:
                os.chmod(resolve_for_write(self.path), snapshot.mode)
            except OSError as exc:
                raise FileAccessError(self.path, exc.strerror or str(exc)) from exc


def _text(raw: bytes | None) -> str:
    return "" if raw is None else raw.decode("utf-8", "surrogateescape")


def memory_target(target_id: str, env: Mapping[str, str]) -> MemoryFileTarget:
    """The target a ``prompt:<client>`` ledger id names."""
    client = target_id.removeprefix(TARGET_PREFIX)
    if not target_id.startswith(TARGET_PREFIX) or client not in PROMPT_CLIENTS:
        raise UsageError(f"KV Switch's ledger names an unknown memory file target {target_id!r}")
    return MemoryFileTarget(client, memory_file(client, env))
