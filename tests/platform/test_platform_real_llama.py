"""Detection of a real llama-server (the binary the test tier builds) with a tiny generated model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kvswitch.core.models import ProfileKind
from kvswitch.platform.detect import detect_servers
from kvswitch.platform.procscan import iter_processes
from support.llama import RunningServer
from support.llama import llama_server as start_llama_server


@pytest.fixture
def llama_server(tmp_path: Path) -> Iterator[RunningServer]:
    # a relative --log-file, as people type it: detection must resolve it against the server's cwd
    with start_llama_server(tmp_path, context=4096, parallel=2, metrics=False,
                            log_file="server.log") as server:
        yield server


@pytest.mark.real_server
def test_real_llama_server_is_detected_with_its_settings(llama_server: RunningServer, tmp_path: Path) -> None:
    pid, port, cwd = llama_server.pid, llama_server.port, tmp_path

    [server] = detect_servers([], processes=list(iter_processes(pids=[pid])))

    assert server.kind == ProfileKind.LLAMA_CPP
    assert (server.base_url, server.pid, server.answering) == (f"http://127.0.0.1:{port}", pid, True)
    # -c 4096 shared by -np 2 slots: one request can use 2048 tokens, which is what the server reports
    assert (server.model, server.context, server.parallel) == ("tiny", 2048, 2)
    assert server.version is not None
    assert server.version.startswith("b11434")
    assert server.log is not None
    assert (server.log.kind, server.log.path) == ("file", str(cwd / "server.log"))
    profile = server.to_profile()
    assert (profile.base_url, profile.model, profile.log) == (server.base_url, "tiny", server.log)
    assert profile.env["CLAUDE_CODE_ATTRIBUTION_HEADER"] == "0"


@pytest.mark.real_server
def test_real_llama_server_is_identified_by_its_port(llama_server: RunningServer) -> None:
    port = llama_server.port
    [server] = detect_servers([port], processes=[])
    assert (server.kind, server.port, server.context, server.parallel, server.pid) == (
        ProfileKind.LLAMA_CPP, port, 2048, 2, None)
