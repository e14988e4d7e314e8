"""Install, enable, disable, update and remove skills, and discover every skill the clients can see.

An install fetches the source into a staging folder inside KV Switch's data folder, validates every
SKILL.md, and only then renames each skill into the store (``<data>/skills/NAME``) in one step; a
failure anywhere leaves the store and the clients' folders as they were. ``discover`` lists what the
clients' folders hold whoever put it there.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kvswitch.core.paths import AppPaths
from kvswitch.core.skills import (
    SKILL_FILE,
    Enabled,
    ManagedSkill,
    SkillError,
    SkillInfo,
    SkillManifest,
    client_skill_dir,
    read_skill_dir,
    readers_of,
    tree_digest,
)
from kvswitch.targets.skill_folders import disable, enable, keep_aside, points_to, writable_skill_dir
from kvswitch.targets.skill_sources import fetch, source_kind


@dataclass(frozen=True)
class FoundSkill:
    """One skill folder a client reads: ``owner`` is ``kvswitch-link``, ``kvswitch-copy`` or ``user``;
    ``problem`` is set (and ``info`` None) when its SKILL.md cannot be used."""

    name: str
    folder: str
    readers: tuple[str, ...]
    owner: str
    info: SkillInfo | None
    problem: str = ""


class SkillManager:
    """The skills of one user (``env`` locates the clients' folders)."""

    def __init__(self, paths: AppPaths, env: Mapping[str, str]):
        self.paths = paths
        self.env = env
        self.manifest = SkillManifest(paths)
        self.keep_dir = paths.data_dir / "skills-kept"

    def store_copy(self, name: str) -> Path:
        return self.manifest.store_dir / name

    # -- install / update --------------------------------------------------------------------------
    def install(self, source: str, *, kind: str | None = None, subpath: str = "",
                replace: bool = False) -> list[ManagedSkill]:
        """Fetch ``source`` and add every skill in it to the store (not yet enabled for any client)."""
        kind = source_kind(source, kind)
        where = source if kind == "git" else str(Path(source).expanduser().resolve())
        staging = self._staging()
        try:
            fetched = fetch(where, kind, staging, subpath)
            with self.manifest.editing() as skills:
                for item in fetched:
                    if item.info.name in skills and not replace:
                        raise SkillError(f"a skill named {item.info.name!r} is installed already; "
                                         "'kvswitch skill update' re-fetches it")
                    if item.info.name not in skills and self.store_copy(item.info.name).exists():
                        raise SkillError(f"{self.store_copy(item.info.name)} exists but is not in KV "
                                         "Switch's skill list; move it away first")
                added = []
                for item in fetched:
                    old = skills.get(item.info.name)
                    self._swap_in(item.folder, item.info.name, old, force=replace)
                    skill = ManagedSkill(item.info.name, item.info.description, where, kind, item.subpath,
                                         _now(), tree_digest(self.store_copy(item.info.name)),
                                         old.enabled if old else {})
                    skills[skill.name] = skill
                    added.append(skill)
                return added
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def update(self, name: str, *, force: bool = False) -> tuple[ManagedSkill, list[str]]:
        """Fetch the skill's source again; links follow at once, unchanged copies are refreshed."""
        staging = self._staging()
        notes: list[str] = []
        try:
            with self.manifest.editing() as skills:
                skill = self._managed(skills, name)
                fetched = fetch(skill.source, skill.kind, staging, skill.subpath)
                match = next((f for f in fetched if f.info.name == skill.name), None)
                if match is None:
                    raise SkillError(f"{skill.source} no longer holds a skill named {skill.name!r}; nothing "
                                     "was changed")
                copies = {c: e for c, e in skill.enabled.items() if e.how == "copy"}
                for record in copies.values():  # checked before anything moves
                    entry = Path(record.path)
                    if entry.exists() and tree_digest(entry) != record.digest and not force:
                        raise SkillError(f"{entry} was edited since KV Switch copied it; nothing was "
                                         "updated. Pass --force to keep that copy aside and refresh it")
                self._swap_in(match.folder, skill.name, skill, force=force)
                skill.description, skill.digest = match.info.description, tree_digest(self.store_copy(name))
                for client, record in copies.items():
                    notes.append(disable(Path(record.path), self.store_copy(name), record, force=force,
                                         keep_dir=self.keep_dir))
                    skill.enabled[client], done = enable(name, self.store_copy(name), client, self.env,
                                                         "copy", None)
                    notes.append(done)
                return skill, notes
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _swap_in(self, folder: Path, name: str, old: ManagedSkill | None, *, force: bool) -> None:
        """Rename ``folder`` to the store copy of ``name``; an old copy edited by hand needs ``force``
        and is then kept aside, never deleted."""
        target = self.store_copy(name)
        aside = None
        if target.exists():
            edited = old is not None and old.digest and tree_digest(target) != old.digest
            if edited and not force:
                raise SkillError(f"{target} (what the clients' links show) was edited since it was "
                                 "installed; nothing was changed. Pass --force to keep it aside and "
                                 "replace it")
            aside = target.with_name(f".{name}.old-{os.getpid()}")
            os.rename(target, aside)
            if edited:
                keep_aside(aside, self.keep_dir)
                aside = None
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(folder, target)
        if aside is not None:
            shutil.rmtree(aside, ignore_errors=True)

    # -- per client --------------------------------------------------------------------------------
    def enable(self, name: str, clients: list[str], how: str = "auto") -> list[str]:
        notes = []
        with self.manifest.editing() as skills:
            skill = self._managed(skills, name)
            for client in clients:
                skill.enabled[client], done = enable(name, self.store_copy(name), client, self.env, how,
                                                     skill.enabled.get(client))
                notes.append(done)
        return notes

    def disable(self, name: str, clients: list[str], *, force: bool = False) -> list[str]:
        notes = []
        with self.manifest.editing() as skills:
            skill = self._managed(skills, name)
            _refuse_edited_copies(skill, clients, force)
            for client in clients:  # a folder linked outside the home since: nothing is removed there
                writable_skill_dir(client, self.env)
            for client in clients:
                record = skill.enabled.get(client)
                entry = Path(record.path) if record else client_skill_dir(client, self.env) / name
                notes.append(disable(entry, self.store_copy(name), record, force=force,
                                     keep_dir=self.keep_dir))
                skill.enabled.pop(client, None)
        return notes

    def remove(self, name: str, *, force: bool = False) -> list[str]:
        """Disable everywhere, then delete KV Switch's copy (an edited one is kept aside with ``force``)."""
        notes = []
        with self.manifest.editing() as skills:
            skill = self._managed(skills, name)
            target = self.store_copy(name)
            if target.exists() and skill.digest and tree_digest(target) != skill.digest and not force:
                raise SkillError(f"{target} was edited since it was installed; nothing was removed. Pass "
                                 "--force to keep it aside")
            _refuse_edited_copies(skill, list(skill.enabled), force)
            for client in skill.enabled:
                writable_skill_dir(client, self.env)
            for client in list(skill.enabled):
                record = skill.enabled[client]
                notes.append(disable(Path(record.path), target, record, force=force, keep_dir=self.keep_dir))
                skill.enabled.pop(client)
            if target.exists():
                if skill.digest and tree_digest(target) != skill.digest:
                    notes.append(f"{target}: edited, moved to {keep_aside(target, self.keep_dir)}")
                else:
                    shutil.rmtree(target)
                    notes.append(f"{target}: removed")
            del skills[name]
        return notes

    # -- reading -----------------------------------------------------------------------------------
    def discover(self) -> list[FoundSkill]:
        """Every skill folder in every folder a client reads, then installed skills enabled nowhere."""
        managed = self.manifest.skills()
        found: list[FoundSkill] = []
        seen: set[str] = set()
        for folder, readers in readers_of(self.env).items():
            try:
                entries = sorted(folder.iterdir()) if folder.is_dir() else []
            except OSError as exc:
                found.append(FoundSkill("?", str(folder), readers, "user", None,
                                        f"cannot be listed ({exc.strerror or exc})"))
                continue
            for entry in entries:
                if entry.name.startswith(".") or not entry.is_dir():
                    continue
                if not (entry / SKILL_FILE).exists() and not entry.is_symlink():
                    continue
                found.append(self._found(entry, readers, managed))
                seen.add(entry.name)
        for name, skill in managed.items():
            if name not in seen:
                found.append(FoundSkill(name, str(self.store_copy(name)), (), "kvswitch-store",
                                        SkillInfo(name, skill.description)))
        return found

    def _found(self, entry: Path, readers: tuple[str, ...], managed: dict[str, ManagedSkill]) -> FoundSkill:
        skill = managed.get(entry.name)
        owner = "user"
        if skill is not None and points_to(entry, self.store_copy(entry.name)):
            owner = "kvswitch-link"
        elif skill is not None and any(e.path == str(entry) and e.how == "copy"
                                       for e in skill.enabled.values()):
            owner = "kvswitch-copy"
        try:
            return FoundSkill(entry.name, str(entry), readers, owner, read_skill_dir(entry))
        except (SkillError, OSError) as exc:
            return FoundSkill(entry.name, str(entry), readers, owner, None, str(exc))

    def _managed(self, skills: dict[str, ManagedSkill], name: str) -> ManagedSkill:
        skill = skills.get(name)
        if skill is None:
            known = ", ".join(sorted(skills)) or "none yet"
            raise SkillError(f"{name!r} is not a skill KV Switch installed (installed: {known}), so it "
                             "is left as it is; 'kvswitch skill list' shows every skill the clients see")
        return skill

    def _staging(self) -> Path:
        root = self.paths.data_dir / "skills-staging"
        root.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix="fetch-", dir=root))


def _refuse_edited_copies(skill: ManagedSkill, clients: list[str], force: bool) -> None:
    """Refuse before anything is touched when a copy among ``clients`` was edited (unless ``force``)."""
    for client in clients:
        record = skill.enabled.get(client)
        if force or record is None or record.how != "copy":
            continue
        entry = Path(record.path)
        if entry.is_dir() and not entry.is_symlink() and tree_digest(entry) != record.digest:
            raise SkillError(f"{entry} was edited since KV Switch copied it there; nothing was changed. "
                             "Pass --force to move it aside (it is kept, not deleted)")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


__all__ = ["Enabled", "FoundSkill", "SkillManager"]
