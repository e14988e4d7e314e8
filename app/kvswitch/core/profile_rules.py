"""The rules a profile's fields obey, as plain functions: one definition for two readers.

``core.models.Profile`` (pydantic, what every engine uses) calls them from its validators, and the
window's start-up reader (``core.quickread``) calls the same ones to list the profiles before pydantic
is loaded. Nothing here imports pydantic, so the window can list cards without it.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Literal
from urllib.parse import urlsplit

ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: names a profile may get now; not starting with '-', which the command line would read as an option
PROFILE_NAME_RE = re.compile(r"(?!-)[^\x00-\x1f/\\]{1,64}")
#: names older versions accepted (a stored one still loads, so that it can be renamed)
STORED_PROFILE_NAME_RE = re.compile(r"[^\x00-\x1f/\\]{1,64}")
CODEX_PROVIDER_ID_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")


class ProfileKind(StrEnum):
    ANTHROPIC = "anthropic"
    OPENAI_COMPATIBLE = "openai-compatible"
    LLAMA_CPP = "llama.cpp"
    LM_STUDIO = "lm-studio"
    VLLM = "vllm"
    SGLANG = "sglang"
    OLLAMA = "ollama"
    CUSTOM = "custom"

    @property
    def is_local(self) -> bool:
        """Local servers keep a KV cache that the client's prompt prefix must not break."""
        return self in LOCAL_KINDS


#: the wire protocols a client or a backend speaks: Anthropic Messages, OpenAI Chat Completions, OpenAI
#: Responses
WireProtocol = Literal["anthropic", "openai_chat", "openai_responses"]
WIRE_PROTOCOLS: tuple[WireProtocol, ...] = ("anthropic", "openai_chat", "openai_responses")
#: the Messages API's protocol id, for modules outside ``servers`` that must not spell a vendor's name
MESSAGES_PROTOCOL: WireProtocol = "anthropic"
#: the env var a vendor reads the key from
KEY_ENVS = ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY")
#: where a local server's output can be read, and the field each kind needs
LOG_SOURCE_NEEDS = {"file": "path", "directory": "path", "command": "command", "journald": "unit"}
CONTEXT_WINDOW_RANGE = (256, 100_000_000)

LOCAL_KINDS = frozenset(
    {ProfileKind.LLAMA_CPP, ProfileKind.LM_STUDIO, ProfileKind.VLLM, ProfileKind.SGLANG, ProfileKind.OLLAMA}
)

#: Target specs as the CLI and the store spell them; ``claude-project:DIR`` / ``claude-local:DIR`` /
#: ``opencode-project:DIR`` carry a path.
SIMPLE_TARGETS = ("claude", "codex", "opencode", "bash", "zsh", "fish", "pwsh", "windows-env")
PATH_TARGETS = ("claude-project", "claude-local", "opencode-project")


def validate_target_spec(spec: str) -> str:
    """Accept ``claude``, ``claude-project:DIR``, ``claude-local:DIR``, ``codex``, ``opencode``,
    ``opencode-project:DIR``, shells, ``windows-env``."""
    if spec in SIMPLE_TARGETS:
        return spec
    prefix, sep, rest = spec.partition(":")
    if sep and prefix in PATH_TARGETS and rest.strip():
        return spec
    allowed = ", ".join([*SIMPLE_TARGETS, *(f"{prefix}:DIR" for prefix in PATH_TARGETS)])
    raise ValueError(f"unknown target {spec!r}; use one of: {allowed}")


def validate_targets(value: list[str]) -> list[str]:
    """Each spec checked; repeats dropped (the first one stays)."""
    seen: list[str] = []
    for spec in value:
        spec = validate_target_spec(spec)
        if spec not in seen:
            seen.append(spec)
    return seen


def validate_env_name(name: str) -> str:
    if not ENV_NAME_RE.fullmatch(name):
        raise ValueError(
            f"invalid environment variable name {name!r}: "
            "use letters, digits and '_', not starting with a digit"
        )
    return name


def validate_env(value: dict[str, str]) -> dict[str, str]:
    for key, val in value.items():
        validate_env_name(key)
        if "\x00" in val:
            raise ValueError(f"value of {key} contains a NUL byte, which no shell or file can hold")
    return value


def validate_base_url(url: str) -> str:
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"invalid base URL {url!r}: expected http(s)://host[:port][/path]")
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port is not None and not 1 <= port <= 65535:
        raise ValueError(f"invalid base URL {url!r}: the port must be a number from 1 to 65535")
    if any(ch.isspace() for ch in url) or "\x00" in url:
        raise ValueError(f"invalid base URL {url!r}: it contains spaces or control characters")
    if parts.query or parts.fragment:
        raise ValueError(f"invalid base URL {url!r}: remove the '?query' or '#fragment'")
    return url.rstrip("/")


def validate_profile_name(value: str, *, stored: bool) -> str:
    """Stripped; ``stored`` names (saved by older versions) may start with '-'."""
    value = value.strip()
    if not STORED_PROFILE_NAME_RE.fullmatch(value):
        raise ValueError("profile name must be 1-64 characters, without '/', '\\' or control characters")
    if not stored and not PROFILE_NAME_RE.fullmatch(value):
        raise ValueError(
            f"profile name {value!r} starts with '-', which the command line reads as an option; "
            "start it with a letter or digit"
        )
    return value


def validate_provider_id(value: str | None) -> str | None:
    if value is not None and not CODEX_PROVIDER_ID_RE.fullmatch(value):
        raise ValueError("Codex provider id may use letters, digits, '-' and '_' only")
    return value


def validate_fallbacks(value: list[str]) -> list[str]:
    """Each a profile name (stripped); repeats dropped."""
    seen: list[str] = []
    for name in value:
        name = name.strip()
        if not STORED_PROFILE_NAME_RE.fullmatch(name):
            raise ValueError(f"fallback {name!r} is not a profile name")
        if name not in seen:
            seen.append(name)
    return seen


def check_not_own_fallback(name: str, fallbacks: list[str]) -> None:
    if name in fallbacks:
        raise ValueError(f"profile {name!r} cannot be its own fallback")


def check_log_source(kind: str, fields: dict[str, object]) -> None:
    """A log source of ``kind`` needs its field (``path``, ``command`` or ``unit``) set."""
    field = LOG_SOURCE_NEEDS[kind]
    if not fields.get(field):
        raise ValueError(f"a {kind} log source needs its {field}")


def url_password(url: str) -> str | None:
    """The password of ``https://user:password@host`` (``None`` when the URL carries none)."""
    try:
        return urlsplit(url).password or None
    except ValueError:
        return None
