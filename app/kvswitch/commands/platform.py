"""``kvswitch detect``, ``export``, ``import-profiles`` and ``autostart``: the platform area's commands."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from kvswitch import servers
from kvswitch.commands.common import out, paths_from, store_from, timeout_seconds
from kvswitch.core.errors import UsageError
from kvswitch.platform import autostart
from kvswitch.platform.detect import PROBE_PORTS, DetectedServer, Detection, detect
from kvswitch.platform.probe import DEFAULT_TIMEOUT


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "detect", help="find Claude Code, Codex and running local servers",
        description="Find Claude Code and Codex, and local servers ("
                    + ", ".join(server.label for server in servers.local())
                    + ") from running processes and by probing their usual ports on loopback.")
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")
    parser.add_argument("--port", type=_port, action="append", dest="ports", metavar="PORT",
                        help="probe this loopback port (repeatable; default: "
                             f"{', '.join(map(str, PROBE_PORTS))})")
    parser.add_argument("--no-processes", action="store_true", help="only probe ports; do not read processes")
    parser.add_argument("--timeout", type=timeout_seconds, default=DEFAULT_TIMEOUT,
                        help="seconds per probe (default %(default)s)")
    parser.add_argument("--add", action="store_true",
                        help="add a profile for every server found (names already taken are skipped)")
    parser.set_defaults(func=_detect)

    parser = subparsers.add_parser("export",
                                   help="write all profiles to a JSON file (keys left out by default)")
    parser.add_argument("file", type=Path)
    parser.add_argument("--include-keys", action="store_true",
                        help="include API keys in clear (the file is created readable by you only)")
    parser.set_defaults(func=_export)

    parser = subparsers.add_parser("import-profiles", help="add the profiles of an exported JSON file")
    parser.add_argument("file", type=Path)
    parser.add_argument("--yes", action="store_true",
                        help="import profiles with dangerous env names or project-folder targets too")
    parser.set_defaults(func=_import)

    parser = subparsers.add_parser("autostart", help="start KV Switch in the tray at login (off by default)")
    parser.add_argument("state", nargs="?", choices=("on", "off", "status"), default="status")
    parser.add_argument("--gateway", action="store_true",
                        help="the KV Switch gateway instead of the window ('kvswitch gateway run' at login)")
    parser.set_defaults(func=_autostart)


def _port(value: str) -> int:
    try:
        port = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {value!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port must be 1-65535, not {port}")
    return port


def _detect(args: argparse.Namespace) -> int:
    if args.timeout <= 0:
        raise UsageError("--timeout must be more than 0 seconds")
    ports = args.ports if args.ports else PROBE_PORTS
    found = detect(ports, processes=[] if args.no_processes else None, timeout=args.timeout)
    added: list[str] = []
    if args.add:
        added = _add_profiles(args, found.servers)
    if args.json:
        document = found.to_json()
        if args.add:
            document["added_profiles"] = added
        out(json.dumps(document, indent=2))
        return 0
    out(format_detection(found, ports))
    if args.add:
        out(f"added profiles: {', '.join(added)}" if added else "no new profiles added")
    return 0


def _add_profiles(args: argparse.Namespace, servers: tuple[DetectedServer, ...]) -> list[str]:
    store = store_from(args)
    taken = {name.casefold() for name in store.names()}
    added = []
    for server in servers:
        profile = server.to_profile()
        if profile.name.casefold() in taken:
            continue
        store.add(profile)
        taken.add(profile.name.casefold())
        added.append(profile.name)
    return added


def format_detection(found: Detection, ports: Any = PROBE_PORTS) -> str:
    lines = ["Tools:"]
    for tool in found.tools:
        if not tool.found:
            lines.append(f"  {tool.label:<12} not found")
            continue
        where = str(tool.binary) if tool.binary else "not on PATH"
        config = (str(tool.config_file) if tool.has_config
                  else f"{tool.config_dir} (no {tool.config_file.name})")
        lines.append(f"  {tool.label:<12} {where}; config {config}")
    lines.append("Servers:")
    if not found.servers:
        lines.append(f"  none running (probed ports {', '.join(map(str, ports))} and the process list)")
    for server in found.servers:
        lines.append(f"  {server.label:<10} {server.base_url}  " + describe_server(server))
    return "\n".join(lines)


def describe_server(server: DetectedServer) -> str:
    """One line of what is known about a server (shared with the first-run dialog)."""
    parts = []
    if server.model:
        parts.append(f"model {server.model}")
    if server.context:
        parts.append(f"context {server.context}")
    if server.parallel:
        parts.append(f"{server.parallel} slot{'s' if server.parallel != 1 else ''}")
    if server.log:
        parts.append(f"log {server.log.path or server.log.unit or ' '.join(server.log.command or [])}")
    if server.loading:
        parts.append("loading its model")
    elif not server.answering:
        parts.append("not answering yet")
    origin = f"pid {server.pid}" if server.pid else "found by port"
    return ", ".join(parts) + (f" ({origin})" if parts else f"({origin})")


def _export(args: argparse.Namespace) -> int:
    from kvswitch.platform.transfer import export_profiles  # noqa: PLC0415

    store = store_from(args)
    written = export_profiles(store, args.file, include_keys=args.include_keys)
    count = len(store.profiles())
    note = "with API keys (file readable by you only)" if args.include_keys else "without API keys"
    out(f"exported {count} profile(s) {note} to {written}")
    return 0


def _import(args: argparse.Namespace) -> int:
    from kvswitch.platform.importers import review_import  # noqa: PLC0415
    from kvswitch.platform.transfer import import_profiles, read_export  # noqa: PLC0415

    out(review_import(read_export(args.file)).text())  # what the file holds, before anything is saved
    report = import_profiles(store_from(args), args.file, confirmed=args.yes)
    out(report.summary())
    return 0


def _autostart(args: argparse.Namespace) -> int:
    entry = autostart.for_platform(gateway=args.gateway)
    what = "gateway autostart" if args.gateway else "autostart"
    if args.state == "status":
        out(f"{what} is {'on' if entry.enabled() else 'off'} ({entry.location})")
        return 0
    autostart.set_enabled(entry, args.state == "on")
    if not args.gateway:
        _remember_autostart(args, args.state == "on")
    out(f"{what} {args.state} ({entry.location})")
    return 0


def _remember_autostart(args: argparse.Namespace, enabled: bool) -> None:
    """Keep the Settings dialog's checkbox in step with what the command did."""
    from kvswitch.core.settings import load_settings, save_settings  # noqa: PLC0415

    paths = paths_from(args)
    settings = load_settings(paths)
    settings.autostart = enabled
    save_settings(paths, settings)

