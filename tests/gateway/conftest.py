"""Fixtures for the gateway tests: KV Switch's directories in the temporary HOME, a gateway running
in-process on loopback, and scripted upstreams for the cases no real server produces."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from gateway_support import Responder, ScriptedUpstream

from kvswitch.core.gateway_config import ensure_token
from kvswitch.core.paths import AppPaths
from kvswitch.gateway.control import make_server
from kvswitch.gateway.relay.server import GatewayServer


@pytest.fixture
def paths(fake_home: Path) -> AppPaths:
    return AppPaths.default()


@pytest.fixture
def token(paths: AppPaths) -> str:
    return ensure_token(paths)


@pytest.fixture
def upstreams() -> Iterator[Callable[[Responder], ScriptedUpstream]]:
    made: list[ScriptedUpstream] = []

    def make(responder: Responder) -> ScriptedUpstream:
        upstream = ScriptedUpstream(responder)
        made.append(upstream)
        return upstream

    yield make
    for upstream in made:
        upstream.close()


@pytest.fixture
def gateway(paths: AppPaths, token: str) -> Iterator[GatewayServer]:
    server = make_server(paths, "127.0.0.1", 0).start()
    yield server
    server.stop()
