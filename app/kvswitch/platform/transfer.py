"""Export profiles to a file and import them back (to move to another machine, or to share a setup).

Keys leave the machine only when the user says so: without consent the export has no key at all (not
a masked one, which would import as a wrong key) and lists the profiles whose key was left out. With
keys the file is created 0600, like the store itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from kvswitch import __version__
from kvswitch.core.errors import ConfigParseError, FileAccessError, ProfileError, UsageError
from kvswitch.core.fsutil import atomic_write, read_bytes
from kvswitch.core.models import Profile, strip_url_password, url_password
from kvswitch.core.strictparse import loads_json
from kvswitch.platform.importers import confirmed_imports, review_import

FORMAT = "kvswitch-profiles"
FORMAT_VERSION = 1


class ProfileSource(Protocol):
    def profiles(self) -> list[Profile]: ...


class ProfileSink(ProfileSource, Protocol):
    def add(self, profile: Profile) -> None: ...


@dataclass
class ImportReport:
    """What an import did: profiles added (by their final name), renamed ones, and those without key."""

    added: list[str] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)
    without_key: list[str] = field(default_factory=list)

    def summary(self) -> str:
        names = f": {', '.join(self.added)}" if self.added else ""
        lines = [f"imported {len(self.added)} profile(s){names}"]
        lines += [f"  {old!r} already existed, imported as {new!r}" for old, new in self.renamed.items()]
        if self.without_key:
            lines.append(f"  no API key in the file for: {', '.join(self.without_key)} (enter it before use)")
        return "\n".join(lines)


def export_profiles(store: ProfileSource, path: Path, include_keys: bool = False) -> Path:
    """Write every profile to ``path`` as JSON; keys only with ``include_keys`` (file then 0600)."""
    profiles = store.profiles()
    entries: list[dict[str, Any]] = []
    omitted: list[str] = []
    for profile in profiles:
        data = profile.model_dump(mode="json", context={"secrets": True})
        if not include_keys and data.get("api_key"):
            omitted.append(profile.name)
        if not include_keys:
            data["api_key"] = None
            if url_password(profile.base_url):  # a password in the URL is a key too
                data["base_url"] = strip_url_password(profile.base_url)
                if profile.name not in omitted:
                    omitted.append(profile.name)
        entries.append(data)
    document = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "exported_by": f"KV Switch {__version__}",
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "includes_keys": include_keys,
        "keys_omitted": omitted,
        "profiles": entries,
    }
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return atomic_write(Path(path), text.encode("utf-8"), secret=include_keys)


def read_export(path: Path) -> list[Profile]:
    """Profiles from an export (or from a KV Switch ``profiles.json``), validated."""
    path = Path(path)
    raw = read_bytes(path)
    if raw is None:
        raise FileAccessError(path, "no such file")
    try:
        document = loads_json(path, raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        raise ConfigParseError(path, f"not a KV Switch profiles file: {exc}", line) from None
    if not isinstance(document, dict) or not isinstance(document.get("profiles"), list):
        raise ConfigParseError(path, "not a KV Switch profiles file (no 'profiles' list)")
    version = document.get("format_version", FORMAT_VERSION)
    if document.get("format", FORMAT) != FORMAT or not isinstance(version, int) or version > FORMAT_VERSION:
        raise ConfigParseError(path, "written by a newer or different program; upgrade KV Switch to read it")
    profiles = []
    for index, entry in enumerate(document["profiles"], start=1):
        if not isinstance(entry, dict):
            raise ConfigParseError(path, f"profile #{index} is not an object")
        try:  # dangerous env is reviewed by ``import_profiles``; the file's own "allowed" never counts
            checked = Profile.model_validate({**entry, "allow_dangerous_env": True})
            profiles.append(checked.model_copy(update={"allow_dangerous_env": False}))
        except ValidationError as exc:
            name = entry.get("name", f"#{index}")
            problems = "; ".join(f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in exc.errors())
            raise ProfileError(f"{path}: profile {name!r} is invalid: {problems}") from None
    return profiles


def import_profiles(store: ProfileSink, path: Path, confirmed: bool = False) -> ImportReport:
    """Add every profile of an export to ``store``; a name already taken gets an ``(imported)`` suffix.

    Everything is validated before the first profile is added, so a bad file adds nothing. Profiles
    with dangerous env or project-folder targets need ``confirmed`` (the user saw ``review_import``).
    """
    incoming = read_export(path)
    review = review_import(incoming)
    if review.risky and not confirmed:
        raise UsageError(
            f"{path}: nothing was imported: {', '.join(map(repr, review.risky))} set dangerous env names "
            f"or write into project folders:\n{review.text()}\nimport only if you trust this file "
            "(kvswitch import-profiles --yes)"
        )
    incoming = confirmed_imports(incoming)
    taken = {profile.name.casefold() for profile in store.profiles()}
    report = ImportReport()
    for profile in incoming:
        name = _free_name(profile.name, taken)
        if name != profile.name:
            report.renamed[profile.name] = name
            profile = profile.model_copy(update={"name": name})
        taken.add(name.casefold())
        store.add(profile)
        report.added.append(name)
        if profile.api_key is None and not profile.is_local:
            report.without_key.append(name)
    return report


def _free_name(name: str, taken: set[str]) -> str:
    if name.casefold() not in taken:
        return name
    for counter in range(1, 1000):
        suffix = " (imported)" if counter == 1 else f" (imported {counter})"
        candidate = name[: 64 - len(suffix)] + suffix
        if candidate.casefold() not in taken:
            return candidate
    raise ProfileError(f"too many profiles named {name!r}; rename some before importing")
