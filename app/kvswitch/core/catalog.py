"""Cloud vendors' Messages-API-compatible endpoints, as data (``core/data/vendors.json``).

Adding a DeepSeek or Kimi profile by hand means knowing the vendor's Messages API path, its model IDs per
tier and which variable its key goes in; the catalog carries those facts with the source each was taken
from, so a profile can be filled from an id and lint can compare a typed URL with the vendor's own.
Local servers are not here: their defaults come from ``core.presets``.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from kvswitch.core.errors import KvSwitchError, UsageError
from kvswitch.core.models import MESSAGES_PROTOCOL, WireProtocol, validate_base_url

KeyEnv = Literal["ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY"]
VerifiableField = Literal["base_url", "key_env", "models", "codex_base_url", "keys_url"]
TierName = Literal["main", "opus", "sonnet", "haiku", "subagent", "small_fast"]


class VendorName(BaseModel):
    model_config = ConfigDict(extra="forbid")

    en: str
    zh_CN: str


class Vendor(BaseModel):
    """One vendor endpoint. ``verified`` names the fields checked against the vendor's own docs
    (``docs_url``); the others are as ``source`` gives them, so checks built on them only advise."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,47}$")
    name: VendorName
    base_url: str
    key_env: KeyEnv
    models: dict[TierName, str] = Field(default_factory=dict)
    keys_url: str | None = None
    docs_url: str | None = None
    codex_base_url: str | None = None
    source: str
    verified: tuple[VerifiableField, ...] = ()
    notes: str = ""
    #: what ``base_url`` serves to Claude Code: its own protocol, or chat completions (a bridge then)
    claude_protocol: WireProtocol = MESSAGES_PROTOCOL
    #: what ``codex_base_url`` serves to Codex (``None``: no Codex endpoint)
    codex_protocol: WireProtocol | None = None
    #: the date (YYYY-MM-DD) and the vendor's page the two protocols were checked against
    protocol_checked: str | None = Field(default=None, pattern=r"^\d{4}-\d{2}-\d{2}$")
    protocol_source: str | None = None

    @field_validator("base_url", "codex_base_url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        return None if value is None else validate_base_url(value)

    @property
    def host(self) -> str:
        return urlsplit(self.base_url).hostname or ""

    @property
    def path(self) -> str:
        return urlsplit(self.base_url).path.rstrip("/")

    @model_validator(mode="after")
    def _codex_protocol_needs_its_url(self) -> Vendor:
        if (self.codex_protocol is None) != (self.codex_base_url is None):
            raise ValueError(f"{self.id}: codex_protocol and codex_base_url go together")
        return self

    def display_name(self, locale: str = "en") -> str:
        return self.name.zh_CN if locale.startswith("zh") else self.name.en


class _CatalogFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_: int = Field(alias="schema")
    about: str = ""
    vendors: list[Vendor]


def parse_catalog(text: str, where: str = "vendors.json") -> tuple[Vendor, ...]:
    """Validate catalog JSON; duplicate ids are refused so ``vendor(id)`` is unambiguous."""
    try:
        data = _CatalogFile.model_validate(json.loads(text))
    except (ValueError, ValidationError) as exc:
        raise KvSwitchError(f"{where}: the vendor catalog is invalid: {exc}") from None
    seen: set[str] = set()
    for entry in data.vendors:
        if entry.id in seen:
            raise KvSwitchError(f"{where}: vendor id {entry.id!r} appears twice")
        seen.add(entry.id)
    return tuple(data.vendors)


@functools.cache
def vendors() -> tuple[Vendor, ...]:
    """Every vendor in the packaged catalog (read once per process)."""
    text = resources.files("kvswitch.core").joinpath("data/vendors.json").read_text(encoding="utf-8")
    return parse_catalog(text)


def vendor(vendor_id: str) -> Vendor:
    for entry in vendors():
        if entry.id == vendor_id:
            return entry
    raise UsageError(f"no vendor preset {vendor_id!r}; 'kvswitch preset list' shows the ids")


def vendors_for_host(host: str) -> list[Vendor]:
    """Catalog entries on ``host`` (several vendors' plans can share one host, e.g. Volcengine Ark)."""
    host = host.lower()
    return [entry for entry in vendors() if entry.host == host]
