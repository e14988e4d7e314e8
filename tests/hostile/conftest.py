"""Fixtures for the hostile-input suite: a profile pointing at a hostile loopback server, and the
environment a ``kvswitch`` subprocess runs in (the test's temporary HOME, this checkout's code)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from support.hostile_servers import HostileServer

APP = Path(__file__).resolve().parents[2] / "app"


@pytest.fixture
def child_env(fake_home: Path) -> dict[str, str]:
    """The environment of a ``python -m kvswitch`` child: the fake HOME of this test, no proxies."""
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env["PYTHONPATH"] = str(APP)
    env["LANG"] = env["LC_ALL"] = "C.UTF-8"
    return env


@pytest.fixture
def hostile_server() -> Iterator[Callable[[str], HostileServer]]:
    servers: list[HostileServer] = []

    def start(mode: str) -> HostileServer:
        servers.append(HostileServer(mode))
        return servers[-1]

    yield start
    for server in servers:
        server.close()
