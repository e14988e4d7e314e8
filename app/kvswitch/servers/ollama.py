"""Ollama: its own API (``/api/chat``), configured by env; 0.30+ runs llama-server as a private runner."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kvswitch.core.models import LogSource, ProfileKind
from kvswitch.core.paths import home_dir
from kvswitch.servers.base import (
    Advice,
    CacheSource,
    Get,
    PortFacts,
    PortSignature,
    ProcessSignature,
    Reading,
    Server,
    as_int,
)

#: Ollama's native chat API
CHAT_API = "ollama"
SYSTEMD_UNIT = "ollama.service"
#: the provider id Codex has built in for it (a ``config.toml`` must not redefine it)
CODEX_PROVIDER_ID = "ollama"
#: its native model list: route, the list's key, each entry's id key (instead of ``/v1/models``)
MODEL_LIST = ("/api/tags", "models", "name")


def _log(env: Mapping[str, str] | None) -> LogSource:
    if sys.platform == "darwin":
        return LogSource(kind="file", path=str(home_dir(env) / ".ollama" / "logs" / "server.log"))
    if sys.platform == "win32":
        local = (env or {}).get("LOCALAPPDATA") or str(home_dir(env) / "AppData" / "Local")
        return LogSource(kind="file", path=f"{local}\\Ollama\\server.log")
    return LogSource(kind="journald", unit="ollama")


def _find_log(env: Mapping[str, str] | None, unit_dirs: Sequence[Path]) -> LogSource | None:
    """On Linux the journal only when systemd runs it (the installer's unit); elsewhere its log file."""
    if sys.platform.startswith("linux"):
        has_unit = any((directory / SYSTEMD_UNIT).is_file() for directory in unit_dirs)
        return LogSource(kind="journald", unit="ollama") if has_unit else None
    return _log(env)


def _version_shape(status: int, payload: Any) -> bool:
    return status == 200 and isinstance(payload, dict) and isinstance(payload.get("version"), str)


def _version_facts(get: Get, payload: Any) -> PortFacts:
    _, tags = get("/api/tags")
    entries = tags.get("models") if isinstance(tags, dict) else None
    models = tuple(
        str(entry["name"]) for entry in entries or () if isinstance(entry, dict) and entry.get("name")
    )
    return PortFacts(str(payload["version"]), models)


def read_prompt_eval(obj: Mapping[str, Any]) -> list[Reading]:
    """``prompt_eval_cached_count`` when the build reports it; else the processed count alone."""
    if "prompt_eval_count" not in obj and "prompt_eval_cached_count" not in obj:
        return []
    evaluated = as_int(obj.get("prompt_eval_count"))
    cached = as_int(obj.get("prompt_eval_cached_count"))
    if cached is not None:
        return [Reading("prompt_eval_cached_count", cached, evaluated)]
    return [Reading("prompt_eval_count", None, evaluated)]


def infer_from_drop(cold: list[Reading], warm: list[Reading]) -> tuple[Reading, str] | None:
    """Older builds count only the tokens they processed: a warm count under half the cold one is reuse."""
    before = next((r.prompt for r in cold if r.source == "prompt_eval_count" and r.prompt), None)
    after = next((r.prompt for r in warm if r.source == "prompt_eval_count" and r.prompt is not None), None)
    if before and after is not None and after < before * 0.5:
        why = "older Ollama counts only new tokens"
        return Reading("prompt_eval_count drop", before - after, before), why
    return None


SERVER = Server(
    kind=ProfileKind.OLLAMA,
    label="Ollama",
    short_label="Ollama",
    badge="Ol",
    base_url="http://127.0.0.1:11434",
    description="Ollama (0.30+ runs llama-server internally).",
    local=True,
    log=_log,
    discover_log=_find_log,
    log_formats=("ollama", "llama.cpp"),
    process=ProcessSignature(
        programs=("ollama",),
        subcommand="serve",
        address_env="OLLAMA_HOST",
        context_env="OLLAMA_CONTEXT_LENGTH",
        parallel_env="OLLAMA_NUM_PARALLEL",
    ),
    port_answer=PortSignature("/api/version", _version_shape, _version_facts),
    routes=((CHAT_API, "/api/chat"),),
    preferred_apis=(CHAT_API,),
    answer_sources=(CacheSource("prompt_eval_cached_count", 50), CacheSource("prompt_eval_count drop", 90)),
    answer_reader=read_prompt_eval,
    infer_reuse=infer_from_drop,
    advice=Advice(
        miss=(
            "Ollama re-processed the prompt: the model may have been reloaded (keep_alive) or num_ctx changed"
        ),
    ),
)
