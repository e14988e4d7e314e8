"""Which running Claude Code / Codex / OpenCode processes still run with the old backend.

A switch only reaches processes started after it: a ``claude`` session opened yesterday keeps the
environment (and settings) it started with. So each agent process is checked two ways: its start
time against the last apply, and, where the OS lets us read it, its environment against the
variables the active profile sets. Values are compared, never shown: some are keys.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import PurePath
from typing import Any

import psutil

#: names whose values are secrets: reported as "differs", never printed
SECRET_NAMES = ("KEY", "TOKEN", "SECRET", "PASSWORD")
_NODE_PACKAGES = {"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex", "opencode": "opencode-ai"}


@dataclass(frozen=True)
class AgentProcess:
    """One running agent and whether it has what the active profile sets.

    ``has_env`` is ``None`` when the environment cannot be read (another user's process, macOS
    hardened runtime, Windows); ``missing`` names expected variables that are absent or differ.
    ``needs_restart`` is True when it started before the last apply or lacks an expected variable.
    """

    pid: int
    agent: str
    argv: tuple[str, ...]
    started_at: float
    has_env: bool | None
    missing: list[str] = field(default_factory=list)
    started_before_apply: bool | None = None
    needs_restart: bool = False
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["argv"] = list(self.argv)
        data["started_at_iso"] = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self.started_at))
        return data


def agent_name(argv: tuple[str, ...]) -> str | None:
    """``claude`` / ``codex`` / ``opencode`` when the program itself is one (never when an argument
    merely mentions it)."""
    if not argv:
        return None
    program = PurePath(argv[0].replace("\\", "/")).name.lower().removesuffix(".exe")
    for agent in ("claude", "codex", "opencode"):
        if program == agent or program.startswith(f"{agent}-"):
            return agent
    if program in ("node", "nodejs", "bun", "deno") and len(argv) > 1:
        script = argv[1].replace("\\", "/")
        for agent, package in _NODE_PACKAGES.items():
            if package in script or PurePath(script).name in (agent, f"{agent}.js"):
                return agent
    return None


def _is_secret(name: str) -> bool:
    return any(part in name.upper() for part in SECRET_NAMES)


def compare_env(expected: Mapping[str, str], actual: Mapping[str, str]) -> list[str]:
    """Expected names that are absent or set to something else (names only, values stay private)."""
    missing = []
    for name, value in expected.items():
        if name not in actual:
            missing.append(name)
        elif actual[name] != value:
            missing.append(f"{name} (differs)" if _is_secret(name) else f"{name} (is {actual[name]!r})")
    return missing


def find_agent_processes(
    expected_env: Mapping[str, str], *, applied_at: float | None = None, pids: Iterable[int] | None = None
) -> list[AgentProcess]:
    """Running claude / codex / opencode processes (of any user we may read), oldest first.

    Args:
        expected_env: variables the active profile puts in the agent's environment (shell targets).
            Claude Code applies settings.json ``env`` inside its own process, which the OS does not
            show, so pass only what a shell or the session environment would export.
        applied_at: when the profile was last applied (epoch seconds); ``None`` skips the time check.
        pids: restrict to these processes (tests, or a list the GUI already has).
    """
    wanted = None if pids is None else set(pids)
    found: list[AgentProcess] = []
    for proc in psutil.process_iter(["pid", "cmdline", "create_time"]):
        if (wanted is not None and proc.pid not in wanted) or proc.pid == os.getpid():
            continue
        argv = tuple(proc.info.get("cmdline") or ())
        agent = agent_name(argv)
        if agent is None:
            continue
        found.append(_check(proc, agent, argv, expected_env, applied_at))
    return sorted(found, key=lambda p: p.started_at)


def _check(
    proc: psutil.Process,
    agent: str,
    argv: tuple[str, ...],
    expected: Mapping[str, str],
    applied_at: float | None,
) -> AgentProcess:
    started = float(proc.info.get("create_time") or 0.0)
    environ: dict[str, str] | None = None
    with contextlib.suppress(psutil.Error, OSError):
        environ = dict(proc.environ())
    missing = compare_env(expected, environ) if environ is not None else []
    has_env = None if environ is None else not missing
    before = None if applied_at is None else started < applied_at
    reasons = []
    if before and applied_at is not None:
        reasons.append(f"started {_ago(applied_at - started)} before the last switch")
    if missing:
        reasons.append("lacks " + ", ".join(missing))
    if not reasons:
        if has_env is None and before is None:
            reason = "cannot tell: its environment is not readable and no switch time is known"
        else:
            reason = "up to date"
    else:
        reason = "; ".join(reasons) + " — restart it to use the active profile"
    return AgentProcess(
        proc.pid, agent, argv, started, has_env, missing, before, bool(before or missing), reason
    )


def _ago(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
