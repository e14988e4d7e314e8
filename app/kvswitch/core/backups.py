"""Copies of every file KV Switch is about to change, the last N per file.

Backups can hold keys, so they are 0600 in a 0700 directory. Each file gets its own folder named after
its path (readable, plus a short hash so two paths never collide).
"""

from __future__ import annotations

import hashlib
import re
import time
from pathlib import Path

from kvswitch.core.errors import FileAccessError
from kvswitch.core.fsutil import atomic_write

DEFAULT_KEEP = 10
#: the file's state before KV Switch's first write; not a ``*.bak``, so rotation never prunes it
ORIGINAL_NAME = "original.kept"


class BackupStore:
    """Keeps the last ``keep`` backups of each file under ``root``."""

    def __init__(self, root: Path, keep: int = DEFAULT_KEEP):
        self.root = root
        self.keep = max(1, keep)

    def folder_for(self, location: str) -> Path:
        digest = hashlib.sha256(location.encode("utf-8", "surrogateescape")).hexdigest()[:10]
        readable = re.sub(r"[^A-Za-z0-9._-]+", "_", location).strip("_")[-60:] or "file"
        return self.root / f"{readable}-{digest}"

    def save(self, location: str, content: bytes, keep_also: frozenset[str] = frozenset()) -> Path:
        """Store ``content`` as the newest backup of ``location``; returns the backup file.

        Pruning never deletes a backup named in ``keep_also`` (the ones an undo still needs).
        """
        folder = self.folder_for(location)
        self._ensure_private_dir(folder)
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        existing = self.list(location)
        seq = 0
        if existing:
            match = re.search(r"-(\d+)\.bak$", existing[-1].name)
            seq = int(match.group(1)) + 1 if match else len(existing)
        path = folder / f"{stamp}-{seq:06d}.bak"
        atomic_write(path, content, secret=True)
        self._prune(location, keep_also)
        return path

    def save_original(self, location: str, content: bytes) -> Path:
        """Keep ``content`` for good as the state of ``location`` before KV Switch first wrote it.

        Written once: an existing original is never replaced (it is older than anything now).
        """
        folder = self.folder_for(location)
        self._ensure_private_dir(folder)
        path = folder / ORIGINAL_NAME
        if not path.exists():
            atomic_write(path, content, secret=True)
        return path

    def list(self, location: str) -> list[Path]:
        """Backups of ``location``, oldest first."""
        folder = self.folder_for(location)
        if not folder.is_dir():
            return []
        return sorted(folder.glob("*.bak"), key=lambda p: p.name.split("-")[-1])

    def _prune(self, location: str, keep_also: frozenset[str]) -> None:
        for old in self.list(location)[: -self.keep]:
            if str(old) not in keep_also:
                old.unlink(missing_ok=True)

    def _ensure_private_dir(self, folder: Path) -> None:
        for directory in (self.root, folder):
            try:
                directory.mkdir(parents=True, exist_ok=True)
                directory.chmod(0o700)
            except (FileExistsError, NotADirectoryError):
                raise FileAccessError(directory, "is a file where KV Switch keeps its backups folder; "
                                      "move it away and try again (nothing was changed)") from None
