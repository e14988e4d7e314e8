"""Which server is behind a base URL, and which of its APIs the probe should speak.

Users paste base URLs with and without ``/v1`` (Claude Code wants the root, Codex and OpenAI clients
the ``/v1`` form), so everything is resolved from the root. Detection only uses cheap GETs that every
server answers quickly (``/props``, ``/api/version``, ``/v1/models``, ``/metrics``); the API is then
confirmed by the probe itself: a 404/405 on the first request moves on to the next candidate.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kvswitch.core.models import Profile, ProfileKind
from kvswitch.verify.probe import Guard, get_json_or_text

ANTHROPIC = "anthropic"
OPENAI_CHAT = "openai-chat"
OPENAI_RESPONSES = "openai-responses"
LLAMACPP_COMPLETION = "llamacpp-completion"
OLLAMA = "ollama"
APIS = (ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES, LLAMACPP_COMPLETION, OLLAMA)

ENDPOINTS = {
    ANTHROPIC: "/v1/messages",
    OPENAI_CHAT: "/v1/chat/completions",
    OPENAI_RESPONSES: "/v1/responses",
    LLAMACPP_COMPLETION: "/completion",
    OLLAMA: "/api/chat",
}

_KIND_SERVER = {
    ProfileKind.LLAMA_CPP: "llama.cpp",
    ProfileKind.OLLAMA: "ollama",
    ProfileKind.VLLM: "vllm",
    ProfileKind.SGLANG: "sglang",
    ProfileKind.LM_STUDIO: "lm-studio",
    ProfileKind.ANTHROPIC: "anthropic",
}


@dataclass
class ServerInfo:
    """What the GETs revealed: the server family, its model names and whether /metrics has cache counters."""

    server: str = "unknown"
    models: list[str] = field(default_factory=list)
    metrics_url: str | None = None
    notes: list[str] = field(default_factory=list)


def api_root(base_url: str) -> str:
    """``http://h:8080/v1`` and ``http://h:8080`` both give ``http://h:8080``."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def auth_headers(profile: Profile, api: str) -> dict[str, str]:
    """The headers the agent itself would send; Anthropic proper wants ``x-api-key``."""
    headers: dict[str, str] = {}
    if api == ANTHROPIC:
        headers["anthropic-version"] = "2023-06-01"
    if profile.key:
        if profile.kind == ProfileKind.ANTHROPIC:
            headers["x-api-key"] = profile.key
        else:
            headers["authorization"] = f"Bearer {profile.key}"
    return headers


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None


def detect_server(guard: Guard, profile: Profile) -> ServerInfo:
    """Identify the server with a few short GETs; never fails (an unknown server is still probed)."""
    info = ServerInfo(server=_KIND_SERVER.get(profile.kind, "unknown"))
    if profile.kind == ProfileKind.ANTHROPIC:
        return info
    root = api_root(profile.base_url)
    headers = auth_headers(profile, OPENAI_CHAT)
    props = get_json_or_text(guard, root + "/props", headers)
    if props and props[0] == 200:
        data = _json(props[2])
        if isinstance(data, Mapping) and ("default_generation_settings" in data or "build_info" in data):
            info.server = "llama.cpp"
    if info.server in ("unknown", "ollama"):
        version = get_json_or_text(guard, root + "/api/version", headers)
        data = _json(version[2]) if version and version[0] == 200 else None
        if isinstance(data, Mapping) and "version" in data:
            info.server = "ollama"
            info.notes.append(f"Ollama {data['version']}")
    models = get_json_or_text(guard, root + "/v1/models", headers)
    data = _json(models[2]) if models and models[0] == 200 else None
    if isinstance(data, Mapping) and isinstance(data.get("data"), list):
        for item in data["data"]:
            if isinstance(item, Mapping) and isinstance(item.get("id"), str):
                info.models.append(item["id"])
                owner = str(item.get("owned_by", "")).lower()
                if info.server == "unknown" and owner in ("vllm", "sglang", "llamacpp"):
                    info.server = {"llamacpp": "llama.cpp"}.get(owner, owner)
    metrics = get_json_or_text(guard, root + "/metrics", headers)
    if (
        metrics
        and metrics[0] == 200
        and any(
            marker in metrics[2]
            for marker in (b"llamacpp:prompt_tokens_cached", b"vllm:prefix_cache", b"sglang:")
        )
    ):
        info.metrics_url = root + "/metrics"
    return info


def candidate_apis(profile: Profile, server: ServerInfo, forced: str | None = None) -> list[str]:
    """APIs to try, best first: the one the profile's agent speaks, then the richest one for the server."""
    if forced:
        return [forced]
    if profile.kind == ProfileKind.ANTHROPIC or server.server == "anthropic":
        return [ANTHROPIC]
    wants_claude = any(t.startswith("claude") for t in profile.targets)
    wants_codex = "codex" in profile.targets
    order: list[str] = []
    if server.server == "ollama":
        order.append(OLLAMA)
    if server.server == "llama.cpp":
        # its chat stream ends with timings.cache_n reliably; its Anthropic stream can drop message_start
        order.append(OPENAI_CHAT)
    if wants_claude:
        order.append(ANTHROPIC)
    if wants_codex:
        order.append(OPENAI_RESPONSES)
    order += [OPENAI_CHAT, ANTHROPIC, OPENAI_RESPONSES]
    if server.server == "llama.cpp":
        order.append(LLAMACPP_COMPLETION)
    return list(dict.fromkeys(order))


def pick_model(profile: Profile, server: ServerInfo) -> str:
    if profile.model:
        return profile.model
    if server.models:
        return server.models[0]
    return "default"
