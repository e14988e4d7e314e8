"""From target specs (``claude``, ``claude-project:DIR``, ``codex``, ``opencode``, ``bash``...) to targets.

The ledger stores target ids; ``target_for_id`` turns them back into targets, so a target a previous
profile used can still be cleaned up after the current profile dropped it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from kvswitch.core.errors import UsageError
from kvswitch.core.models import Profile, validate_target_spec
from kvswitch.core.paths import claude_config_dir, codex_home
from kvswitch.targets.base import Target
from kvswitch.targets.claude import claude_project_target, claude_user_target
from kvswitch.targets.codex import codex_targets
from kvswitch.targets.mcp_files import client_of, is_mcp_target, mcp_target
from kvswitch.targets.memoryfile import TARGET_PREFIX as MEMORY_PREFIX
from kvswitch.targets.memoryfile import memory_target
from kvswitch.targets.opencode import opencode_project_target, opencode_user_target

SHELLS = ("bash", "zsh", "fish", "pwsh")


def targets_for_spec(spec: str, env: Mapping[str, str]) -> list[Target]:
    """Every target one spec stands for (``codex``: config.toml, auth.json, the model catalog)."""
    try:
        spec = validate_target_spec(spec)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if spec == "claude":
        return [claude_user_target(claude_config_dir(env))]
    if spec == "codex":
        return list(codex_targets(codex_home(env)))
    if spec == "opencode":
        return [opencode_user_target(env)]
    if spec in SHELLS:
        try:
            from kvswitch.targets.shell import shell_target  # noqa: PLC0415 - optional part of the build
        except ModuleNotFoundError:
            raise UsageError(f"the {spec} target is not available in this build") from None
        return [shell_target(spec, env)]
    if spec == "windows-env":
        try:
            from kvswitch.targets.winenv import WindowsEnvTarget  # noqa: PLC0415 - Windows only
        except ModuleNotFoundError:
            raise UsageError("the windows-env target is not available in this build") from None
        return [WindowsEnvTarget()]
    prefix, _, directory = spec.partition(":")
    project = Path(directory).expanduser()
    if prefix == "opencode-project":
        return [opencode_project_target(project, spec)]
    return [claude_project_target(project, local=prefix == "claude-local", target_id=spec)]


def targets_for_profile(profile: Profile, env: Mapping[str, str]) -> list[Target]:
    """The profile's targets in its order, each file once."""
    seen: dict[str, Target] = {}
    for spec in profile.targets:
        for target in targets_for_spec(spec, env):
            seen.setdefault(target.target_id, target)
    return list(seen.values())


def target_for_id(target_id: str, env: Mapping[str, str]) -> Target:
    """The target a ledger entry names."""
    if target_id.startswith(MEMORY_PREFIX):  # a memory file a prompt preset was written to
        return memory_target(target_id, env)
    if is_mcp_target(target_id):  # an MCP section (``targets.mcp_files``), not a profile's file
        return mcp_target(client_of(target_id), env)
    spec = "codex" if target_id in ("codex-auth", "codex-models") else target_id
    for target in targets_for_spec(spec, env):
        if target.target_id == target_id:
            return target
    raise UsageError(f"KV Switch's ledger names an unknown target {target_id!r}")
