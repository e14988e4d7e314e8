"""LM Studio's local server: an Electron app whose server runs in a helper; logs llama.cpp lines too."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kvswitch.core.models import LogSource, ProfileKind
from kvswitch.core.paths import home_dir
from kvswitch.servers.base import Get, PortFacts, PortSignature, ProcessSignature, Server, positive_int

#: the provider id Codex has built in for it (a ``config.toml`` must not redefine it)
CODEX_PROVIDER_ID = "lmstudio"


def _log(env: Mapping[str, str] | None) -> LogSource:
    return LogSource(kind="directory", path=str(home_dir(env) / ".lmstudio" / "server-logs"))


def _find_log(env: Mapping[str, str] | None, unit_dirs: Sequence[Path]) -> LogSource:
    """The first server-logs directory that exists (new and old app layouts), else the usual one."""
    home = home_dir(env)
    for candidate in (home / ".lmstudio" / "server-logs", home / ".cache" / "lm-studio" / "server-logs"):
        if candidate.is_dir():
            return LogSource(kind="directory", path=str(candidate))
    return _log(env)


def _models_shape(status: int, payload: Any) -> bool:
    return status == 200 and isinstance(payload, dict) and isinstance(payload.get("data"), list)


def _models_facts(get: Get, payload: Any) -> PortFacts:
    """The loaded model (else the first LLM) and its context, from ``/api/v0/models``."""
    entries = [item for item in payload["data"] if isinstance(item, dict) and item.get("id")]
    loaded = [item for item in entries if item.get("state") == "loaded"]
    chosen = loaded or [item for item in entries if item.get("type") in ("llm", "vlm")] or entries
    context = None
    if chosen:
        context = positive_int(chosen[0].get("loaded_context_length") or chosen[0].get("max_context_length"))
    return PortFacts(None, tuple(str(item["id"]) for item in chosen), context)


SERVER = Server(
    kind=ProfileKind.LM_STUDIO,
    label="LM Studio",
    short_label="LM Studio",
    badge="LM",
    base_url="http://127.0.0.1:1234",
    description="LM Studio's local server; logs in ~/.lmstudio/server-logs.",
    local=True,
    aliases=("lmstudio", "lm_studio"),
    log=_log,
    discover_log=_find_log,
    log_formats=("lm-studio", "llama.cpp"),
    process=ProcessSignature(
        programs=("lm studio", "lm-studio", "lmstudio", "llmster"),
        program_prefixes=("lm-studio",),
        # Electron helpers (renderer, GPU) share the name; only the main process hosts the server.
        helper_arg_prefixes=("--type=",),
        listens_in_children=True,
    ),
    port_answer=PortSignature("/api/v0/models", _models_shape, _models_facts),
)
