"""Log readers backed by a child process: a server KV Switch starts itself, or ``journalctl -f``.

A reader thread moves the child's merged stdout+stderr into a bounded queue so ``read_lines()`` never
blocks; when the queue is full the thread waits, which holds back the child (backpressure) instead of
growing memory. Stopping sends SIGTERM to the child's process group, then SIGKILL after a timeout, and
always reaps the child, so no zombie is left behind.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shlex
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence

from kvswitch.logs.text import MAX_LINE_BYTES, LineSplitter

QUEUE_LINES = 50_000
STOP_TIMEOUT = 5.0


class ProcessSource:
    """Starts ``command`` (a list, never through a shell) and yields its output lines."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stop_timeout: float = STOP_TIMEOUT,
    ) -> None:
        self.command = list(command)
        self.stop_timeout = stop_timeout
        self.status = "not started"
        self._queue: queue.Queue[str | None] = queue.Queue(maxsize=QUEUE_LINES)
        self._process: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None
        self._stopping = False
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
        try:
            self._process = subprocess.Popen(  # noqa: S603 - an argv list the user stored, no shell
                self.command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=dict(env) if env is not None else None,
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
            while True:
                data = stream.read1(MAX_LINE_BYTES) if hasattr(stream, "read1") else stream.read(4096)
                if not data:
                    break
                for line in splitter.feed(data):
                    self._queue.put(line)
            for line in splitter.finish():
                self._queue.put(line)
        except (OSError, ValueError):
            pass  # the pipe was closed while stopping
        finally:
            self._queue.put(None)

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
        """SIGTERM to the process group, SIGKILL after ``stop_timeout``; returns the exit code."""
        process = self._process
        if process is None:
            return None
        self._stopping = True
        if process.poll() is None:
            self._signal(process, signal.SIGTERM)
            try:
                process.wait(timeout=self.stop_timeout)
            except subprocess.TimeoutExpired:
                self._signal(process, signal.SIGKILL if sys.platform != "win32" else signal.SIGTERM)
                process.wait()
        code = process.wait()
        if process.stdout is not None:
            with contextlib.suppress(OSError):
                process.stdout.close()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        self.status = f"stopped (exit code {code})"
        return code

    @staticmethod
    def _signal(process: subprocess.Popen[bytes], sig: int) -> None:
        try:
            if sys.platform != "win32":
                os.killpg(process.pid, sig)
            else:
                process.terminate()
        except (ProcessLookupError, PermissionError):
            with contextlib.suppress(OSError):
                process.send_signal(sig)

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
            self.stop_timeout = STOP_TIMEOUT
            return
        super().__init__([program, "-f", "-o", "cat", "-n", str(max(tail_lines, 0)), "-u", unit])
        if self.running:
            self.status = f"following journal of {unit}"

    def _update_exit_status(self) -> None:
        super()._update_exit_status()
        if self.status.startswith("process exited"):
            self.status = f"journalctl for {self.unit} ended: {self.status}"
