"""``kvswitch gateway run|status`` and ``kvswitch usage``: the local gateway from the command line."""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
import time
from typing import Any

from kvswitch.commands.common import out, paths_from
from kvswitch.commands.doctor_gateway import moved_address_notes
from kvswitch.core.errors import UsageError
from kvswitch.core.gateway_config import DEFAULT_HOST, read_routes
from kvswitch.core.text import printable


def register(subparsers: Any) -> None:
    gateway = subparsers.add_parser("gateway", help="the local gateway clients stay pointed at")
    sub = gateway.add_subparsers(dest="gateway_command", metavar="ACTION", required=True)
    run = sub.add_parser("run", help="serve in the foreground until Ctrl-C")
    run.add_argument("--listen", help=f"HOST:PORT (default: the routing state's, else {DEFAULT_HOST}:8788)")
    run.add_argument("--allow-remote", action="store_true",
                     help="listen on a non-loopback address (the gateway spends your keys)")
    run.set_defaults(func=cmd_gateway_run)
    status = sub.add_parser("status", help="running or not, where, what each client is routed to")
    status.add_argument("--json", action="store_true")
    status.set_defaults(func=cmd_gateway_status)

    usage = subparsers.add_parser("usage", help="requests served by the gateway, with tokens and cost")
    usage.add_argument("--since", default="1d", help="how far back: 30m, 12h, 1d, 7d (default 1d)")
    usage.add_argument("--profile", help="only this profile's requests")
    form = usage.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true")
    form.add_argument("--csv", action="store_true")
    usage.set_defaults(func=cmd_usage)


def cmd_gateway_run(args: argparse.Namespace) -> int:
    from kvswitch.gateway.control import run_foreground  # noqa: PLC0415 - aiohttp only for the gateway
    from kvswitch.gateway.server import parse_listen  # noqa: PLC0415

    paths = paths_from(args)
    if args.listen:
        host, port = parse_listen(args.listen, args.allow_remote)
    else:
        routes = read_routes(paths)
        host, port = routes.host, routes.port

    def ready(server: Any) -> None:
        out(f"KV Switch gateway on {server.url} (Claude Code: {server.url}/claude, Codex: "
            f"{server.url}/codex/v1); Ctrl-C stops")
        for note in moved_address_notes(paths, server.url):
            out(note)

    run_foreground(paths, host, port, allow_remote=args.allow_remote, on_ready=ready)
    return 0


#: what ``gateway status`` calls each answer (``gateway.probe.Identity.who``)
_STATE = {"ours": "running", "absent": "not running", "foreign": "not running (another program answers)",
          "other-token": "running, but with another local token", "no-token": "running, but the token file "
          "is missing"}


def cmd_gateway_status(args: argparse.Namespace) -> int:
    """Running only when what answers is proven to be this user's gateway with this token
    (``gateway.probe``); the findings that make clients fail are listed whatever the state."""
    from kvswitch.gateway.control import probe_status  # noqa: PLC0415
    from kvswitch.gateway.probe import file_mode_problems  # noqa: PLC0415

    paths = paths_from(args)
    status = probe_status(paths)
    status["problems"] = [*status.get("problems", []), *file_mode_problems(paths)]
    if args.json:
        out(json.dumps(status, indent=2, sort_keys=True, ensure_ascii=False))
        return 0 if status["running"] else 1
    out(f"gateway: {_STATE.get(status.get('identity', ''), 'not running')} at {status['url']}")
    for other in status.get("others", []):
        out(f"  another KV Switch gateway runs at {other}")
    for client, profile in sorted(status.get("routes", {}).items()):
        serving = status.get("serving", {}).get(client)
        extra = f" (last served by {serving})" if serving and serving != profile else ""
        out(f"  {client}: {profile}{extra}")
    if not status.get("routes"):
        out("  no client is routed yet (apply a profile made with --via-gateway)")
    for name in status.get("open_circuits", []):
        out(f"  skipping {name} for now: its upstream kept failing")
    for problem in status.get("problems", []):
        out(f"  problem: {problem}")
    if status.get("identity") == "absent":
        out("  start it with: kvswitch gateway run")
    return 0 if status["running"] else 1


_SPAN = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(text: str) -> float:
    """``30m``, ``12h``, ``1d``, ``2w`` → seconds."""
    match = _SPAN.fullmatch(text.strip().lower())
    if not match:
        raise UsageError(f"--since {text!r}: expected a number and a unit (s, m, h, d, w), e.g. 1d")
    return float(match.group(1)) * _UNIT[match.group(2)]


def cmd_usage(args: argparse.Namespace) -> int:
    from kvswitch.gateway.control import usage_rows  # noqa: PLC0415
    from kvswitch.gateway.usage import COLUMNS  # noqa: PLC0415

    rows = usage_rows(paths_from(args), time.time() - parse_since(args.since), args.profile)
    if args.json:
        out(json.dumps([row.to_json() for row in rows], indent=2))
        return 0
    if args.csv:
        writer = csv.writer(sys.stdout)
        writer.writerow(COLUMNS)
        for row in rows:
            data = row.to_json()
            writer.writerow([data[name] for name in COLUMNS])
        return 0
    if not rows:
        out("no requests through the gateway in that time")
        return 0
    for row in rows:
        data = row.to_json()
        share = f"{row.cached_tokens / row.input_tokens:.0%}" if row.input_tokens and row.cached_tokens \
            is not None else "-"
        cost = f"${row.cost:.4f}" if row.cost is not None else "-"
        ttft = f"{row.ttft_ms:.0f} ms" if row.ttft_ms is not None else "-"
        line = (f"{data['time']} {row.profile} {row.model or '-'} {row.status} in {row.input_tokens} "
                f"cached {row.cached_tokens} ({share}) out {row.output_tokens} ttft {ttft} {cost}")
        if row.failover:
            line += f" [failover: {row.failover}]"
        out(printable(line))
    return 0
