"""The KV Switch gateway as a real process (``kvswitch gateway run``) on a port the test picked, with
the test's temporary HOME: what a user runs in a terminal, for the end-to-end gateway tests."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from support.llama import REPO


@contextlib.contextmanager
def gateway_process(home: Path, port: int, log: Path, host: str = "127.0.0.1",
                    env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """``python -m kvswitch gateway run --listen HOST:PORT`` of this checkout (``HOST`` loopback,
    ``[::1]`` too), until it says it listens; stopped (SIGTERM, then waited for) on exit. Never the
    default port: another gateway on the machine may hold it. ``env`` adds to (or overrides) this
    process's environment, e.g. another ``KVSWITCH_CONFIG_DIR``."""
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO / "app"), **(env or {})}
    listen = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    with log.open("wb") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "kvswitch", "gateway", "run", "--listen", listen],
                                env=env, stdout=sink, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while b"KV Switch gateway on" not in log.read_bytes():
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the gateway did not start"
            time.sleep(0.1)  # polling a child process's output
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=20)
