"""A real ``redis-server`` (Debian's package) on a free loopback port, for LMCache's Redis L2 tier.

The tests start their own, with no persistence and a private folder, and stop it; Debian's service is
never touched. Under ``CI=true`` a missing ``redis-server`` fails the run (``require``).
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from support.net import free_port
from support.require import component_missing


@dataclass
class RunningRedis:
    port: int
    pid: int

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"


def redis_binary() -> str:
    debian = Path("/usr/bin/redis-server")
    found = shutil.which("redis-server") or (str(debian) if debian.is_file() else None)
    if found is None:
        component_missing("Redis tier: no redis-server (Debian's package redis-server; dev.sh installs it)")
    return str(found)


def _answers(port: int) -> bool:
    import socket  # noqa: PLC0415

    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
        conn.sendall(b"PING\r\n")
        return conn.recv(16).startswith(b"+PONG")
    return False


@contextlib.contextmanager
def redis_server(workdir: Path, port: int | None = None) -> Iterator[RunningRedis]:
    """``redis-server`` in the foreground on ``port`` (a free one by default), without persistence."""
    port = port or free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    argv = [redis_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--dir", str(workdir), "--daemonize", "no"]
    with (workdir / f"redis-{port}.log").open("ab") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not _answers(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start on {port} (see {workdir})")
            time.sleep(0.1)  # waiting for a child process's port
        yield RunningRedis(port, proc.pid)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
