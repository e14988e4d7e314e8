"""Which server is behind a base URL, and which of its APIs the probe should speak.

Users paste base URLs with and without ``/v1`` (Claude Code wants the root, Codex and OpenAI clients
the ``/v1`` form), so everything is resolved from the root. Detection only uses cheap GETs that every
server answers quickly (each server's identifying route, ``/v1/models``, ``/metrics``); the API is then
confirmed by the probe itself: a 404/405 on the first request moves on to the next candidate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kvswitch import servers
from kvswitch.core.models import Profile
from kvswitch.core.strictparse import loads as strict_json
from kvswitch.servers import API_VERSION_HEADER, MESSAGES_API, NATIVE_CHAT_API, NATIVE_COMPLETION_API
from kvswitch.verify.instances import Instances, detect_instances
from kvswitch.verify.probe import Guard, get_json_or_text

MESSAGES = MESSAGES_API
OPENAI_CHAT = "openai-chat"
OPENAI_RESPONSES = "openai-responses"
_SERVER_ROUTES = servers.routes()
NATIVE_COMPLETION = NATIVE_COMPLETION_API
NATIVE_CHAT = NATIVE_CHAT_API
APIS = (MESSAGES, OPENAI_CHAT, OPENAI_RESPONSES, *_SERVER_ROUTES)

ENDPOINTS = {
    MESSAGES: "/v1/messages",
    OPENAI_CHAT: "/v1/chat/completions",
    OPENAI_RESPONSES: "/v1/responses",
    **_SERVER_ROUTES,
}


@dataclass
class ServerInfo:
    """What the GETs revealed: the server family, its model names and whether /metrics has cache counters."""

    server: str = "unknown"
    models: list[str] = field(default_factory=list)
    metrics_url: str | None = None
    notes: list[str] = field(default_factory=list)
    #: the URL is a router in front of several instances (listed by the router itself): verify reads each
    instances: Instances | None = None


def api_root(base_url: str) -> str:
    """``http://h:8080/v1`` and ``http://h:8080`` both give ``http://h:8080``."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def auth_headers(profile: Profile, api: str) -> dict[str, str]:
    """The headers the agent itself would send (the key the way the profile's server wants it)."""
    headers: dict[str, str] = {}
    if api == MESSAGES:
        headers[API_VERSION_HEADER[0]] = API_VERSION_HEADER[1]
    if profile.key:
        name, prefix = servers.get(profile.kind).key_header
        headers[name] = prefix + profile.key
    return headers


def _json(raw: bytes) -> Any:
    try:
        return strict_json(raw)
    except ValueError:
        return None


def detect_server(guard: Guard, profile: Profile) -> ServerInfo:
    """Identify the server with a few short GETs; never fails (an unknown server is still probed).

    The server is named by :func:`kvswitch.servers.identify` (the same routine port detection uses);
    when no route answers in a known shape, the profile's kind (or ``owned_by`` in ``/v1/models``) says.
    """
    declared = servers.get(profile.kind)
    info = ServerInfo(server=declared.name if declared.specific else "unknown")
    if declared.vendor_api:
        return info
    root = api_root(profile.base_url)
    headers = auth_headers(profile, OPENAI_CHAT)
    answers: dict[str, tuple[int, Any, bytes]] = {}

    def get(path: str) -> tuple[int, Any]:
        if path not in answers:
            got = get_json_or_text(guard, root + path, headers)
            answers[path] = (got[0], _json(got[2]), got[2]) if got else (0, None, b"")
        return answers[path][:2]

    found = servers.identify(get)
    if found is not None:
        info.server = found.server.name
        if found.facts.version:
            info.notes.append(f"{found.server.short_label} {found.facts.version}")
    status, data = get("/v1/models")
    if status == 200 and isinstance(data, Mapping) and isinstance(data.get("data"), list):
        for item in data["data"]:
            if isinstance(item, Mapping) and isinstance(item.get("id"), str):
                info.models.append(item["id"])
                owner = servers.by_owner(str(item.get("owned_by", "")).lower())
                if info.server == "unknown" and owner is not None:
                    info.server = owner.name
    info.instances = detect_instances(get, info.server)
    get("/metrics")
    status, _, body = answers["/metrics"]
    if status == 200 and any(marker.encode() in body for marker in servers.metrics_markers()):
        info.metrics_url = root + "/metrics"
    return info


def candidate_apis(profile: Profile, server: ServerInfo, forced: str | None = None) -> list[str]:
    """APIs to try, best first: the one the profile's agent speaks, then the richest one for the server."""
    if forced:
        return [forced]
    known = servers.find(server.server)
    only = servers.get(profile.kind).only_apis or (known.only_apis if known else ())
    if only:
        return list(only)
    wants_claude = any(t.startswith("claude") for t in profile.targets)
    wants_codex = "codex" in profile.targets
    order: list[str] = list(known.preferred_apis) if known else []
    if wants_claude:
        order.append(MESSAGES)
    if wants_codex:
        order.append(OPENAI_RESPONSES)
    order += [OPENAI_CHAT, MESSAGES, OPENAI_RESPONSES]
    if known:
        order += known.fallback_apis
    return list(dict.fromkeys(order))


def pick_model(profile: Profile, server: ServerInfo) -> str:
    if profile.model:
        return profile.model
    if server.models:
        return server.models[0]
    return "default"
