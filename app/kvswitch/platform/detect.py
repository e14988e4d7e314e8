"""Find what the user already has: Claude Code, Codex, and local inference servers.

Used by the first run (offer ready profiles instead of an empty form), by "Detect servers" later, and
by ``kvswitch detect``. Servers are found two ways and merged: from running processes (their command
line tells the model, context, slots and log file) and by probing the usual ports on loopback (which
also finds servers started by another user or inside a container). Only answers in a server's own
shape count, so a machine running none of them reports nothing.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kvswitch import servers
from kvswitch.core.models import LogSource, Profile, ProfileKind
from kvswitch.core.paths import claude_config_dir, codex_home, opencode_config_dir
from kvswitch.platform.context_window import usable_context
from kvswitch.platform.probe import DEFAULT_TIMEOUT, ProbeResult, identify_all
from kvswitch.platform.procscan import DEFAULT_PORTS, LOOPBACK, ProcessInfo, ServerProcess, scan

#: Ports probed on loopback when nothing else is asked for (one per server kind).
PROBE_PORTS: tuple[int, ...] = tuple(sorted(DEFAULT_PORTS.values()))

#: Where systemd keeps unit files (a server's Linux installer may add its unit to one of them).
SYSTEMD_UNIT_DIRS: tuple[Path, ...] = (
    Path("/etc/systemd/system"),
    Path("/usr/lib/systemd/system"),
    Path("/lib/systemd/system"),
)

KIND_LABELS: dict[ProfileKind, str] = {server.kind: server.short_label for server in servers.local()}


@dataclass(frozen=True)
class DetectedTool:
    """A coding tool KV Switch configures, and whether it is installed and has a configuration."""

    name: str
    label: str
    binary: Path | None
    config_dir: Path
    config_file: Path

    @property
    def found(self) -> bool:
        return self.binary is not None or self.config_dir.is_dir()

    @property
    def has_config(self) -> bool:
        return self.config_file.is_file()

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "label": self.label, "found": self.found,
            "binary": str(self.binary) if self.binary else None,
            "config_dir": str(self.config_dir), "config_dir_exists": self.config_dir.is_dir(),
            "config_file": str(self.config_file), "config_file_exists": self.has_config,
        }


@dataclass(frozen=True)
class DetectedServer:
    """One local server, merged from its process (if seen) and its HTTP answers (if it answered).

    ``answering`` is false for a recognised process whose port did not answer (still loading, or
    bound elsewhere); such a server is still offered, since its command line is known.
    ``context`` is what one request can use: the server's own answer when it gave one (a server may
    split its context between its slots), else the command line's value.
    """

    kind: ProfileKind
    host: str
    port: int
    answering: bool
    pid: int | None = None
    version: str | None = None
    models: tuple[str, ...] = ()
    context: int | None = None
    parallel: int | None = None
    log: LogSource | None = None
    argv: tuple[str, ...] = ()
    loading: bool = False
    sources: tuple[str, ...] = field(default=())

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def label(self) -> str:
        return KIND_LABELS.get(self.kind, self.kind.value)

    @property
    def model(self) -> str | None:
        return self.models[0] if self.models else None

    def profile_name(self) -> str:
        return f"{self.label} :{self.port}"

    def to_profile(self, name: str | None = None, env: Mapping[str, str] | None = None) -> Profile:
        """A ready profile: the server's URL and model, the preset's cache-safe env, the log source."""
        defaults = servers.preset(self.kind, env)
        notes = [f"Detected {self.label}" + (f" {self.version}" if self.version else "")]
        if self.context:
            notes.append(f"context {self.context}")
        if self.parallel:
            notes.append(f"{self.parallel} slots")
        return Profile(
            name=name or self.profile_name(),
            kind=self.kind,
            base_url=self.base_url,
            model=self.model,
            env=dict(defaults.env),
            log=self.log,
            notes=", ".join(notes),
            context_window=usable_context(self.context),  # read already: what `profile add` would read
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value, "label": self.label, "base_url": self.base_url, "host": self.host,
            "port": self.port, "answering": self.answering, "loading": self.loading, "pid": self.pid,
            "version": self.version, "models": list(self.models), "context": self.context,
            "parallel": self.parallel, "log": self.log.model_dump(exclude_none=True) if self.log else None,
            "argv": list(self.argv), "found_by": list(self.sources),
        }


def process_names() -> tuple[str, ...]:
    """How each local server's process is recognised, as a user would type it (a program
    name, or ``python -m`` and a module), from the servers' own signatures."""
    names: list[str] = []
    for server in servers.local():
        sig = server.process
        if sig is None:
            continue
        tail = f" {sig.subcommand}" if sig.subcommand else ""
        names.extend(f"{program}{tail}" for program in sig.programs)
        names.extend(f"python -m {module}" for module in sig.python_modules)
        names.extend(f"python -m {module}…" for module in sig.python_module_prefixes)
        names.extend(f"python -m {module} serve" for module in sig.python_serve_modules)
    return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class Searched:
    """What a detection looked at, so "nothing found" can say where it looked.

    ``ports``: each loopback port probed and the server that listens there by default ("" for none);
    ``process_list``: the machine's process list was read for ``process_names()`` (False: the caller
    named the processes to look at, or none).
    """

    host: str = LOOPBACK
    ports: tuple[tuple[int, str], ...] = ()
    process_list: bool = False

    @classmethod
    def of(cls, ports: Sequence[int], process_list: bool, host: str = LOOPBACK) -> Searched:
        by_port = {port: KIND_LABELS.get(kind, kind.value) for kind, port in DEFAULT_PORTS.items()}
        return cls(host, tuple((port, by_port.get(port, "")) for port in sorted(set(ports))), process_list)


@dataclass(frozen=True)
class Detection:
    tools: tuple[DetectedTool, ...]
    servers: tuple[DetectedServer, ...]
    searched: Searched = field(default_factory=Searched)

    def to_json(self) -> dict[str, Any]:
        return {"tools": [tool.to_json() for tool in self.tools],
                "servers": [server.to_json() for server in self.servers]}


def detect_tools(env: Mapping[str, str] | None = None) -> list[DetectedTool]:
    """Claude Code, Codex and OpenCode: binary on PATH, config dir (``~/.claude``, ``~/.codex``,
    ``~/.config/opencode``) and main file."""
    env = os.environ if env is None else env
    path = env.get("PATH", os.defpath)
    claude_dir = claude_config_dir(env)
    codex_dir = codex_home(env)
    opencode_dir = opencode_config_dir(env)
    return [
        DetectedTool("claude", "Claude Code", _which("claude", path), claude_dir,
                     claude_dir / "settings.json"),
        DetectedTool("codex", "Codex", _which("codex", path), codex_dir, codex_dir / "config.toml"),
        DetectedTool("opencode", "OpenCode", _which("opencode", path), opencode_dir,
                     opencode_dir / "opencode.json"),
    ]


def _which(name: str, path: str) -> Path | None:
    found = shutil.which(name, path=path)
    return Path(found) if found else None


def detect_servers(
    ports: Sequence[int] = PROBE_PORTS,
    *,
    processes: Iterable[ProcessInfo] | None = None,
    host: str = LOOPBACK,
    timeout: float = DEFAULT_TIMEOUT,
    env: Mapping[str, str] | None = None,
    unit_dirs: Sequence[Path] = SYSTEMD_UNIT_DIRS,
) -> list[DetectedServer]:
    """Servers running now, sorted by port.

    Args:
        ports: loopback ports to probe besides those found from processes (tests pass their own).
        processes: the processes to inspect; ``None`` means every process on the machine, ``[]`` none.
        host: where to probe ``ports``.
        timeout: per connection and per HTTP request, in seconds.
        env: environment for home-relative log locations (default ``os.environ``).
        unit_dirs: where to look for systemd units (a server logging to the journal).
    """
    found = scan(processes)
    addresses = [(host, port) for port in ports] + [(server.host, server.port) for server in found]
    probes = {(result.host, result.port): result for result in identify_all(addresses, timeout)}
    servers: list[DetectedServer] = []
    claimed: set[tuple[str, int]] = set()
    seen_processes: set[tuple[str, int]] = set()
    for process in found:
        address = (process.host, process.port)
        if address in seen_processes:
            continue  # several processes of one server (an app and its helper): report it once
        seen_processes.add(address)
        probe = probes.get(address)
        if probe is not None and probe.kind != process.kind:
            probe = None  # another server owns that port; both are reported
        else:
            claimed.add(address)
        servers.append(_merge(process, probe, env, unit_dirs))
    servers.extend(_merge(None, result, env, unit_dirs) for address, result in probes.items()
                   if address not in claimed)
    return sorted(servers, key=lambda server: (server.port, server.host))


def _merge(process: ServerProcess | None, probe: ProbeResult | None, env: Mapping[str, str] | None,
           unit_dirs: Sequence[Path]) -> DetectedServer:
    origin = process or probe
    if origin is None:
        raise ValueError("a detected server needs a process or a probe answer")
    kind = origin.kind
    models = list(probe.models) if probe is not None else []
    if not models and process is not None and process.model:
        models.append(_short_model(process.model))  # the server did not say; its command line does
    log = _log_source(kind, process, env, unit_dirs)
    sources = tuple(name for name, present in (("process", process), ("port", probe)) if present is not None)
    return DetectedServer(
        kind=kind,
        host=origin.host,
        port=origin.port,
        answering=probe is not None and not probe.loading,
        pid=process.pid if process is not None else None,
        version=probe.version if probe is not None else None,
        models=tuple(models),
        context=(probe.context if probe is not None else None) or (process.context if process else None),
        parallel=(process.parallel if process is not None else None) or (probe.parallel if probe else None),
        log=log,
        argv=process.argv if process is not None else (),
        loading=probe is not None and probe.loading,
        sources=sources,
    )


def _short_model(model: str) -> str:
    """A model name from a path (``/models/qwen2.5-7b.gguf`` → ``qwen2.5-7b.gguf``); repo ids stay whole."""
    if os.sep in model or "\\" in model:
        return Path(model).name
    return model


def _log_source(kind: ProfileKind, process: ServerProcess | None, env: Mapping[str, str] | None,
                unit_dirs: Sequence[Path]) -> LogSource | None:
    """The command line's log file when it names one, else where the server's module says it logs."""
    if process is not None and process.log_file:
        return LogSource(kind="file", path=process.log_file)
    return servers.get(kind).find_log(env, unit_dirs)


def detect(ports: Sequence[int] = PROBE_PORTS, *, processes: Iterable[ProcessInfo] | None = None,
           timeout: float = DEFAULT_TIMEOUT, env: Mapping[str, str] | None = None) -> Detection:
    """Tools and servers in one call (what the first-run dialog and ``kvswitch detect`` show), and
    what was looked at (``Searched``)."""
    found = detect_servers(ports, processes=processes, timeout=timeout, env=env)
    return Detection(tuple(detect_tools(env)), tuple(found), Searched.of(ports, processes is None))
