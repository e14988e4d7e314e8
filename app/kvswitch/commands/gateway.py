"""``kvswitch gateway run|status``: the local gateway from the command line (``kvswitch usage`` and
``kvswitch sessions`` read what it recorded: ``commands.usage``)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from kvswitch.commands.common import err, out, paths_from
from kvswitch.commands.doctor_gateway import moved_address_notes
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


def cmd_gateway_run(args: argparse.Namespace) -> int:
    from kvswitch.core.applog import setup_logging  # noqa: PLC0415
    from kvswitch.gateway.control import run_foreground  # noqa: PLC0415 - aiohttp only for the gateway
    from kvswitch.gateway.relay.server import parse_listen  # noqa: PLC0415

    paths = paths_from(args)
    setup_logging(paths)  # a set-aside usage file or a failing store is noted in KV Switch's log
    if args.listen:
        host, port = parse_listen(args.listen, args.allow_remote)
    else:
        routes = read_routes(paths)
        host, port = routes.host, routes.port

    def ready(server: Any) -> None:
        notice = getattr(getattr(server.handler, "usage", None), "notice", None)
        if notice:
            err(printable(f"kvswitch: {notice}"))
        out(f"KV Switch gateway on {server.url} (Claude Code: {server.url}/claude, Codex: "
            f"{server.url}/codex/v1); Ctrl-C stops")
        for note in moved_address_notes(paths, server.url):
            out(note)

    from kvswitch.commands.server_notes import started  # noqa: PLC0415 - reads the servers' logs

    run_foreground(paths, host, port, allow_remote=args.allow_remote, on_ready=ready, notes=started(paths))
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
