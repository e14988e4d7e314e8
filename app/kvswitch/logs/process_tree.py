"""Ending a child KV Switch started and everything it started in turn, including what left its group.

Signalling the child's process group is not enough: a wrapper script can ``setsid`` a worker into a
session of its own, a server can double-fork a daemon that keeps the port, and a grandchild can ignore
SIGTERM. Any of these kept the output pipe or the port alive after the stop, so the next start found the
port taken, and a reader closing the pipe waited for good. So the processes to end are found three ways,
each from facts the OS keeps, never from names: the descendants still attached to the child (found
before the signal, while they are attached), the processes that carry the start's mark in their
environment (inherited by every descendant unless it scrubs its environment), and, on Linux, the
processes that still hold the output pipe. Each gets SIGTERM, then SIGKILL once the grace is over.
Only this user's processes can be found or signalled, and this process is never among them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
import uuid
from collections.abc import Iterable

import psutil

#: the environment variable that marks every process of one start (its value is unique to the start)
MARK_VARIABLE = "KVSWITCH_PROCESS_MARK"
#: after SIGKILL, how long the killed processes may take to disappear
KILL_WAIT = 2.0
_GONE = (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, ProcessLookupError,
         PermissionError)


def new_mark() -> str:
    return uuid.uuid4().hex


def _descendants(pid: int) -> set[psutil.Process]:
    with contextlib.suppress(*_GONE):
        return set(psutil.Process(pid).children(recursive=True))
    return set()


def _marked_or_holding(mark: str | None, inode: int | None) -> set[psutil.Process]:
    """In one pass over this user's processes (others' cannot be read: skipped): those whose environment
    carries ``mark``, and on Linux those with the pipe ``inode`` open — a leftover writer keeps the
    reader from ever seeing the end of the output."""
    pipe = f"pipe:[{inode}]" if inode is not None and sys.platform.startswith("linux") else None
    found: set[psutil.Process] = set()
    me = os.getpid()
    for process in psutil.process_iter():
        if process.pid == me:
            continue
        with contextlib.suppress(*_GONE, OSError):
            if mark and process.environ().get(MARK_VARIABLE) == mark:
                found.add(process)
                continue
            if pipe is not None:
                folder = f"/proc/{process.pid}/fd"
                if any(_readlink(f"{folder}/{fd}") == pipe for fd in os.listdir(folder)):
                    found.add(process)
    return found


def _readlink(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""


def find(pid: int | None, mark: str | None, pipe_inode: int | None) -> set[psutil.Process]:
    """Every process of the start that is still running (the child itself excluded: it is reaped by
    its ``Popen``)."""
    found: set[psutil.Process] = set()
    if pid is not None:
        found |= _descendants(pid)
    if mark or pipe_inode is not None:
        found |= _marked_or_holding(mark, pipe_inode)
    return {p for p in found if p.pid != pid and _running(p)}


def _running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except _GONE:
        return False


def live_group(group: int | None, leader_reaped: bool, processes: Iterable[psutil.Process]) -> int | None:
    """``group`` while it certainly still exists (its leader not yet reaped, or one of ``processes`` in
    it): once the group is empty its number may be reused, and a signal to it would hit strangers."""
    if group is None or sys.platform == "win32":
        return None
    if not leader_reaped:
        return group
    for process in processes:
        with contextlib.suppress(*_GONE, OSError):
            if os.getpgid(process.pid) == group:
                return group
    return None


def signal_all(processes: Iterable[psutil.Process], group: int | None, sig: int) -> None:
    """``sig`` to the child's process group and to each process (psutil checks each is still the
    process that was found, so a reused pid is never signalled)."""
    if group is not None and sys.platform != "win32" and group != os.getpgrp():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, sig)
    for process in processes:
        with contextlib.suppress(*_GONE):
            process.send_signal(sig)


def wait_gone(processes: Iterable[psutil.Process], timeout: float) -> set[psutil.Process]:
    """The processes still running after ``timeout`` seconds (a zombie waiting for a parent that is
    not this process counts as gone: it holds neither a pipe nor a port)."""
    alive = {p for p in processes if _running(p)}
    deadline = time.monotonic() + timeout
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)  # other processes ending: nothing to read, only to look again
        alive = {p for p in alive if _running(p)}
    return alive


def kill_signal() -> int:
    return signal.SIGKILL if sys.platform != "win32" else signal.SIGTERM
