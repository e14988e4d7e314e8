"""Recognise local inference servers among running processes, from their command lines.

A command line says more than a port probe can: the model file, the context size, the slot count and
where the server writes its log. Recognition is by the program's own name (``argv[0]``) or the Python
module it runs (``python -m MODULE``), never by a substring anywhere in the command line; each server's
``process`` signature in :mod:`kvswitch.servers` says which names and flags are its.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from kvswitch import servers
from kvswitch.core.models import ProfileKind
from kvswitch.servers.process_match import script_argv

#: Default ports of each server, used when the command line names none and no listening socket is seen.
DEFAULT_PORTS: dict[ProfileKind, int] = servers.default_ports()

LOOPBACK = "127.0.0.1"
_WILDCARD_HOSTS = {"", "0.0.0.0", "::", "[::]", "*"}


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
    kind = server_kind(argv)
    signature = servers.get(kind).process if kind is not None else None
    if not listening and signature is not None and signature.listens_in_children:
        # the server runs in a helper process; its sockets count as the app's
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


def server_kind(argv: Sequence[str]) -> ProfileKind | None:
    """Which server ``argv`` runs, or ``None`` for anything else."""
    return servers.process_kind(argv)


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
    """Split a ``[scheme://]host[:port]`` address given in an environment variable."""
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
    sig = servers.get(kind).process
    assert sig is not None  # only servers with a process signature are recognised
    parent_kind = server_kind(info.parent_argv) if info.parent_argv else None
    if parent_kind is not None and parent_kind in sig.private_under:
        return None  # another server's private runner: reached through that server, not directly
    # a console script started by its interpreter reads as the script (``python /venv/bin/PROGRAM``)
    argv, environ = tuple(script_argv(info.argv)), info.environ
    host = option(argv, *sig.host_flags) if sig.host_flags else None
    port = _int(option(argv, *sig.port_flags)) if sig.port_flags else None
    if sig.address_env is not None:
        host, port = _host_port(environ.get(sig.address_env, ""))
    model = None
    for group in sig.model_flags:
        model = model or option(argv, *group)
    if (model is None and sig.positional_model and sig.subcommand is not None
            and argv[1:2] == (sig.subcommand,) and len(argv) > 2 and not argv[2].startswith("-")):
        model = argv[2]  # ``PROGRAM serve MODEL``
    context = _int(option(argv, *sig.context_flags)) if sig.context_flags else None
    parallel = _int(option(argv, *sig.parallel_flags)) if sig.parallel_flags else None
    if sig.context_env is not None:
        context = _int(environ.get(sig.context_env))
    if sig.parallel_env is not None:
        parallel = _int(environ.get(sig.parallel_env))
    log_file = option(argv, *sig.log_file_flags) if sig.log_file_flags else None
    if log_file is None and sig.log_file_env is not None:
        log_file = environ.get(sig.log_file_env)
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
