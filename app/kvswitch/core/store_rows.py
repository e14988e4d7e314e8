"""A stored profile as the store keeps it: its JSON, and the ``Profile`` model only once asked for.

The window's cards need a name, a kind, a URL and a model; building pydantic models for them would
import pydantic before the first card shows. A ``Row`` holds the profile's canonical JSON (checked by
``core.quickread`` with the model's own rules, or dumped by the model when the file was in another
form) and builds the ``Profile`` on first use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kvswitch.core import quickread
from kvswitch.core.canonical import NotCanonical
from kvswitch.core.errors import ConfigParseError
from kvswitch.core.profile_rules import ProfileKind, url_password

if TYPE_CHECKING:
    from kvswitch.core.models import Profile

STORED = {"stored": True}
SECRETS = {"secrets": True}


@dataclass(frozen=True)
class ProfileSummary:
    """What a profile card shows, read without the engine models. ``key`` never shows in repr."""

    name: str
    kind: ProfileKind
    base_url: str
    model: str | None
    via_gateway: bool
    key: str = field(default="", repr=False)
    #: the target specs it is applied to (``claude``, ``codex``, ``claude-project:DIR``...): the
    #: window's client filter and the editor's fields follow them
    targets: tuple[str, ...] = ()

    @property
    def secrets(self) -> list[str]:
        """The key and a password in the base URL: what masking hides (as ``Profile.secrets``)."""
        return [s for s in (self.key, url_password(self.base_url)) if s]


class Row:
    """One profile of profiles.json."""

    __slots__ = ("_data", "_profile")

    def __init__(self, data: dict[str, Any] | None = None, profile: Profile | None = None):
        if data is None:
            assert profile is not None
            data = dump(profile)
        self._data = data
        self._profile = profile

    @classmethod
    def load(cls, item: Any, path: Path, number: int) -> Row:
        """The row for the file's ``number``-th item; ``ConfigParseError`` names the profile and field."""
        try:
            return cls(quickread.read_profile(item))
        except NotCanonical:
            pass
        from pydantic import ValidationError  # noqa: PLC0415 - only for a file in another form

        from kvswitch.core.models import Profile  # noqa: PLC0415

        try:
            # the store holds what the user saved, maybe before dangerous env needed a confirmation
            return cls(profile=Profile.model_validate(item, context=STORED))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            label = item.get("name") if isinstance(item, dict) else number
            raise ConfigParseError(path, f"profile {label!r}: {where}: {first['msg']}") from exc

    @property
    def name(self) -> str:
        return self._profile.name if self._profile is not None else str(self._data["name"])

    @property
    def profile(self) -> Profile:
        """The model (built once; mutate it only under the store's lock, then write)."""
        if self._profile is None:
            from kvswitch.core.models import Profile  # noqa: PLC0415 - the engine models load on first use

            self._profile = Profile.model_validate(self._data, context=STORED)
        return self._profile

    def dump(self) -> dict[str, Any]:
        """The JSON to write (from the model when it was built: it may have been changed)."""
        return dump(self._profile) if self._profile is not None else self._data

    def written(self) -> Row:
        """This row after a write: its JSON taken from the model again (the model is kept)."""
        return Row(self.dump(), self._profile)

    def summary(self) -> ProfileSummary:
        data = self.dump()
        return ProfileSummary(name=data["name"], kind=ProfileKind(data["kind"]), base_url=data["base_url"],
                              model=data["model"], via_gateway=bool(data["via_gateway"]),
                              key=data["api_key"] or "", targets=tuple(data.get("targets") or ()))


def dump(profile: Profile) -> dict[str, Any]:
    return profile.model_dump(mode="json", context=SECRETS, exclude_defaults=False)


def active_profile_name(state_file: Path) -> str | None:
    """The profile last applied, from the ledger (``None`` when none, or when the ledger is damaged)."""
    try:
        return quickread.read_ledger(state_file)["active"]
    except NotCanonical:
        pass
    from kvswitch.core.ledger import Ledger  # noqa: PLC0415

    try:
        return Ledger(state_file).load().active
    except ConfigParseError:
        return None


def has_undo_history(state_file: Path) -> bool:
    """Whether the ledger records an apply that undo can walk back (the engine's own test)."""
    try:
        return bool(quickread.read_ledger(state_file)["history"])
    except NotCanonical:
        pass
    from kvswitch.core.ledger import Ledger  # noqa: PLC0415

    return bool(Ledger(state_file).load().history)
