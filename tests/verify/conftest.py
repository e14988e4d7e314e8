"""Fixtures for the verify tests: loopback stub servers and the captured llama-server answers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from verify_stubs import HangingServer, StubServer


@pytest.fixture
def stub() -> Iterator[StubServer]:
    server = StubServer()
    yield server
    server.close()


@pytest.fixture
def hanging() -> Iterator[HangingServer]:
    server = HangingServer()
    yield server
    server.close()


@pytest.fixture
def trickling() -> Iterator[HangingServer]:
    server = HangingServer(trickle=True)
    yield server
    server.close()


@pytest.fixture
def responses_dir(fixtures_dir: Path) -> Path:
    return fixtures_dir / "llama.cpp-b11434" / "responses"
