"""``kvswitch preset list``, ``kvswitch models PROFILE`` and ``kvswitch test PROFILE``.

Presets are the local kinds' defaults (``core.presets``, id = the kind) plus the cloud vendors of the
catalog (``core.catalog``); ``profile add --preset ID`` fills a profile from either.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from kvswitch.commands.common import out, store_from, timeout_seconds
from kvswitch.servers.preset_data import preset_entries


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
    models.add_argument("--timeout", type=timeout_seconds, default=10.0,
                        help="seconds to wait (default 10)")
    models.set_defaults(func=cmd_models)

    test = subparsers.add_parser("test", help="test a profile's connection, key and route")
    test.add_argument("name")
    test.add_argument("--json", action="store_true", help="machine-readable output")
    test.add_argument("--timeout", type=timeout_seconds, default=20.0,
                      help="seconds to wait (default 20)")
    test.set_defaults(func=cmd_test)


def cmd_preset_list(args: argparse.Namespace) -> int:
    entries = preset_entries(args.locale)
    if args.json:
        out(json.dumps(entries, indent=2, ensure_ascii=False))
        return 0
    width = max(len(e["id"]) for e in entries)
    for entry in entries:
        out(f"{entry['id']:<{width}}  {entry['base_url']}  {entry['name']}")
    return 0


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
