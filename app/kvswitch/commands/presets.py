"""``kvswitch preset list``, ``kvswitch models PROFILE`` and ``kvswitch test PROFILE``.

Presets are the local kinds' defaults (``core.presets``, id = the kind) plus the cloud vendors of the
catalog (``core.catalog``); ``profile add --preset ID`` fills a profile from either.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from kvswitch.commands.profiles import out, store_from
from kvswitch.core.catalog import Vendor, vendor, vendors
from kvswitch.core.errors import UsageError
from kvswitch.core.models import ProfileKind
from kvswitch.servers import PRESETS, preset

#: the catalog's vendors are gateways speaking Anthropic's API; Anthropic itself has its own kind
VENDOR_KIND = {"anthropic": ProfileKind.ANTHROPIC}


def register(subparsers: Any) -> None:
    presets = subparsers.add_parser("preset", help="list the presets 'profile add --preset' accepts")
    sub = presets.add_subparsers(dest="preset_command", metavar="ACTION", required=True)
    listing = sub.add_parser("list", help="local kinds and cloud vendors with their endpoints")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.add_argument("--locale", default="en", help="names in this locale (en, zh_CN)")
    listing.set_defaults(func=cmd_preset_list)

    models = subparsers.add_parser("models", help="list the models a profile's backend serves")
    models.add_argument("name")
    models.add_argument("--json", action="store_true", help="machine-readable output")
    models.add_argument("--timeout", type=float, default=10.0, help="seconds to wait (default 10)")
    models.set_defaults(func=cmd_models)

    test = subparsers.add_parser("test", help="test a profile's connection, key and route")
    test.add_argument("name")
    test.add_argument("--json", action="store_true", help="machine-readable output")
    test.add_argument("--timeout", type=float, default=20.0, help="seconds to wait (default 20)")
    test.set_defaults(func=cmd_test)


def preset_entries(locale: str = "en") -> list[dict[str, Any]]:
    """Every preset as plain data: local kinds first (id = kind), then the catalog's vendors."""
    entries: list[dict[str, Any]] = []
    for kind, local in PRESETS.items():
        if kind.is_local:
            entries.append({"id": kind.value, "name": local.label, "base_url": local.base_url,
                            "kind": kind.value, "local": True, "description": local.description})
    for entry in vendors():
        data = entry.model_dump(exclude_none=True)
        entries.append({"id": entry.id, "name": entry.display_name(locale), "base_url": entry.base_url,
                        "kind": _vendor_kind(entry).value, "local": False,
                        **{k: v for k, v in data.items() if k not in ("id", "name", "base_url")},
                        "names": data["name"]})
    return entries


def cmd_preset_list(args: argparse.Namespace) -> int:
    entries = preset_entries(args.locale)
    if args.json:
        out(json.dumps(entries, indent=2, ensure_ascii=False))
        return 0
    width = max(len(e["id"]) for e in entries)
    for entry in entries:
        out(f"{entry['id']:<{width}}  {entry['base_url']}  {entry['name']}")
    return 0


def _vendor_kind(entry: Vendor) -> ProfileKind:
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
    data = {"name": name, "kind": kind or _vendor_kind(entry).value, "env": {},
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


def cmd_models(args: argparse.Namespace) -> int:
    from kvswitch.verify.connection import list_models  # noqa: PLC0415 - httpx only when needed

    profile = store_from(args).get(args.name)
    listing = list_models(profile, timeout=args.timeout)
    if args.json:
        out(json.dumps({"url": listing.url, "models": list(listing.models)}, indent=2, ensure_ascii=False))
    else:
        if not listing.models:
            out(f"{listing.url} lists no models")
        for model_id in listing.models:
            out(model_id)
    return 0


def cmd_test(args: argparse.Namespace) -> int:
    from kvswitch.verify.connection import check_connection  # noqa: PLC0415 - httpx only when needed

    profile = store_from(args).get(args.name)
    report = check_connection(profile, timeout=args.timeout)
    if args.json:
        out(json.dumps(report.as_dict(), indent=2, ensure_ascii=False))
    else:
        for line in report.lines():
            out(line)
    return 0 if report.ok else 1
