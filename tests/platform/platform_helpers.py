"""Helpers for the platform tests: waiting for a process to listen."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"stand-in exited early with {proc.returncode}: {proc.args!r}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listened on {port} within {timeout}s: {proc.args!r}")


Spawner = Callable[..., subprocess.Popen[bytes]]
