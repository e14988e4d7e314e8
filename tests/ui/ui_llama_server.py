"""A real llama-server with a tiny generated model, for the verify tests (skips when not built)."""

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
from uihelpers import free_port

REPO = Path(__file__).resolve().parents[2]
REAL_HOME = Path(pwd.getpwuid(os.getuid()).pw_dir)
CACHED = REAL_HOME / ".cache" / "kvswitch" / "llama-server" / "11434" / "llama-server"


def llama_server_binary() -> Path:
    configured = os.environ.get("KVSWITCH_LLAMA_SERVER")
    binary = Path(configured) if configured else CACHED
    if not binary.is_file() or not os.access(binary, os.X_OK):
        pytest.skip(f"no llama-server binary at {binary} (build it with scripts/build_llama_server.sh "
                    "or set KVSWITCH_LLAMA_SERVER)")
    return binary


def make_tiny_model(out: Path, context: int = 4096) -> Path:
    script = REPO / "scripts" / "make_tiny_model.py"
    if not script.is_file():
        pytest.skip("scripts/make_tiny_model.py is not in this checkout")
    subprocess.run([sys.executable, str(script), str(out), "--context", str(context)], check=True,
                   capture_output=True, timeout=120)
    return out


def run_llama_server(binary: Path, model: Path, workdir: Path,
                     context: int = 4096) -> Iterator[tuple[str, Path]]:
    """Yield (base URL, log file) while a real llama-server runs; stopped afterwards."""
    port = free_port()
    log_file = workdir / "llama-server.log"
    argv = [str(binary), "-m", str(model), "-a", "tiny", "--host", "127.0.0.1", "--port", str(port),
            "-c", str(context), "-np", "1", "--log-file", str(log_file)]
    proc = subprocess.Popen(argv, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
            time.sleep(0.1)  # polling a child process's port, not a Qt wait
        yield f"http://127.0.0.1:{port}", log_file
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
