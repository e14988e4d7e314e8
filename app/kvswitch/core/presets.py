"""Sensible starting values per backend kind.

Local servers keep one KV cache per slot; anything in the request prefix that changes per conversation
(Claude Code's billing block) or per request throws that cache away. So every local preset carries the
cache-safe env, and knows where its server usually logs so the log panel works without setup.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from kvswitch.core.models import LOCAL_KINDS, LogSource, Profile, ProfileKind
from kvswitch.core.paths import home_dir

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


def _lmstudio_log(env: Mapping[str, str] | None) -> LogSource:
    return LogSource(kind="directory", path=str(home_dir(env) / ".lmstudio" / "server-logs"))


def _ollama_log(env: Mapping[str, str] | None) -> LogSource:
    if sys.platform == "darwin":
        return LogSource(kind="file", path=str(home_dir(env) / ".ollama" / "logs" / "server.log"))
    if sys.platform == "win32":
        local = (env or {}).get("LOCALAPPDATA") or str(home_dir(env) / "AppData" / "Local")
        return LogSource(kind="file", path=f"{local}\\Ollama\\server.log")
    return LogSource(kind="journald", unit="ollama")


def preset(kind: ProfileKind | str, env: Mapping[str, str] | None = None) -> Preset:
    """The preset for ``kind``; log locations are resolved against ``env``'s HOME (default: os.environ)."""
    kind = ProfileKind(kind)
    local_env = dict(CACHE_SAFE_ENV)
    match kind:
        case ProfileKind.ANTHROPIC:
            return Preset(
                kind,
                "Anthropic",
                "https://api.anthropic.com",
                needs_key=True,
                description="Anthropic's own API (Claude Code's default backend).",
            )
        case ProfileKind.OPENAI_COMPATIBLE:
            return Preset(
                kind,
                "OpenAI-compatible gateway",
                "https://api.openai.com/v1",
                needs_key=True,
                description="Any gateway speaking the OpenAI API (Codex) or Anthropic API (Claude Code).",
            )
        case ProfileKind.LLAMA_CPP:
            return Preset(
                kind,
                "llama.cpp (llama-server)",
                "http://127.0.0.1:8080",
                local_env,
                description="llama-server; run it with --log-file to let KV Switch follow its log.",
            )
        case ProfileKind.LM_STUDIO:
            return Preset(
                kind,
                "LM Studio",
                "http://127.0.0.1:1234",
                local_env,
                _lmstudio_log(env),
                description="LM Studio's local server; logs in ~/.lmstudio/server-logs.",
            )
        case ProfileKind.VLLM:
            return Preset(
                kind,
                "vLLM",
                "http://127.0.0.1:8000",
                local_env,
                description="vLLM (optionally with LMCache).",
            )
        case ProfileKind.SGLANG:
            return Preset(
                kind,
                "SGLang",
                "http://127.0.0.1:30000",
                local_env,
                description="SGLang; start it with --enable-cache-report to see cached tokens.",
            )
        case ProfileKind.OLLAMA:
            return Preset(
                kind,
                "Ollama",
                "http://127.0.0.1:11434",
                local_env,
                _ollama_log(env),
                description="Ollama (0.30+ runs llama-server internally).",
            )
        case _:
            return Preset(
                kind, "Custom", "http://127.0.0.1:8080", description="Anything else; nothing is pre-filled."
            )


class _Presets(Mapping[ProfileKind, Preset]):
    """Every kind's preset, resolved on each access so a changed HOME (tests, ``--config-dir``) is seen."""

    def __getitem__(self, kind: ProfileKind | str) -> Preset:
        try:
            return preset(kind)
        except ValueError:
            raise KeyError(kind) from None

    def __iter__(self) -> Iterator[ProfileKind]:
        return iter(ProfileKind)

    def __len__(self) -> int:
        return len(ProfileKind)


#: Every kind's preset (a read-only mapping ``ProfileKind -> Preset``).
PRESETS: Mapping[ProfileKind, Preset] = _Presets()


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
