"""Where a skill is enabled: a symlink (or a copy) in a client's own skills folder.

Only what KV Switch put there is ever replaced or removed: its own symlink into its store, or a copy
whose files still have the digest recorded when it was copied. Anything else in a client's skills
folder is the user's and is left alone with a message that says so. A client skills folder that is a
symlink to a place outside the user's home is never written through.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Mapping
from pathlib import Path

from kvswitch.core.paths import home_dir
from kvswitch.core.skills import Enabled, SkillError, client_skill_dir, tree_digest

TEMP_MARK = ".kvswitch-tmp"


def writable_skill_dir(client: str, env: Mapping[str, str]) -> Path:
    """The client's skills folder, refusing one that is a symlink to outside the home folder."""
    folder = client_skill_dir(client, env)
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        real = Path(os.path.realpath(folder))
        home = Path(os.path.realpath(home_dir(env)))
        if not real.is_dir() and folder.exists():
            raise SkillError(f"{folder} is not a folder; move it away to enable skills for {client}")
        if not real.is_relative_to(home):
            raise SkillError(
                f"{folder} is a symlink to {real}, outside your home folder; KV Switch does not write "
                "through it. Make it a real folder (or link it inside your home) and try again; nothing "
                "was changed"
            )
    return folder


def points_to(entry: Path, store_copy: Path) -> bool:
    """Whether ``entry`` is KV Switch's symlink to ``store_copy``."""
    if not entry.is_symlink():
        return False
    return os.path.realpath(entry) == os.path.realpath(store_copy)


def is_ours(entry: Path, store_copy: Path, record: Enabled | None) -> bool:
    """Whether ``entry`` is exactly what KV Switch put there (its link, or its unchanged copy)."""
    if points_to(entry, store_copy):
        return True
    if record is None or record.how != "copy" or entry.is_symlink() or not entry.is_dir():
        return False
    return tree_digest(entry) == record.digest


def enable(name: str, store_copy: Path, client: str, env: Mapping[str, str], how: str,
           record: Enabled | None) -> tuple[Enabled, str]:
    """Put ``store_copy`` in ``client``'s skills folder; returns the record and what was done.

    ``how``: ``link``, ``copy``, or ``auto`` (a link, a copy where links cannot be made).
    """
    folder = writable_skill_dir(client, env)
    entry = folder / name
    if os.path.lexists(entry):
        if points_to(entry, store_copy):
            return Enabled("link", str(entry)), f"{entry}: already enabled (a link)"
        if record is not None and is_ours(entry, store_copy, record):
            return record, f"{entry}: already enabled (a copy)"
        raise SkillError(f"{entry} already holds a skill KV Switch did not put there (or one edited since); "
                         "it was left as it is. Rename or remove it yourself to enable this one")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SkillError(f"{folder}: cannot be created ({exc.strerror or exc})") from None
    if how in ("link", "auto"):
        try:
            _link(store_copy, entry)
            return Enabled("link", str(entry)), f"{entry} -> {store_copy}"
        except OSError as exc:
            if how == "link":
                raise SkillError(f"{entry}: a symlink cannot be made here ({exc.strerror or exc}); "
                                 "use --copy") from None
    _copy(store_copy, entry)
    return Enabled("copy", str(entry), tree_digest(entry)), f"{entry}: copied from {store_copy}"


def disable(entry: Path, store_copy: Path, record: Enabled | None, *, force: bool, keep_dir: Path) -> str:
    """Take KV Switch's link or copy out of a client's folder; a changed copy needs ``force`` and is
    then moved to ``keep_dir``, never deleted."""
    if not os.path.lexists(entry):
        return f"{entry}: not there (nothing to do)"
    if points_to(entry, store_copy):
        entry.unlink()
        return f"{entry}: link removed"
    if record is not None and record.how == "copy" and entry.is_dir() and not entry.is_symlink():
        if tree_digest(entry) == record.digest:
            _remove_tree(entry)
            return f"{entry}: copy removed"
        if not force:
            raise SkillError(f"{entry} was edited since KV Switch copied it there; nothing was removed. "
                             "Pass --force to move it aside (it is kept, not deleted)")
        kept = keep_aside(entry, keep_dir)
        return f"{entry}: edited copy moved to {kept}"
    raise SkillError(f"{entry} was not put there by KV Switch; it was left as it is")


def keep_aside(folder: Path, keep_dir: Path) -> Path:
    """Move ``folder`` into ``keep_dir`` under a dated name (how a forced change keeps the user's edit)."""
    keep_dir.mkdir(parents=True, exist_ok=True)
    kept = keep_dir / f"{folder.name}-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{os.getpid()}"
    try:
        shutil.move(str(folder), str(kept))
    except OSError as exc:
        raise SkillError(f"{folder}: cannot be moved to {kept} ({exc.strerror or exc}); "
                         "nothing was changed") from None
    return kept


def _link(store_copy: Path, entry: Path) -> None:
    temp = entry.with_name(f".{entry.name}{TEMP_MARK}")
    if os.path.lexists(temp):
        temp.unlink()
    os.symlink(store_copy, temp, target_is_directory=True)
    os.rename(temp, entry)  # atomic; refuses to replace a folder that appeared meanwhile


def _copy(store_copy: Path, entry: Path) -> None:
    temp = entry.with_name(f".{entry.name}{TEMP_MARK}")
    _remove_tree(temp)
    try:
        shutil.copytree(store_copy, temp, symlinks=True)
        os.rename(temp, entry)
    except OSError as exc:
        _remove_tree(temp)
        raise SkillError(f"{entry}: cannot be written ({exc.strerror or exc}); nothing was changed") from None


def _remove_tree(folder: Path) -> None:
    if folder.is_symlink():
        folder.unlink()
    elif folder.exists():
        shutil.rmtree(folder)
