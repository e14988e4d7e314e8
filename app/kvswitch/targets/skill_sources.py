"""Bringing a skill in from a folder, a zip or a git repository, into a private staging folder.

Everything here is bounded and refuses rather than guesses: a zip entry that would land outside the
staging folder (zip-slip: ``../x``, ``/abs``, ``C:\\x``) or is a symlink, more than ``MAX_FILES`` files,
more than ``MAX_TREE_BYTES`` unpacked or a zip over ``MAX_ZIP_BYTES`` on disk; a source folder holding a
symlink; a git clone that takes longer than ``GIT_TIMEOUT_S``. Nothing is written outside the staging
folder the caller gives, and the caller moves a finished skill into the store in one rename.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from kvswitch.core.skills import SKILL_FILE, SkillError, SkillInfo, read_skill_dir

MAX_ZIP_BYTES = 50 << 20
MAX_TREE_BYTES = 100 << 20
MAX_FILES = 5000
GIT_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Fetched:
    """One skill found in a source, unpacked at ``folder`` (inside the staging folder)."""

    info: SkillInfo
    folder: Path
    subpath: str


def source_kind(source: str, forced: str | None = None) -> str:
    """``folder``, ``zip`` or ``git`` for ``source`` (``forced`` wins: ``--git`` on a local repo path)."""
    if forced:
        return forced
    if source.startswith(("file://", "https://", "http://", "ssh://", "git://", "git@")):
        return "git"
    path = Path(source).expanduser()
    if path.is_dir():
        return "git" if source.endswith(".git") else "folder"
    if path.is_file() and zipfile.is_zipfile(path):
        return "zip"
    if path.exists():
        raise SkillError(f"{source}: neither a folder, a zip archive nor a git repository")
    raise SkillError(f"{source}: no such folder or file")


def fetch(source: str, kind: str, staging: Path, subpath: str = "") -> list[Fetched]:
    """Put ``source`` into ``staging/tree`` and return the skills found there (at least one)."""
    tree = staging / "tree"
    try:
        if kind == "folder":
            _copy_tree(Path(source).expanduser(), tree)
        elif kind == "zip":
            _unzip(Path(source).expanduser(), tree)
        elif kind == "git":
            _clone(source, tree)
        else:
            raise SkillError(f"unknown source kind {kind!r}")
        return find_skills(tree, subpath, source)
    except OSError as exc:  # a source that vanished or cannot be read, a full disk
        where = exc.filename or source
        raise SkillError(f"{where}: {exc.strerror or exc}; nothing was installed") from None


def find_skills(tree: Path, subpath: str, source: str) -> list[Fetched]:
    """The skill at ``tree/subpath``, else the skills one level down (``x/SKILL.md``, ``skills/x/SKILL.md``).

    A zip whose only entry is a folder counts as that folder.
    """
    root = _inside(tree, subpath) if subpath else tree
    entries = [p for p in root.iterdir()] if root.is_dir() else []
    if not subpath and not (root / SKILL_FILE).exists() and len(entries) == 1 and entries[0].is_dir():
        root, subpath = entries[0], entries[0].name
    if (root / SKILL_FILE).is_file():
        return [Fetched(read_skill_dir(root), root, subpath)]
    found = []
    for base in (root, root / "skills"):
        if not base.is_dir():
            continue
        for child in sorted(base.iterdir()):
            if child.is_dir() and not child.is_symlink() and (child / SKILL_FILE).is_file():
                found.append(Fetched(read_skill_dir(child), child, str(child.relative_to(tree))))
    if not found:
        raise SkillError(f"{source}: no {SKILL_FILE} found (looked at its top, its folders and skills/*)")
    return found


def _inside(tree: Path, subpath: str) -> Path:
    parts = PurePosixPath(subpath.replace("\\", "/")).parts
    if not parts or ".." in parts or subpath.startswith(("/", "\\")):
        raise SkillError(f"--path {subpath!r} must be a folder inside the source")
    return tree.joinpath(*parts)


def _copy_tree(source: Path, tree: Path) -> None:
    """Copy regular files and folders; a symlink anywhere is refused (it could point anywhere)."""
    if not source.is_dir():
        raise SkillError(f"{source}: not a folder")
    files, total = 0, 0
    for root, dirs, names in os.walk(source, followlinks=False):
        rel = Path(root).relative_to(source)
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in [*dirs, *names]:
            path = Path(root) / name
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                raise SkillError(f"{path}: a symlink inside the skill; KV Switch copies only regular "
                                 "files and folders (replace the link by the file)")
            if stat.S_ISDIR(info.st_mode):
                continue
            if not stat.S_ISREG(info.st_mode):
                raise SkillError(f"{path}: not a regular file; nothing was installed")
            files, total = files + 1, total + info.st_size
            _check_bounds(files, total, source)
            (tree / rel).mkdir(parents=True, exist_ok=True)
            try:
                shutil.copyfile(path, tree / rel / name)
            except OSError as exc:
                raise SkillError(f"{path}: cannot be read ({exc.strerror or exc}); nothing was "
                                 "installed") from None


def _check_bounds(files: int, total: int, source: Path | str) -> None:
    if files > MAX_FILES:
        raise SkillError(f"{source}: more than {MAX_FILES:,} files; not a skill KV Switch installs")
    if total > MAX_TREE_BYTES:
        raise SkillError(f"{source}: more than {MAX_TREE_BYTES >> 20} MiB of files; not a skill KV Switch "
                         "installs")


def _unzip(archive: Path, tree: Path) -> None:
    """Unpack ``archive`` entry by entry, each checked before a byte is written."""
    size = archive.stat().st_size
    if size > MAX_ZIP_BYTES:
        raise SkillError(f"{archive}: {size:,} bytes; a skill archive may be at most "
                         f"{MAX_ZIP_BYTES >> 20} MiB; nothing was installed")
    try:
        with zipfile.ZipFile(archive) as zipped:
            members = zipped.infolist()
            if len(members) > MAX_FILES:
                raise SkillError(f"{archive}: {len(members):,} entries, more than {MAX_FILES:,}")
            declared = sum(m.file_size for m in members)
            _check_bounds(len(members), declared, archive)
            for member in members:
                target = _member_path(tree, member, archive)
                if member.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with zipped.open(member) as src, open(target, "wb") as dst:
                    copied = 0
                    while chunk := src.read(1 << 16):
                        copied += len(chunk)
                        if copied > member.file_size:  # a header that lies about the size
                            raise SkillError(f"{archive}: {member.filename!r} unpacks larger than it says")
                        dst.write(chunk)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError) as exc:
        raise SkillError(f"{archive}: not a readable zip archive ({exc})") from None
    except OSError as exc:
        raise SkillError(f"{archive}: cannot be unpacked ({exc.strerror or exc})") from None


def _member_path(tree: Path, member: zipfile.ZipInfo, archive: Path) -> Path:
    name = member.filename.replace("\\", "/")
    parts = PurePosixPath(name).parts
    if (not parts or name.startswith("/") or ".." in parts or ":" in parts[0]
            or any(p in ("", ".") for p in parts[:-1])):
        raise SkillError(f"{archive}: entry {member.filename!r} would be written outside the skill's "
                         "folder; the archive was refused and nothing was installed")
    if stat.S_ISLNK(member.external_attr >> 16):
        raise SkillError(f"{archive}: entry {member.filename!r} is a symlink; the archive was refused")
    return tree.joinpath(*parts)


def _clone(url: str, tree: Path) -> None:
    """``git clone --depth 1`` with no prompt, no hooks from templates, bounded in time."""
    if url.startswith("-") or url.startswith("ext::"):
        raise SkillError(f"{url!r} is not a repository address KV Switch clones")
    git = shutil.which("git")
    if git is None:
        raise SkillError("installing from a git repository needs git, which is not on PATH")
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "GIT_CONFIG_NOSYSTEM": "1"}
    command = [git, "-c", "protocol.ext.allow=never", "-c", "core.symlinks=false", "clone", "--depth", "1",
               "--quiet", "--no-tags", "--template=", "--", url, str(tree)]
    try:
        done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise SkillError(f"git clone of {url} took more than {GIT_TIMEOUT_S:.0f} s; nothing was "
                         "installed") from None
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no message"])[-1][:300]
        raise SkillError(f"git clone of {url} failed: {said}; nothing was installed")
    shutil.rmtree(tree / ".git", ignore_errors=True)
    files = total = 0
    for root, _dirs, names in os.walk(tree, followlinks=False):
        for name in names:
            files, total = files + 1, total + os.lstat(os.path.join(root, name)).st_size
        _check_bounds(files, total, url)
