"""Two real vLLM instances sharing one LMCache server, behind a real ``vllm-router`` (pinned, PyPI).

The set-up people grow into when one server is not enough: the router spreads requests, LMCache holds
the KV every instance computed. Both instances run with vLLM's own prefix caching off, so a prompt one
instance computed can only come back to the other from LMCache. They start in parallel (a start takes
1-3 min on 2 cores; two in a row would double it); the router starts last, once both answer, and
``round_robin`` makes its choice of instance predictable request by request.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from support.net import free_port
from support.require import component_missing
from support.vllm import (
    RestartableVllm,
    RunningLmcache,
    RunningVllm,
    _spawn,
    _stop,
    lmcache_server,
    tiny_hf_model,
    vllm_env,
    vllm_python,
    wait_until_ready,
)

ROUTER_VERSION = "0.1.17"


@dataclass
class RoutedVllm:
    """The router's URL and its own metrics port, the instances behind it, and the shared LMCache."""

    url: str
    metrics_port: int
    pid: int
    log_file: Path
    argv: list[str]
    instances: list[RunningVllm]
    lmcache: RunningLmcache
    #: how long the two instances took to start side by side, and the router after them (seconds)
    started_in: tuple[float, float] = (0.0, 0.0)


def router_binary() -> Path:
    """``vllm-router`` in the vLLM venv (``scripts/install_vllm.sh`` installs it there)."""
    binary = vllm_python().parent / "vllm-router"
    if not binary.is_file():
        component_missing(f"vLLM router tier: no {binary} (run scripts/install_vllm.sh, which installs "
                          f"vllm-router=={ROUTER_VERSION} into the vLLM venv)")
    return binary


def router_argv(port: int, metrics_port: int, workers: list[str], policy: str = "round_robin") -> list[str]:
    """The router's command line; its own metrics get a free port (its default, 29000, may be taken)."""
    return [str(router_binary()), "--host", "127.0.0.1", "--port", str(port), "--worker-urls", *workers,
            "--policy", policy, "--prometheus-host", "127.0.0.1", "--prometheus-port", str(metrics_port)]


def _start_all(handles: list[RestartableVllm]) -> list[RunningVllm]:
    """Start every instance at once; if one fails, stop the others and raise its failure."""
    tiny_hf_model()  # made once, before the threads (each start reads it)
    with ThreadPoolExecutor(len(handles)) as pool:
        futures = [pool.submit(handle.start) for handle in handles]
    try:
        return [future.result() for future in futures]
    except BaseException:
        for handle in handles:
            handle.stop()
        raise


@contextlib.contextmanager
def routed_vllm(workdir: Path, instances: int = 2, policy: str = "round_robin") -> Iterator[RoutedVllm]:
    """One ``lmcache server``, ``instances`` vLLM with its connector (own prefix cache off), the router."""
    with lmcache_server(workdir / "lmcache") as lmcache:
        handles = [RestartableVllm(workdir / f"vllm-{index}", lmcache=lmcache)
                   for index in range(instances)]
        begun = time.monotonic()
        running = _start_all(handles)
        vllm_took = time.monotonic() - begun
        port, metrics_port = free_port(), free_port()
        argv = router_argv(port, metrics_port, [server.url for server in running], policy)
        log_file = workdir / f"router-{port}.log"
        proc: subprocess.Popen[bytes] | None = None
        try:
            proc = _spawn(argv, workdir, log_file, vllm_env(threads=1))
            url = f"http://127.0.0.1:{port}"
            wait_until_ready(url, proc, log_file, "vllm-router", 120)
            took = (vllm_took, time.monotonic() - begun - vllm_took)
            yield RoutedVllm(url, metrics_port, proc.pid, log_file, argv, running, lmcache, took)
        finally:
            if proc is not None:
                _stop(proc)
            for handle in handles:
                handle.stop()
