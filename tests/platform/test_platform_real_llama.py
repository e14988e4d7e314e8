"""Detection of a real llama-server (the binary the test tier builds) with a tiny generated model."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from platform_helpers import free_port

from kvswitch.core.models import ProfileKind
from kvswitch.platform.detect import detect_servers
from kvswitch.platform.procscan import iter_processes

REPO = Path(__file__).resolve().parents[2]
#: the real home (tests run with a temporary HOME), where scripts/build_llama_server.sh caches the binary
REAL_HOME = Path(pwd.getpwuid(os.getuid()).pw_dir)
CACHED = REAL_HOME / ".cache" / "kvswitch" / "llama-server" / "11434" / "llama-server"


def llama_server_binary() -> Path:
    configured = os.environ.get("KVSWITCH_LLAMA_SERVER")
    binary = Path(configured) if configured else CACHED
    if not binary.is_file() or not os.access(binary, os.X_OK):
        pytest.skip(f"no llama-server binary at {binary} (build it with scripts/build_llama_server.sh "
                    "or set KVSWITCH_LLAMA_SERVER)")
    return binary


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    script = REPO / "scripts" / "make_tiny_model.py"
    if not script.is_file():
        pytest.skip("scripts/make_tiny_model.py is not in this checkout")
    out = tmp_path_factory.mktemp("model") / "tiny.gguf"
    subprocess.run([sys.executable, str(script), str(out), "--context", "4096"], check=True,
                   capture_output=True, timeout=120)
    return out


@pytest.fixture
def llama_server(tiny_model: Path, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int, Path]]:
    binary = llama_server_binary()
    port = free_port()
    # a relative --log-file, as people type it: detection must resolve it against the server's cwd
    argv = [str(binary), "-m", str(tiny_model), "-a", "tiny", "--host", "127.0.0.1", "--port", str(port),
            "-c", "4096", "-np", "2", "--log-file", "server.log"]
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama-server exited with {proc.returncode}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama-server did not become healthy within 60 s")
            time.sleep(0.1)
        yield proc, port, tmp_path
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.mark.real_server
def test_real_llama_server_is_detected_with_its_settings(
        llama_server: tuple[subprocess.Popen[bytes], int, Path]) -> None:
    proc, port, cwd = llama_server

    [server] = detect_servers([], processes=list(iter_processes(pids=[proc.pid])))

    assert server.kind == ProfileKind.LLAMA_CPP
    assert (server.base_url, server.pid, server.answering) == (f"http://127.0.0.1:{port}", proc.pid, True)
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
def test_real_llama_server_is_identified_by_its_port(
        llama_server: tuple[subprocess.Popen[bytes], int, Path]) -> None:
    _, port, _ = llama_server
    [server] = detect_servers([port], processes=[])
    assert (server.kind, server.port, server.context, server.parallel, server.pid) == (
        ProfileKind.LLAMA_CPP, port, 2048, 2, None)
