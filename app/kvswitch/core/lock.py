"""One applier at a time across processes (the window and the CLI share the same files).

An OS file lock (``flock`` / ``msvcrt.locking``) rather than a pid file: the kernel drops it when the
holder dies, even on SIGKILL, so a crash never leaves the user locked out.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path
from types import TracebackType

from kvswitch.core.errors import FileAccessError, LockedError

POLL_SECONDS = 0.05


class FileLock:
    """Exclusive lock on ``path``; waits up to ``timeout`` seconds, then raises ``LockedError``.

    Use as a context manager. Not re-entrant: one holder per open, even inside one process.
    """

    def __init__(self, path: Path, timeout: float = 10.0, what: str = "applying a profile"):
        self.path = path
        self.timeout = timeout
        self.what = what
        self._fd: int | None = None

    def acquire(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise FileAccessError(self.path, exc.strerror or str(exc)) from exc
        deadline = time.monotonic() + max(self.timeout, 0.0)
        while True:
            if _try_lock(fd):
                break
            if time.monotonic() >= deadline:
                holder = _read_holder(fd)
                os.close(fd)
                who = f" (pid {holder})" if holder else ""
                raise LockedError(
                    f"another KV Switch process{who} is {self.what}; try again when it has finished "
                    f"(lock: {self.path})"
                )
            time.sleep(POLL_SECONDS)
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, str(os.getpid()).encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        _unlock(fd)
        os.close(fd)

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def _read_holder(fd: int) -> str:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        return os.read(fd, 32).decode(errors="replace").strip()
    except OSError:
        return ""


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        with contextlib.suppress(OSError):
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
