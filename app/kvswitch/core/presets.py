"""What a preset is, and the env every local preset carries; each kind's values live in its server module.

Local servers keep one KV cache per slot; anything in the request prefix that changes per conversation
(Claude Code's billing block) or per request throws that cache away. So every local preset carries the
cache-safe env, and knows where its server usually logs so the log panel works without setup. The
values per kind are in :mod:`kvswitch.servers` (``servers.preset(kind)``, ``servers.PRESETS``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from kvswitch.core.models import LOCAL_KINDS, LogSource, Profile, ProfileKind

#: Env that keeps Claude Code's request prefix stable and keeps it from calling home from a local setup.
CACHE_SAFE_ENV: dict[str, str] = {
    "CLAUDE_CODE_ATTRIBUTION_HEADER": "0",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_ENABLE_TELEMETRY": "0",
}

#: Kinds whose OpenAI routes live under ``/v1`` of the server root (what Codex needs as ``base_url``).
V1_KINDS = frozenset(LOCAL_KINDS)

OPENAI_HOST = "api.openai.com"


@dataclass(frozen=True)
class Preset:
    """Defaults for one kind; ``log`` is where the server logs on this machine, when that is known."""

    kind: ProfileKind
    label: str
    base_url: str
    env: dict[str, str] = field(default_factory=dict)
    log: LogSource | None = None
    needs_key: bool = False
    description: str = ""


def codex_base_url(profile: Profile) -> str:
    """Where Codex finds the profile's OpenAI ``/responses`` route.

    Local servers serve OpenAI routes under ``/v1`` of the root the profile names (which is also what
    Claude Code wants for ``/v1/messages``); gateways are taken as given, since their path is theirs.
    """
    url = profile.base_url.rstrip("/")
    if profile.kind in V1_KINDS and not url.endswith("/v1"):
        return url + "/v1"
    return url


def is_openai_hosted(profile: Profile) -> bool:
    """OpenAI's own API: Codex's built-in ``openai`` provider, keyed through auth.json."""
    return (
        profile.kind == ProfileKind.OPENAI_COMPATIBLE and urlsplit(profile.base_url).hostname == OPENAI_HOST
    )
