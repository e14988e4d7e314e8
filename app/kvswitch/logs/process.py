"""Log readers backed by a child process: a server KV Switch starts itself, or ``journalctl -f``.

A reader thread moves the child's merged stdout+stderr into a bounded queue so ``read_lines()`` never
blocks; when the queue is full the thread waits, which holds back the child (backpressure) instead of
growing memory. Stopping ends the child and everything it started (``process_tree``: its group, its
descendants, what carries the start's mark in its environment or still holds the output pipe, even after
leaving the group): SIGTERM, then SIGKILL once ``stop_timeout`` is over. The child is always reaped, so
no zombie is left behind, and the reader never waits on a pipe a leftover process keeps open: it polls
the pipe and gives up when told to, so ``stop()`` takes at most the grace plus a few seconds.
"""

from __future__ import annotations

import contextlib
import os
import queue
import select
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import IO

from kvswitch.logs import process_tree
from kvswitch.logs.text import MAX_LINE_BYTES, LineSplitter

QUEUE_LINES = 50_000
#: the grace between SIGTERM and SIGKILL
STOP_TIMEOUT = 5.0
#: after the processes are ended, how long the reader may take to reach the end of their output
DRAIN_TIMEOUT = 2.0
#: how often the reader looks up from a quiet pipe (or a full queue) to see whether it should stop
_POLL_SECONDS = 0.2


class ProcessSource:
    """Starts ``command`` (a list, never through a shell) and yields its output lines."""

    def __init__(self, command: Sequence[str], *, env: Mapping[str, str] | None = None,
                 cwd: str | None = None, stop_timeout: float = STOP_TIMEOUT) -> None:
        self.command = list(command)
        self.stop_timeout = stop_timeout
        self.status = "not started"
        self._queue: queue.Queue[str | None] = queue.Queue(maxsize=QUEUE_LINES)
        self._process: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._closing = threading.Event()
        self._mark = process_tree.new_mark()
        self._pipe_inode: int | None = None
        self._start(env, cwd)

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def _start(self, env: Mapping[str, str] | None, cwd: str | None) -> None:
        if not self.command:
            self.status = "cannot start: the command is empty"
            return
        program = self.command[0]
        shown = shlex.join(self.command)
        child_env = dict(env if env is not None else os.environ)
        child_env[process_tree.MARK_VARIABLE] = self._mark  # how its escaped descendants are found
        try:
            self._process = subprocess.Popen(  # noqa: S603 - an argv list the user stored, no shell
                self.command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=child_env,
                cwd=cwd,
                start_new_session=sys.platform != "win32",
            )
        except FileNotFoundError:
            self.status = f"cannot start: command not found: {program}"
            return
        except PermissionError:
            self.status = f"cannot start: permission denied: {program}"
            return
        except OSError as exc:
            self.status = f"cannot start {program}: {exc.strerror or exc}"
            return
        self.status = f"running (pid {self._process.pid}): {shown}"
        if self._process.stdout is not None:
            with contextlib.suppress(OSError):
                self._pipe_inode = os.fstat(self._process.stdout.fileno()).st_ino
        self._thread = threading.Thread(
            target=self._pump, name=f"log-reader-{self._process.pid}", daemon=True
        )
        self._thread.start()

    def _pump(self) -> None:
        assert self._process is not None
        stream = self._process.stdout
        assert stream is not None
        splitter = LineSplitter()
        try:
            for data in self._chunks(stream):
                for line in splitter.feed(data):
                    if not self._put(line):
                        return
            for line in splitter.finish():
                if not self._put(line):
                    return
        except (OSError, ValueError):
            pass  # the pipe was closed while stopping
        finally:
            self._put(None)

    def _chunks(self, stream: IO[bytes]) -> Iterator[bytes]:
        """The pipe's data until its end, or until ``stop()`` gives up on it (a process it could not end
        still holds the pipe's other end): a blocking read there would never return."""
        if sys.platform == "win32":  # no poll() on pipes: the blocking read (stop leaves it to the daemon)
            reader = getattr(stream, "read1", stream.read)
            while data := reader(MAX_LINE_BYTES):
                yield data
            return
        fd = stream.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        while not self._closing.is_set():
            if not poller.poll(_POLL_SECONDS * 1000):
                continue
            data = os.read(fd, MAX_LINE_BYTES)
            if not data:
                return
            yield data

    def _put(self, item: str | None) -> bool:
        """Queue ``item``, waiting while the queue is full (backpressure); False once stopping gave up."""
        while True:
            try:
                self._queue.put(item, timeout=_POLL_SECONDS)
                return True
            except queue.Full:
                if self._closing.is_set():
                    return False

    def read_lines(self) -> list[str]:
        lines: list[str] = []
        ended = False
        while len(lines) < QUEUE_LINES:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is None:
                ended = True
                break
            lines.append(item)
        if ended or (self._process is not None and self._thread is not None and not self._thread.is_alive()):
            self._update_exit_status()
        return lines

    def _update_exit_status(self) -> None:
        if self._process is None:
            return
        try:
            code = self._process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return  # output closed but the process lives on (it closed its stdout)
        if self._stopping:
            self.status = f"stopped (exit code {code})"
        else:
            self.status = f"process exited (code {code})"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def stop(self) -> int | None:
        """End the child and all it started (SIGTERM, SIGKILL after ``stop_timeout``); its exit code.

        Bounded: at most ``stop_timeout`` plus ``process_tree.KILL_WAIT`` and ``DRAIN_TIMEOUT``, whatever
        the child's processes do (leave the group, ignore SIGTERM, keep the pipe open).
        """
        process = self._process
        if process is None:
            return None
        self._stopping = True
        self._end_all(process)
        code = process.wait()
        self._end_reading()
        self.status = f"stopped (exit code {code})"
        return code

    def _end_all(self, process: subprocess.Popen[bytes]) -> None:
        group = process.pid if sys.platform != "win32" else None
        # found before any signal: a descendant is still attached to its parent now, not after
        found = process_tree.find(process.pid, self._mark, None)
        reaped = process.returncode is not None  # reaped already (it ended by itself): the group may be gone
        process_tree.signal_all(found, process_tree.live_group(group, reaped, found), signal.SIGTERM)
        if group is None and process.poll() is None:
            process.terminate()
        deadline = time.monotonic() + self.stop_timeout
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=self.stop_timeout)
        left = process_tree.wait_gone(found, deadline - time.monotonic())
        # whatever did not end, and whatever was started (or escaped) meanwhile; the holders of the
        # output pipe are looked for only when its end has not come (someone still writes to it)
        if self._thread is not None:
            self._thread.join(timeout=_POLL_SECONDS)
        still_written = self._thread is not None and self._thread.is_alive()
        left |= process_tree.find(None, self._mark, self._pipe_inode if still_written else None)
        group = process_tree.live_group(group, process.returncode is not None, left)
        process_tree.signal_all(left, group, process_tree.kill_signal())
        if process.poll() is None:
            process.kill()
        process.wait()
        process_tree.wait_gone(left, process_tree.KILL_WAIT)

    def _end_reading(self) -> None:
        """Let the reader take the last output, then stop it; the pipe is closed only once nobody reads
        it (closing a pipe another thread reads blocks until that read returns)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout=DRAIN_TIMEOUT)
            self._closing.set()
            thread.join(timeout=2 * _POLL_SECONDS + 1.0)
        stdout = self._process.stdout if self._process is not None else None
        if stdout is not None and (thread is None or not thread.is_alive()):
            with contextlib.suppress(OSError):
                stdout.close()

    def close(self) -> None:
        self.stop()


class JournaldSource(ProcessSource):
    """``journalctl -f -o cat -u UNIT``: servers installed as systemd services."""

    def __init__(self, unit: str, *, tail_lines: int = 200, journalctl: str | None = None) -> None:
        self.unit = unit
        program = journalctl or shutil.which("journalctl")
        if program is None:
            self.command = []
            self.status = "journalctl not found: this system has no systemd journal to follow"
            self._queue = queue.Queue(maxsize=1)
            self._process = None
            self._thread = None
            self._stopping = False
            self._closing = threading.Event()
            self._mark = ""
            self._pipe_inode = None
            self.stop_timeout = STOP_TIMEOUT
            return
        super().__init__([program, "-f", "-o", "cat", "-n", str(max(tail_lines, 0)), "-u", unit])
        if self.running:
            self.status = f"following journal of {unit}"

    def _update_exit_status(self) -> None:
        super()._update_exit_status()
        if self.status.startswith("process exited"):
            self.status = f"journalctl for {self.unit} ended: {self.status}"
