"""Presets as data: the local kinds (from the servers registry) and the catalog's cloud vendors, and
the starting data a profile made from one begins with.

Below the command modules so ``preset``, ``profile add --preset`` and the window's gallery all build
the same profile from the same preset id without importing each other.
"""

from __future__ import annotations

from typing import Any

from kvswitch.core.catalog import Vendor, vendor, vendors
from kvswitch.core.errors import UsageError
from kvswitch.core.models import ProfileKind
from kvswitch.servers import PRESETS, get, preset

#: the catalog's vendors are gateways speaking Anthropic's API; Anthropic itself has its own kind
VENDOR_KIND = {"anthropic": ProfileKind.ANTHROPIC}


def preset_entries(locale: str = "en") -> list[dict[str, Any]]:
    """Every preset as plain data: local kinds first (id = kind), then the catalog's vendors."""
    entries: list[dict[str, Any]] = []
    for kind, local in PRESETS.items():
        if kind.is_local:
            served = list(get(kind).protocols)
            entries.append({"id": kind.value, "name": local.label, "base_url": local.base_url,
                            "kind": kind.value, "local": True, "description": local.description,
                            "protocols": {"claude": served, "codex": served}})
    for entry in vendors():
        data = entry.model_dump(exclude_none=True)
        entries.append({"id": entry.id, "name": entry.display_name(locale), "base_url": entry.base_url,
                        "kind": vendor_kind(entry).value, "local": False,
                        **{k: v for k, v in data.items() if k not in ("id", "name", "base_url")},
                        "names": data["name"],
                        "protocols": {"claude": [entry.claude_protocol],
                                      "codex": [entry.codex_protocol] if entry.codex_protocol else []}})
    return entries


def vendor_kind(entry: Vendor) -> ProfileKind:
    """The profile kind a catalog vendor's profile has (the gallery's and an import's alike)."""
    return VENDOR_KIND.get(entry.id, ProfileKind.OPENAI_COMPATIBLE)


def preset_profile_data(
    name: str, preset_id: str, kind: str | None, no_preset_env: bool, for_codex: bool
) -> dict[str, Any]:
    """Starting data for ``profile add NAME --preset ID``; the caller applies explicit flags on top."""
    local_kinds = {k.value for k in ProfileKind if k.is_local}
    if preset_id in local_kinds:
        if for_codex:
            raise UsageError("--for-codex is for vendor presets; local servers serve Codex from the same URL")
        chosen = preset(preset_id)
        data: dict[str, Any] = {"name": name, "kind": kind or preset_id, "base_url": chosen.base_url,
                                "env": {} if no_preset_env else dict(chosen.env)}
        if chosen.log is not None:
            data["log"] = chosen.log.model_dump()
        return data
    entry = vendor(preset_id)
    data = {"name": name, "kind": kind or vendor_kind(entry).value, "env": {},
            "notes": f"from preset {entry.id}"}
    if for_codex:
        if not entry.codex_base_url:
            raise UsageError(f"preset {entry.id!r} has no Codex (Responses) endpoint in the catalog")
        data.update(base_url=entry.codex_base_url, targets=["codex"])
        if entry.models.get("main"):
            data["model"] = entry.models["main"]
        return data
    data.update(base_url=entry.base_url, key_env=entry.key_env)
    tiers = dict(entry.models)
    if tiers.get("main"):
        data["model"] = tiers.pop("main")
    data["models"] = {tier: model for tier, model in tiers.items() if tier != "main"}
    return data


