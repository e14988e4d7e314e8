"""The profile: everything one backend needs, validated once so every writer can trust it.

Values here end up inside shells, TOML and JSON files of other tools, so validation is strict: a bad
URL or env name is rejected with a message that says what to change, before any file is touched.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    SerializationInfo,
    ValidationInfo,
    field_serializer,
    field_validator,
    model_validator,
)

from kvswitch.core.dangerous_env import dangerous_env
from kvswitch.core.errors import ProfileError
from kvswitch.core.profile_rules import CONTEXT_WINDOW_RANGE, check_log_source, check_not_own_fallback
from kvswitch.core.profile_rules import ENV_NAME_RE as ENV_NAME_RE
from kvswitch.core.profile_rules import LOCAL_KINDS as LOCAL_KINDS
from kvswitch.core.profile_rules import MESSAGES_PROTOCOL as MESSAGES_PROTOCOL
from kvswitch.core.profile_rules import PATH_TARGETS as PATH_TARGETS
from kvswitch.core.profile_rules import PROFILE_NAME_RE as PROFILE_NAME_RE
from kvswitch.core.profile_rules import SIMPLE_TARGETS as SIMPLE_TARGETS
from kvswitch.core.profile_rules import STORED_PROFILE_NAME_RE as STORED_PROFILE_NAME_RE
from kvswitch.core.profile_rules import WIRE_PROTOCOLS as WIRE_PROTOCOLS
from kvswitch.core.profile_rules import ProfileKind as ProfileKind
from kvswitch.core.profile_rules import WireProtocol as WireProtocol
from kvswitch.core.profile_rules import url_password as url_password
from kvswitch.core.profile_rules import validate_base_url as validate_base_url
from kvswitch.core.profile_rules import validate_env as validate_env
from kvswitch.core.profile_rules import validate_env_name as validate_env_name
from kvswitch.core.profile_rules import validate_fallbacks as validate_fallbacks
from kvswitch.core.profile_rules import validate_profile_name as validate_profile_name
from kvswitch.core.profile_rules import validate_provider_id as validate_provider_id
from kvswitch.core.profile_rules import validate_target_spec as validate_target_spec
from kvswitch.core.profile_rules import validate_targets as validate_targets


class ModelMap(BaseModel):
    """Claude Code's per-role model overrides (each becomes one env var)."""

    model_config = ConfigDict(extra="forbid")

    opus: str | None = None
    sonnet: str | None = None
    haiku: str | None = None
    small_fast: str | None = None
    subagent: str | None = None

    ENV_NAMES: ClassVar[dict[str, str]] = {
        "opus": "ANTHROPIC_DEFAULT_OPUS_MODEL",
        "sonnet": "ANTHROPIC_DEFAULT_SONNET_MODEL",
        "haiku": "ANTHROPIC_DEFAULT_HAIKU_MODEL",
        "small_fast": "ANTHROPIC_SMALL_FAST_MODEL",
        "subagent": "CLAUDE_CODE_SUBAGENT_MODEL",
    }

    def env(self) -> dict[str, str]:
        return {env: value for field, env in self.ENV_NAMES.items() if (value := getattr(self, field))}


class LogSource(BaseModel):
    """Where a local server's output can be read."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["file", "directory", "command", "journald"]
    path: str | None = None  # file, or directory of dated logs (a server that starts one a day)
    command: list[str] | None = None  # a server KV Switch starts itself
    unit: str | None = None  # systemd unit (a server installed as a service on Linux)

    @model_validator(mode="after")
    def _needs_its_field(self) -> LogSource:
        check_log_source(self.kind, {"path": self.path, "command": self.command, "unit": self.unit})
        return self


class Profile(BaseModel):
    """One backend. ``api_key`` is a ``SecretStr``: it never shows in repr, logs or default dumps.

    Serialise with ``model_dump(mode="json", context={"secrets": True})`` to get the key in clear
    (the store does this, into a 0600 file); any other dump masks it.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    name: str
    kind: ProfileKind = ProfileKind.CUSTOM
    base_url: str
    api_key: SecretStr | None = None
    key_env: Literal["ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY"] = "ANTHROPIC_AUTH_TOKEN"  # the vendor's
    model: str | None = None
    models: ModelMap = Field(default_factory=ModelMap)
    env: dict[str, str] = Field(default_factory=dict)
    targets: list[str] = Field(default_factory=lambda: ["claude"])
    log: LogSource | None = None
    codex_provider_id: str | None = None
    notes: str = ""
    #: the user confirmed env entries that change how a shell, the loader or Node behaves (PATH, LD_*...)
    allow_dangerous_env: bool = False
    #: the clients point at the local KV Switch gateway, which forwards to this profile's backend: the
    #: client files are written once, and switching between gateway profiles rewrites no file
    via_gateway: bool = False
    #: profiles the gateway tries, in order, when this one's upstream fails before any byte was sent
    fallbacks: list[str] = Field(default_factory=list)
    #: the protocol the backend is spoken to in; ``None`` means what the backend serves for the client
    protocol: WireProtocol | None = None
    #: the backend's context window per request in tokens (a local server's per-slot context, read from
    #: its ``/props``): clients that do not know the model are told it, so they compact in time
    context_window: int | None = Field(default=None, ge=CONTEXT_WINDOW_RANGE[0], le=CONTEXT_WINDOW_RANGE[1])
    #: local backends only: the gateway puts the parts of Claude Code's prompt that every conversation
    #: in a project shares before the user's own words, so a new conversation reuses the server's cache
    stable_prefix: bool = False
    #: local servers with slots only (``servers.protocols.session_slots``): the gateway sends Claude
    #: Code's requests through the chat bridge with a slot per session (its main conversation one
    #: slot, its side requests another), so a second session or a side request does not overwrite
    #: the main conversation's cached prompt
    slot_affinity: bool = False
    #: local backends only: Claude Code's ``system``-role messages inside ``messages`` (since 2.1.154)
    #: reach the server as ``user``-role messages in the same place, their text in ``<system-reminder>``
    #: tags, for chat templates that accept a system message only at the beginning
    inline_system_as_user: bool = False

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str, info: ValidationInfo) -> str:
        context: Any = info.context
        return validate_profile_name(value, stored=isinstance(context, dict) and bool(context.get("stored")))

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        return validate_base_url(value)

    @field_validator("env")
    @classmethod
    def _check_env(cls, value: dict[str, str]) -> dict[str, str]:
        return validate_env(value)

    @field_validator("targets")
    @classmethod
    def _check_targets(cls, value: list[str]) -> list[str]:
        return validate_targets(value)

    @field_validator("codex_provider_id")
    @classmethod
    def _check_provider_id(cls, value: str | None) -> str | None:
        return validate_provider_id(value)

    @field_validator("fallbacks")
    @classmethod
    def _check_fallbacks(cls, value: list[str]) -> list[str]:
        return validate_fallbacks(value)

    @model_validator(mode="after")
    def _check_fallback_not_self(self) -> Profile:
        check_not_own_fallback(self.name, self.fallbacks)
        return self

    @model_validator(mode="after")
    def _check_dangerous_env(self, info: ValidationInfo) -> Profile:
        context: Any = info.context
        if isinstance(context, dict) and context.get("stored"):
            return self  # saved by an older version; writers still refuse it (``confirmed_env``)
        if not self.allow_dangerous_env:
            found = dangerous_env(self.env)
            if found:
                raise ValueError(dangerous_env_message(found))
        return self

    def confirmed_env(self) -> dict[str, str]:
        """The env block for writers: refused while it holds dangerous names the user did not confirm."""
        if not self.allow_dangerous_env:
            found = dangerous_env(self.env)
            if found:
                raise ProfileError(f"profile {self.name!r}: {dangerous_env_message(found)}")
        return self.env

    @field_serializer("api_key")
    def _dump_key(self, key: SecretStr | None, info: SerializationInfo) -> str | None:
        if key is None:
            return None
        context: Any = info.context
        if isinstance(context, dict) and context.get("secrets"):
            return key.get_secret_value()
        return mask_secret(key.get_secret_value())

    @property
    def key(self) -> str:
        """The API key in clear ('' when none): for writers only, never for display."""
        return self.api_key.get_secret_value() if self.api_key else ""

    @property
    def is_local(self) -> bool:
        return self.kind.is_local

    @property
    def secrets(self) -> list[str]:
        """Every secret this profile holds in clear (key, password in the base URL): what masking hides."""
        return [s for s in (self.key, url_password(self.base_url)) if s]


def dangerous_env_message(found: dict[str, str]) -> str:
    listed = "; ".join(f"{name}: {reason}" for name, reason in found.items())
    return (
        f"env {listed}. KV Switch refuses such names unless you confirm "
        "(kvswitch: --allow-dangerous-env; window: the \u201cAllow risky environment variables\u201d box)"
    )


def _replace_password(url: str, replacement: str | None) -> str:
    if url_password(url) is None:
        return url
    netloc = urlsplit(url).netloc
    userinfo, _, host = netloc.rpartition("@")
    user = userinfo.split(":", 1)[0]
    return url.replace(netloc, f"{user}{'' if replacement is None else ':' + replacement}@{host}", 1)


def mask_url(url: str) -> str:
    """``url`` with its password masked like a key (for display)."""
    password = url_password(url)
    return url if password is None else _replace_password(url, mask_secret(password))


def strip_url_password(url: str) -> str:
    """``url`` without its password (for exports without keys: a masked one would import wrongly)."""
    return _replace_password(url, None)


def mask_secret(value: str) -> str:
    """Show enough of a key to recognise it, never enough to use it."""
    if not value:
        return ""
    if len(value) <= 8:
        return "•" * len(value)
    return f"{value[:3]}…{value[-4:]}" if len(value) >= 16 else f"{value[:2]}…"
