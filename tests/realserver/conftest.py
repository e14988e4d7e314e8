"""The real-server tier: one real llama-server for the whole session (stopped at the end)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from support.llama import RunningServer, llama_server


@pytest.fixture(scope="session")
def real_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with llama_server(tmp_path_factory.mktemp("llama")) as server:
        yield server


@pytest.fixture(scope="session")
def no_cache_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """The same server with prompt caching switched off: every request is re-processed."""
    with llama_server(
        tmp_path_factory.mktemp("llama-nocache"), "--no-cache-prompt", "--cache-ram", "0"
    ) as server:
        yield server


@pytest.fixture(scope="session")
def single_slot_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """One slot and no host-RAM prompt cache: what a request reuses is exactly its prefix shared with
    the one before it, the case the token diagnosis predicts."""
    with llama_server(tmp_path_factory.mktemp("llama-np1"), "--cache-ram", "0") as server:
        yield server
