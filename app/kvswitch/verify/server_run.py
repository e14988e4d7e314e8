"""A local server KV Switch starts for a measurement, followed from its first line to its exit.

``kvswitch sweep`` restarts the server once per setting. Each start runs the command as an argv list (no
shell) through ``logs.process.ProcessSource``, whose reader thread drains the server's merged stdout and
stderr; a follower thread here keeps its last lines for the whole run (start, measurement, stop), so a
server that fails to start or dies mid-measurement is reported with its own last words instead of a
timeout. Readiness is asked the way every OpenAI-compatible server answers it: ``/health`` 200 (the
common local servers), else ``/v1/models`` 200 where ``/health`` does not exist. A server already
listening on the port is never touched: ``port_in_use`` lets the caller refuse before anything starts.
The log file is ``server_log.CappedLog``: masked, 0600, bounded however much the server prints.
"""

from __future__ import annotations

import collections
import contextlib
import socket
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx

from kvswitch.core import http_client
from kvswitch.core.http import NetworkLimitError
from kvswitch.logs.process import ProcessSource
from kvswitch.verify.server_log import CappedLog

#: how many of the server's last lines are kept (the reason of a failed setting shows a few of them)
KEPT_LINES = 400
#: polling intervals: the follower's reads, the readiness checks
FOLLOW_INTERVAL = 0.05
READY_INTERVAL = 0.25
_READY_ANSWER_BYTES = 1 << 20
#: ``ProcessSource.status`` once nothing more will come
_ENDED = ("process exited", "stopped", "cannot start")


def port_in_use(host: str, port: int, timeout: float = 1.0) -> bool:
    """Something accepts connections on ``host:port`` (a server the user runs, or one still stopping)."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


class ServerRun:
    """One start of the server command; ``stop()`` always ends and reaps it (``with`` does too)."""

    def __init__(self, argv: Sequence[str], *, log_path: Path | None = None, cwd: str | None = None,
                 mask: Callable[[str], str] = str) -> None:
        """``mask`` is applied to every line the log file keeps (the kept last lines are masked by
        whoever shows them)."""
        self.argv = list(argv)
        self.started_at = time.monotonic()
        self._lines: collections.deque[str] = collections.deque(maxlen=KEPT_LINES)
        self._lock = threading.Lock()
        self._log: CappedLog | None = CappedLog(log_path, mask) if log_path else None
        self.source = ProcessSource(self.argv, cwd=cwd)
        self._follower = threading.Thread(target=self._follow, name="sweep-server-follower", daemon=True)
        self._follower.start()

    def __enter__(self) -> ServerRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def started(self) -> bool:
        """The program could be executed at all (``status`` says why not)."""
        return self.source.pid is not None

    @property
    def alive(self) -> bool:
        return self.source.running

    @property
    def status(self) -> str:
        return self.source.status

    def _follow(self) -> None:
        while True:
            lines = self.source.read_lines()
            if lines:
                with self._lock:
                    self._lines.extend(lines)
                if self._log is not None:
                    self._log.write_lines(lines)
            elif self.source.status.startswith(_ENDED):
                return  # the output is drained and the process is gone (its status says how)
            else:
                time.sleep(FOLLOW_INTERVAL)  # waiting on a child's pipe: nothing to do until it writes

    def last_lines(self, count: int = 8) -> list[str]:
        with self._lock:
            return [line for line in self._lines if line.strip()][-count:]

    def wait_ready(self, base_url: str, timeout: float, cancel: threading.Event | None = None,
                   *, exact: bool = False) -> str | None:
        """``None`` once the server answers ready; else why not (it exited, or ``timeout`` passed).

        ``exact``: ``base_url`` itself must answer 200 (a cache tier's own ``/metrics``)."""
        root = base_url if exact else base_url.rstrip("/").removesuffix("/v1")
        deadline = time.monotonic() + timeout
        path = "" if exact else "/health"
        while True:
            if not self.started:
                return self.status
            if not self.alive:
                self._settle()
                return f"the server exited before it was ready ({self._exit_text()})"
            if cancel is not None and cancel.is_set():
                return "cancelled"
            status = _status_of(root + path)
            if status == 200:
                return None
            if status == 404 and path == "/health":
                path = "/v1/models"  # no such route on this server: its model list says it is up
                continue
            if time.monotonic() >= deadline:
                return f"not ready within {timeout:g} s"
            time.sleep(READY_INTERVAL)  # polling a child's port: it says nothing until it is up

    def _settle(self) -> None:
        """Let the follower take the dead server's last lines before they are read."""
        self._follower.join(timeout=2.0)

    def _exit_text(self) -> str:
        status = self.source.status
        return status if "exit" in status else "exited"

    def exit_reason(self) -> str | None:
        """Why the server is gone, while it should be running; ``None`` while it runs."""
        if self.alive:
            return None
        self._settle()
        return f"the server stopped during the measurement ({self._exit_text()})"

    def stop(self) -> int | None:
        code = self.source.stop()
        self._follower.join(timeout=5.0)
        if self._log is not None and not self._follower.is_alive():
            self._log.close()  # the follower is done with it (it writes nothing more)
            self._log = None
        return code


def _status_of(url: str) -> int | None:
    with (contextlib.suppress(httpx.HTTPError, OSError, NetworkLimitError, ValueError),
          http_client.request("GET", url, timeout=2.0, limit=_READY_ANSWER_BYTES) as answer):
        return answer.status
    return None
