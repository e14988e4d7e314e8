"""Recognise local inference servers among running processes, from their command lines.

A command line says more than a port probe can: the model file, the context size, the slot count and
where the server writes its log. Recognition is by the program's own name (``argv[0]``) or the Python
module it runs (``-m vllm.entrypoints.openai.api_server``), never by a substring anywhere in the
command line, so a shell that merely mentions ``llama-server`` is not mistaken for one.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from kvswitch.core.models import ProfileKind

#: Default ports of each server, used when the command line names none and no listening socket is seen.
DEFAULT_PORTS: dict[ProfileKind, int] = {
    ProfileKind.LLAMA_CPP: 8080,
    ProfileKind.LM_STUDIO: 1234,
    ProfileKind.OLLAMA: 11434,
    ProfileKind.VLLM: 8000,
    ProfileKind.SGLANG: 30000,
}

LOOPBACK = "127.0.0.1"
_WILDCARD_HOSTS = {"", "0.0.0.0", "::", "[::]", "*"}
_PYTHON_RE = re.compile(r"python(\d+(\.\d+)?)?(\.exe)?", re.IGNORECASE)


@dataclass(frozen=True)
class ProcessInfo:
    """What detection needs to know about one process (built from psutil, or by hand in tests)."""

    pid: int
    argv: tuple[str, ...]
    environ: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    listening: tuple[tuple[str, int], ...] = ()
    parent_argv: tuple[str, ...] = ()


@dataclass(frozen=True)
class ServerProcess:
    """A running process recognised as an inference server, with what its command line tells."""

    kind: ProfileKind
    pid: int
    host: str
    port: int
    argv: tuple[str, ...]
    model: str | None = None
    context: int | None = None
    parallel: int | None = None
    log_file: str | None = None


def connect_host(host: str | None) -> str:
    """Where a client on this machine reaches a server bound to ``host``."""
    if host is None or host.strip() in _WILDCARD_HOSTS or host == "localhost":
        return LOOPBACK
    return host.strip("[]")


def iter_processes(pids: Iterable[int] | None = None) -> Iterator[ProcessInfo]:
    """The current processes (or only ``pids``) as :class:`ProcessInfo`; vanished or denied ones are skipped.

    Listening sockets and the environment are read only for processes that look like servers, since
    reading them for every process is slow and often denied.
    """
    wanted = None if pids is None else set(pids)
    for proc in psutil.process_iter(["pid", "cmdline"]):
        if wanted is not None and proc.pid not in wanted:
            continue
        argv = tuple(proc.info.get("cmdline") or ())
        if not argv or server_kind(argv) is None:
            continue
        yield _describe(proc, argv)


def _describe(proc: psutil.Process, argv: tuple[str, ...]) -> ProcessInfo:
    environ: dict[str, str] = {}
    cwd: str | None = None
    parent_argv: tuple[str, ...] = ()
    with contextlib.suppress(psutil.Error, OSError):
        environ = dict(proc.environ())
    with contextlib.suppress(psutil.Error, OSError):
        cwd = proc.cwd()
    listening = _listening(proc)
    if not listening and server_kind(argv) == ProfileKind.LM_STUDIO:
        # LM Studio serves from a helper process; its sockets count as the app's.
        with contextlib.suppress(psutil.Error, OSError):
            for child in proc.children(recursive=True):
                listening.extend(_listening(child))
    with contextlib.suppress(psutil.Error, OSError):
        parent = proc.parent()
        if parent is not None:
            parent_argv = tuple(parent.cmdline())
    return ProcessInfo(proc.pid, argv, environ, cwd, tuple(sorted(set(listening))), parent_argv)


def _listening(proc: psutil.Process) -> list[tuple[str, int]]:
    found: list[tuple[str, int]] = []
    with contextlib.suppress(psutil.Error, OSError):
        for conn in proc.net_connections(kind="inet"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr:
                found.append((conn.laddr.ip, conn.laddr.port))
    return found


def _program(argv: Sequence[str]) -> str:
    name = re.split(r"[\\/]", argv[0])[-1] if argv else ""
    return name.lower().removesuffix(".exe")


def _python_module(argv: Sequence[str]) -> str | None:
    """The module of ``python -m MODULE ...`` (``-m`` may follow interpreter flags)."""
    if not _PYTHON_RE.fullmatch(_program(argv)):
        return None
    for index, arg in enumerate(argv[1:], start=1):
        if arg == "-m" and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith("-m") and len(arg) > 2:
            return arg[2:]
        if not arg.startswith("-"):
            return None  # a script path: not a module run
    return None


def server_kind(argv: Sequence[str]) -> ProfileKind | None:
    """Which server ``argv`` runs, or ``None`` for anything else."""
    program = _program(argv)
    args = list(argv[1:])
    if program == "llama-server":
        return ProfileKind.LLAMA_CPP
    if program == "ollama":
        return ProfileKind.OLLAMA if args[:1] == ["serve"] else None
    if program == "vllm":
        return ProfileKind.VLLM if args[:1] == ["serve"] else None
    if program == "sglang":
        return ProfileKind.SGLANG if args[:1] == ["serve"] else None
    if program in ("lm studio", "lm-studio", "lmstudio", "llmster") or program.startswith("lm-studio"):
        # Electron helpers (renderer, GPU) share the name; only the main process hosts the server.
        return None if any(arg.startswith("--type=") for arg in args) else ProfileKind.LM_STUDIO
    module = _python_module(argv)
    if module is None:
        return None
    if module.startswith("vllm.entrypoints") or (module == "vllm" and "serve" in args):
        return ProfileKind.VLLM
    if module in ("sglang.launch_server", "sglang.srt.server") or module.startswith("sglang.launch"):
        return ProfileKind.SGLANG
    return None


def option(argv: Sequence[str], *names: str) -> str | None:
    """The value of the last ``--name VALUE`` / ``--name=VALUE`` among ``names`` (as servers read them)."""
    value: str | None = None
    for index, arg in enumerate(argv):
        for name in names:
            if arg == name and index + 1 < len(argv):
                value = argv[index + 1]
            elif arg.startswith(name + "="):
                value = arg[len(name) + 1:]
    return value


def _int(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None


def _host_port(value: str) -> tuple[str | None, int | None]:
    """Split an ``OLLAMA_HOST``-style ``[scheme://]host[:port]``."""
    value = re.sub(r"^[a-z]+://", "", value.strip()).rstrip("/")
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        return host, _int(rest.lstrip(":")) if rest else None
    if value.count(":") == 1:
        host, _, port = value.partition(":")
        return host, _int(port)
    return value or None, None


def classify(info: ProcessInfo) -> ServerProcess | None:
    """Turn a process into a :class:`ServerProcess`, or ``None`` when it runs no known server."""
    kind = server_kind(info.argv)
    if kind is None:
        return None
    parent_kind = server_kind(info.parent_argv) if info.parent_argv else None
    if kind == ProfileKind.LLAMA_CPP and parent_kind == ProfileKind.OLLAMA:
        return None  # Ollama's private runner: reached through Ollama, not directly
    argv = info.argv
    host = option(argv, "--host")
    port = _int(option(argv, "--port"))
    model = context = parallel = None
    log_file = None
    if kind == ProfileKind.LLAMA_CPP:
        model = (option(argv, "-a", "--alias") or option(argv, "-m", "--model")
                 or option(argv, "-hf", "--hf-repo"))
        context = _int(option(argv, "-c", "--ctx-size"))
        parallel = _int(option(argv, "-np", "--parallel"))
        log_file = option(argv, "--log-file") or info.environ.get("LLAMA_LOG_FILE")
    elif kind == ProfileKind.OLLAMA:
        env_host, env_port = _host_port(info.environ.get("OLLAMA_HOST", ""))
        host, port = env_host, env_port
        context = _int(info.environ.get("OLLAMA_CONTEXT_LENGTH"))
        parallel = _int(info.environ.get("OLLAMA_NUM_PARALLEL"))
    elif kind == ProfileKind.VLLM:
        served = option(argv, "--served-model-name")
        positional = None
        if _program(argv) == "vllm" and len(argv) > 2 and not argv[2].startswith("-"):
            positional = argv[2]
        model = served or option(argv, "--model") or positional
        context = _int(option(argv, "--max-model-len"))
        parallel = _int(option(argv, "--max-num-seqs"))
    elif kind == ProfileKind.SGLANG:
        model = option(argv, "--served-model-name") or option(argv, "--model-path", "--model")
        context = _int(option(argv, "--context-length"))
        parallel = _int(option(argv, "--max-running-requests"))
    if log_file and info.cwd and not os.path.isabs(log_file):
        log_file = str(Path(info.cwd) / log_file)
    if port is None:
        port = _listening_port(info, host, DEFAULT_PORTS[kind]) or DEFAULT_PORTS[kind]
    return ServerProcess(kind, info.pid, connect_host(host), port, argv, model, context, parallel, log_file)


def _listening_port(info: ProcessInfo, host: str | None, default: int) -> int | None:
    """The port the process actually listens on: its default if among them, else one bound to ``host``."""
    if not info.listening:
        return None
    ports = [port for _, port in info.listening]
    if default in ports:
        return default
    for address, port in info.listening:
        if host and connect_host(address) == connect_host(host):
            return port
    return ports[0]


def scan(processes: Iterable[ProcessInfo] | None = None) -> list[ServerProcess]:
    """Every recognised server among ``processes`` (default: all current processes)."""
    found = []
    for info in iter_processes() if processes is None else processes:
        server = classify(info)
        if server is not None:
            found.append(server)
    return found
