"""Atomic, symlink- and mode-preserving file I/O.

Users keep dotfiles as symlinks into a dotfiles repo and expect them to stay symlinks; files holding
keys must never be world-readable, not even for the instant between create and chmod. So every write
goes to a temp file created with the final mode in the directory of the *resolved* target, is fsynced,
and is renamed over the target; the directory is fsynced too so the rename survives a power cut.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import tempfile
from pathlib import Path

from kvswitch.core.errors import FileAccessError

SECRET_MODE = 0o600
DEFAULT_MODE = 0o644


#: the name ending of ``atomic_write``'s temp files, so that a crash's leftovers can be found and removed
TEMP_SUFFIX = ".kvswitch-tmp"
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_NOCTTY = getattr(os, "O_NOCTTY", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)


def resolve_for_write(path: Path) -> Path:
    """Return the real file a write to ``path`` must replace, following every symlink.

    A dangling symlink resolves to its (missing) target, so the link survives and the target is
    created. A loop is reported rather than followed forever.
    """
    try:
        return Path(os.path.realpath(path, strict=False)) if path.is_symlink() else path
    except OSError as exc:  # ELOOP from is_symlink on some platforms
        raise FileAccessError(path, _describe(exc)) from exc


#: the largest config file KV Switch reads (settings.json, config.toml, shell rc files, its own
#: profiles and ledger): real ones are kilobytes; a 2 GB sparse file is refused by its size, unread
MAX_CONFIG_BYTES = 16 << 20


def read_bytes(path: Path, limit: int = MAX_CONFIG_BYTES) -> bytes | None:
    """Read a file that may not exist yet; ``None`` means absent. Other failures are explained.

    Only a regular file is read: a FIFO would block forever and a device could stream without end,
    so the kind is checked before opening, and again on the open descriptor (``O_NONBLOCK`` keeps the
    open itself from hanging if a FIFO is swapped in between). A file over ``limit`` bytes is refused
    by its size before a byte is read (and one that grows past it while read is refused too).
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None  # missing, or a dangling link: written through the link
    except NotADirectoryError:
        raise FileAccessError(path, "a part of this path is a file, not a directory") from None
    except OSError as exc:
        raise FileAccessError(path, _describe(exc)) from exc
    require_regular(path, info.st_mode)
    require_size(path, info.st_size, limit)
    try:
        fd = os.open(path, os.O_RDONLY | _O_NONBLOCK | _O_NOCTTY | _O_BINARY)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise FileAccessError(path, _describe(exc)) from exc
    with os.fdopen(fd, "rb") as handle:
        opened = os.fstat(fd)
        require_regular(path, opened.st_mode)
        require_size(path, opened.st_size, limit)
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise FileAccessError(path, _describe(exc)) from exc
        require_size(path, len(data), limit)
        return data


def require_size(path: Path, size: int, limit: int) -> None:
    """Refuse a file larger than ``limit`` bytes, naming it, its size and the limit."""
    if size > limit:
        raise FileAccessError(
            path,
            f"is {_mib(size)}, larger than the {_mib(limit)} KV Switch reads for a config file; "
            "it was not read (is it the right file?)",
        )


def _mib(size: int) -> str:
    return f"{size / (1 << 20):,.1f} MiB" if size >= 1 << 20 else f"{size:,} bytes"


def require_regular(path: Path, mode: int) -> None:
    """Refuse anything but a regular file: a device, FIFO, socket or directory is never read or replaced."""
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise FileAccessError(path, "is a directory, expected a file")
    kind = (
        "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
        else "a character device" if stat.S_ISCHR(mode)
        else "a block device" if stat.S_ISBLK(mode)
        else "a socket" if stat.S_ISSOCK(mode)
        else "not a regular file"
    )
    where = "" if not os.path.islink(path) else f" (through the symlink, at {os.path.realpath(path)})"
    raise FileAccessError(
        path, f"is {kind}{where}; KV Switch reads and writes only regular files, so it left it alone"
    )


def atomic_write(path: Path, data: bytes, *, mode: int | None = None, secret: bool = False) -> Path:
    """Replace ``path`` with ``data`` atomically; returns the real file written.

    Args:
        path: the file as the user names it (may be a symlink).
        data: the complete new content.
        mode: permission bits for a new file; an existing file keeps its own mode and owner.
        secret: the file holds a key: force 0600 whatever the old mode was.
    """
    target = resolve_for_write(path)
    old = _existing(path, target)
    if old is not None:
        _check_replaceable(path, target, old)
        final_mode = SECRET_MODE if secret else stat.S_IMODE(old.st_mode)
    else:
        final_mode = SECRET_MODE if secret else (mode if mode is not None else DEFAULT_MODE)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FileAccessError(target.parent, _describe(exc)) from exc
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=TEMP_SUFFIX, dir=target.parent)
    except OSError as exc:
        raise FileAccessError(target.parent, _describe(exc)) from exc
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            if sys.platform != "win32":
                os.fchmod(handle.fileno(), final_mode)
                if old is not None and _is_root():
                    with contextlib.suppress(OSError):
                        os.fchown(handle.fileno(), old.st_uid, old.st_gid)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if sys.platform == "win32":
            os.chmod(tmp, final_mode)  # Windows maps this to the read-only attribute only
        # rename(2) replaces a device or FIFO entry as happily as a file: look again right before it
        _existing(path, target)
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise FileAccessError(path, _describe(exc)) from exc
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(target.parent)
    return target


def _existing(path: Path, target: Path) -> os.stat_result | None:
    """The stat of the real file about to be replaced (``None``: absent); refuses non-regular files."""
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise FileAccessError(path, _describe(exc)) from exc
    if stat.S_ISLNK(info.st_mode):  # realpath gives up on a loop and hands back a link
        raise FileAccessError(path, "symlink loop")
    require_regular(path, info.st_mode)
    return info


def _check_replaceable(path: Path, target: Path, old: os.stat_result) -> None:
    """Refuse a read-only file and a hard-linked one instead of replacing them.

    A file without its owner's write bit was made read-only on purpose (even root respects that, and
    so does a file that is to hold a key). A rename gives a file with hard links a new inode: the other
    names would silently keep the old content, so such a file is refused too; a symlink does not have
    this problem and is what to use instead.
    """
    if not old.st_mode & stat.S_IWUSR or (not os.access(target, os.W_OK) and not _is_root()):
        raise FileAccessError(path, "file is read-only; make it writable or remove this target")
    if old.st_nlink > 1:
        raise FileAccessError(
            path,
            f"has {old.st_nlink} hard links; replacing it would leave the other names with the old "
            "content. Replace the extra links with symlinks (or copies) and try again",
        )


def remove_temp_files(path: Path) -> None:
    """Delete the temp files a killed ``atomic_write`` left beside ``path`` (never ``path`` itself)."""
    try:
        real = Path(os.path.realpath(path))
        for leftover in {
            *path.parent.glob(f".{path.name}.*{TEMP_SUFFIX}"),
            *real.parent.glob(f".{real.name}.*{TEMP_SUFFIX}"),
        }:
            if stat.S_ISREG(os.lstat(leftover).st_mode):  # ours are regular files; leave anything else
                leftover.unlink(missing_ok=True)
    except OSError:
        pass


def atomic_delete(path: Path) -> None:
    """Remove the real file behind ``path`` (a symlink itself is left dangling, as the user made it)."""
    target = resolve_for_write(path)
    if _existing(path, target) is None:
        return
    try:
        target.unlink()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise FileAccessError(path, _describe(exc)) from exc
    fsync_dir(target.parent)


def fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable (no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def _is_root() -> bool:
    return sys.platform != "win32" and os.geteuid() == 0


def _describe(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.EISDIR:
        return "is a directory, expected a file"
    if exc.errno == errno.ENOSPC:
        return "no space left on device"
    if exc.errno == errno.EROFS:
        return "read-only file system"
    return exc.strerror or str(exc)
