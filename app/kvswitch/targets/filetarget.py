"""A ``Target`` for one structured file, built on the key merge in ``keyed``.

Subclasses say how to parse and render the file and which keys a profile wants; this class does the
reading (every failure mode named), planning, atomic writing and restoring.
"""

from __future__ import annotations

import os
from abc import abstractmethod
from pathlib import Path

from kvswitch.core.envmap import NO_KEY_PLACEHOLDER
from kvswitch.core.errors import ConfigParseError, FileAccessError
from kvswitch.core.fsutil import atomic_delete, atomic_write, read_bytes, resolve_for_write
from kvswitch.core.ledger import digest_bytes
from kvswitch.core.models import Profile, url_password
from kvswitch.targets.base import Plan, Snapshot, Target, file_snapshot
from kvswitch.targets.keyed import (
    KeyedDocument,
    KeyPlan,
    TextCodec,
    is_secret_key,
    plan_keys,
    revert_keys,
)


class StructuredFileTarget(Target):
    """One JSON/TOML file KV Switch merges keys into."""

    #: files holding keys are forced to 0600 on every write
    secret_file = False

    def __init__(self, path: Path, target_id: str):
        self.path = path
        self.target_id = target_id

    # -- subclass hooks ----------------------------------------------------------------------------
    @abstractmethod
    def parse(self, text: str) -> KeyedDocument:
        """Parse decoded text; raise ``ConfigParseError`` naming ``self.path`` and line/column."""

    @abstractmethod
    def render(self, doc: KeyedDocument, original: str) -> str:
        """Serialise ``doc`` in the style of ``original`` (plain ``\\n`` text)."""

    @abstractmethod
    def desired(self, profile: Profile) -> dict[str, str]:
        """The dotted keys this profile wants in the file, with their values."""

    def extra_warnings(self, doc: KeyedDocument) -> list[str]:
        """Problems in the file the user should know about (not fixed by us)."""
        return []

    def profile_secrets(self, profile: Profile) -> list[str]:
        return profile.secrets

    # -- Target ------------------------------------------------------------------------------------
    def location(self) -> str:
        return str(self.path)

    def read_raw(self) -> bytes | None:
        return read_bytes(self.path)  # refuses directories, FIFOs, devices and sockets

    def snapshot(self) -> Snapshot:
        return file_snapshot(self.target_id, self.path, self.read_raw())

    def load(self, raw: bytes | None) -> tuple[TextCodec, str, KeyedDocument]:
        """Decode and parse ``raw`` (``None`` = absent, which parses as an empty document)."""
        codec = TextCodec(raw)
        if raw is None:
            return codec, "", self.parse("")
        try:
            text = codec.decode(raw)
        except UnicodeDecodeError as exc:
            raise ConfigParseError(self.path, f"not UTF-8 text (byte {exc.start}); save it as UTF-8") from exc
        return codec, text, self.parse(text)

    def plan(self, profile: Profile | None, owned: dict[str, str]) -> Plan:
        raw = self.read_raw()
        codec, text, doc = self.load(raw)
        desired = self.desired(profile) if profile is not None else {}
        result = plan_keys(doc, desired, owned, file_existed=raw is not None)
        plan = self._finish(raw, codec, text, doc, result)
        plan.warnings[:0] = self.extra_warnings(doc)
        if profile is not None:
            plan.secrets.extend(s for s in self.profile_secrets(profile) if s not in plan.secrets)
        return plan

    def plan_revert(
        self, before: bytes | None, before_owned: dict[str, str], after_owned: dict[str, str]
    ) -> Plan:
        """Undo an apply key by key, keeping what the user edited since (see ``keyed.revert_keys``)."""
        raw = self.read_raw()
        codec, text, doc = self.load(raw)
        _, _, old = self.load(before)
        result = revert_keys(doc, old, before_owned, after_owned)
        if before is not None:
            result.remove_file = False
        return self._finish(raw, codec, text, doc, result)

    def _finish(
        self, raw: bytes | None, codec: TextCodec, text: str, doc: KeyedDocument, result: KeyPlan
    ) -> Plan:
        before = codec.encode_text(text) if raw is not None else ""
        if result.remove_file:
            after: str | None = None
        elif not result.changes:
            after = before if raw is not None else ""
        else:
            after = codec.encode_text(self.render(doc, text))
        plan = Plan(
            self.target_id,
            self.location(),
            before=before,
            after=after,
            changes=result.changes,
            warnings=result.warnings,
            owned=result.owned,
            secrets=result.secrets,
            existed=raw is not None,
            source_digest=digest_bytes(raw),
        )
        if raw is None and not result.changes:
            plan.after = None  # nothing to create
            plan.existed = False
        return plan

    def apply(self, plan: Plan) -> None:
        if not plan.changed:
            return
        check_unchanged(self.path, plan)
        if plan.after is None:
            atomic_delete(self.path)
        else:
            atomic_write(self.path, plan.after.encode("utf-8"), secret=self.keeps_secret(plan))

    def keeps_secret(self, plan: Plan) -> bool:
        """Whether the file ``plan`` writes is kept 0600: a key file, or one where KV Switch owns a
        credential."""
        return self.secret_file or holds_secret(plan.owned) or holds_url_password(plan.owned)

    def restore(self, snapshot: Snapshot) -> None:
        if snapshot.content is None:
            if resolve_for_write(self.path).exists():
                atomic_delete(self.path)
            return
        atomic_write(self.path, snapshot.content, mode=snapshot.mode, secret=self.secret_file)
        if snapshot.mode is not None and not self.secret_file:
            try:
                os.chmod(resolve_for_write(self.path), snapshot.mode)
            except OSError as exc:
                raise FileAccessError(self.path, exc.strerror or str(exc)) from exc


def holds_secret(owned: dict[str, str]) -> bool:
    """Whether the keys KV Switch owns in a file include a credential (then the file is kept 0600)."""
    return any(
        value and value != NO_KEY_PLACEHOLDER and not key.startswith("@") and is_secret_key(key)
        for key, value in owned.items()
    )


def check_unchanged(path: Path, plan: Plan) -> None:
    """Refuse to write ``plan`` when the file no longer holds the bytes it was computed from."""
    if plan.source_digest is None:
        return
    if digest_bytes(read_bytes(path)) != plan.source_digest:
        raise FileAccessError(
            path, "changed since KV Switch planned this change; nothing was written there, try again"
        )


def holds_url_password(owned: dict[str, str]) -> bool:
    """Whether a value KV Switch owns in a file is a URL carrying a password (``https://user:pw@host``):
    such a file is a secret like one holding a key, kept 0600."""
    return any(value and not key.startswith("@") and url_password(str(value)) is not None
               for key, value in owned.items())
