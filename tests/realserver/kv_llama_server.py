"""Start a real llama-server (tiny generated model) on a free loopback port, and stop it.

Shared by the real-server tier and the end-to-end test. The binary comes from
``$KVSWITCH_LLAMA_SERVER`` or the build cache; the model is generated once by
``scripts/make_tiny_model.py`` and cached under ``~/.cache/kvswitch/models``. Anything missing skips
the test with the reason, never fails it.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
REAL_HOME = Path(pwd.getpwuid(os.getuid()).pw_dir)
CACHE = Path(os.environ.get("KVSWITCH_CACHE") or REAL_HOME / ".cache" / "kvswitch")
BUILD = "11434"
CONTEXT = 32768


@dataclass(frozen=True)
class RunningServer:
    url: str
    log_file: Path
    pid: int


def llama_server_binary() -> Path:
    configured = os.environ.get("KVSWITCH_LLAMA_SERVER")
    binary = Path(configured) if configured else CACHE / "llama-server" / BUILD / "llama-server"
    if not binary.is_file() or not os.access(binary, os.X_OK):
        pytest.skip(
            f"real-server tier skipped: no llama-server binary at {binary} (build it with "
            "scripts/build_llama_server.sh, which needs cmake and a C++ compiler, or set "
            "KVSWITCH_LLAMA_SERVER)"
        )
    return binary


def tiny_model(context: int = CONTEXT) -> Path:
    """The cached tiny model (made once; rebuilt if the script is newer than the file)."""
    script = REPO / "scripts" / "make_tiny_model.py"
    out = CACHE / "models" / f"kvswitch-tiny-{context}.gguf"
    if out.is_file() and out.stat().st_mtime >= script.stat().st_mtime:
        return out
    try:
        import gguf  # noqa: F401, PLC0415
    except ImportError:
        pytest.skip("real-server tier skipped: the 'gguf' package is missing (pip install gguf)")
    subprocess.run(
        [sys.executable, str(script), str(out), "--context", str(context)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def llama_server(workdir: Path, *extra: str, context: int = CONTEXT) -> Iterator[RunningServer]:
    """A real ``llama-server -np 1 --metrics`` on loopback, logging to a file; always stopped."""
    binary = llama_server_binary()
    model = tiny_model(context)
    port = free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    log_file = workdir / f"llama-server-{port}.log"
    argv = [
        str(binary),
        "-m",
        str(model),
        "-a",
        "tiny",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "-c",
        str(context),
        "-np",
        "1",
        "--metrics",
        "--log-file",
        str(log_file),
        *extra,
    ]
    proc = subprocess.Popen(argv, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama-server exited with {proc.returncode}; see {log_file}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            if time.monotonic() > deadline:
                pytest.fail("llama-server did not become healthy within 60 s")
            time.sleep(0.1)
        yield RunningServer(url, log_file, proc.pid)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
