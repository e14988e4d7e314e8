"""``kvswitch mcp list|add|edit|remove|enable|disable|import|sync``: one MCP list for every client.

Every change that reaches a client's file is planned first, shown as a diff with ``--dry-run`` (env and
header values masked unless ``--show-secrets``), and written all or nothing through the same journal
as a profile switch: ``kvswitch undo`` takes it back. The list is saved only after the files were
written, so a refused write (a hand-made server of the same name, a file that does not parse) changes
nothing anywhere.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kvswitch.commands import mcp_cost, mcp_import
from kvswitch.commands.common import err, out, paths_from
from kvswitch.core.errors import UsageError
from kvswitch.core.mcp import CLIENTS, McpServer, check_client, check_name, define
from kvswitch.core.mcp_formats import client_kind, to_client
from kvswitch.core.mcp_store import McpStore
from kvswitch.core.redact import MASK, mask_url
from kvswitch.core.text import for_terminal
from kvswitch.targets.diff import mask_text
from kvswitch.targets.mcp_sync import McpSync, render_mcp_plans


def register(subparsers: Any) -> None:
    mcp = subparsers.add_parser(
        "mcp",
        help="MCP servers for Claude Code, Codex and OpenCode",
        description="One list of MCP servers, each enabled per client: claude "
        "(~/.claude.json), claude-project:DIR (DIR/.mcp.json), codex (config.toml), "
        "opencode (opencode.json). Changes are written like a profile: "
        "'kvswitch undo' takes the last one back.",
    )
    sub = mcp.add_subparsers(dest="mcp_command", metavar="ACTION", required=True)

    listing = sub.add_parser("list", help="the servers and the clients each is enabled in")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(func=cmd_list)

    add = sub.add_parser("add", help="add a server: NAME -- COMMAND [ARG...], or NAME --url URL")
    _definition_args(add)
    add.add_argument(
        "--client",
        action="append",
        default=[],
        metavar="CLIENT",
        help="enable it in this client at once (repeatable)",
    )
    _write_args(add)
    add.set_defaults(func=cmd_add, own_parser=add)

    edit = sub.add_parser("edit", help="change a server (rewritten in every client it is enabled in)")
    _definition_args(edit)
    edit.add_argument("--unset-env", action="append", default=[], metavar="NAME")
    edit.add_argument("--unset-header", action="append", default=[], metavar="NAME")
    _write_args(edit)
    edit.set_defaults(func=cmd_edit, own_parser=edit)

    remove = sub.add_parser("remove", help="remove a server from the list and from every client")
    remove.add_argument("names", nargs="+", metavar="NAME")
    _write_args(remove)
    remove.set_defaults(func=cmd_remove)

    for action, verb in (("enable", "write it into"), ("disable", "remove it from")):
        toggle = sub.add_parser(action, help=f"{verb} clients' files")
        toggle.add_argument("names", nargs="+", metavar="NAME")
        toggle.add_argument(
            "--client",
            action="append",
            default=[],
            metavar="CLIENT",
            required=action == "enable",
            help="claude, claude-project:DIR, codex, opencode "
            "(repeatable" + ("" if action == "enable" else "; default: every client") + ")",
        )
        _write_args(toggle)
        toggle.set_defaults(func=cmd_toggle, enable=action == "enable")

    sync = sub.add_parser("sync", help="write the list into the clients' files again (after an undo)")
    _write_args(sync)
    sync.set_defaults(func=cmd_sync)

    mcp_import.register(sub)
    mcp_cost.register(sub)


def _definition_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name")
    parser.add_argument("--url", help="an HTTP server's URL (streamable HTTP; --sse for an SSE one)")
    parser.add_argument("--sse", action="store_true", help="the URL speaks the older SSE transport")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--header", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARG...] for a stdio server")


def _write_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
    parser.add_argument("--json", action="store_true", help="what was (or would be) written, as JSON")
    parser.add_argument(
        "--replace",
        action="append",
        default=[],
        metavar="NAME",
        help="take over a server of this name made by hand in a client's file",
    )


def _pairs(items: list[str], what: str) -> dict[str, str]:
    found = {}
    for item in items:
        name, equals, value = item.partition("=")
        if not equals or not name:
            raise UsageError(f"--{what} wants NAME=VALUE, not {mask_text(item, [value])!r}")
        found[name] = value
    return found


def _command(args: argparse.Namespace) -> list[str]:
    """The stdio command after ``--``. argparse hands everything after NAME to the one trailing
    positional, options included, so the options before ``--`` are parsed here with the same parser."""
    words = list(args.command)
    if "--" in words:
        cut = words.index("--")
        options, command = words[:cut], words[cut + 1 :]
    elif words and words[0].startswith("-"):
        options, command = words, []
    else:
        options, command = [], words
    if options:
        again = args.own_parser.parse_args([*options, "--", args.name])
        for key, value in vars(again).items():
            if key not in ("command", "func", "own_parser"):
                setattr(args, key, value)
    return command


def cmd_list(args: argparse.Namespace) -> int:
    servers = McpStore(paths_from(args)).servers()
    written = McpSync(paths_from(args)).owned_names()
    costs = mcp_cost.costs_for(paths_from(args), servers)
    if args.json:
        rows = []
        for server in servers:
            row = server.as_json(args.show_secrets)
            row["written"] = [c for c in server.clients if server.name in written.get(c, set())]
            row["cost"] = mcp_cost.cost_json(costs, server)
            rows.append(row)
        out(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not servers:
        out("no MCP servers yet: 'kvswitch mcp add NAME -- COMMAND' or 'kvswitch mcp import claude'")
        return 0
    for server in servers:
        what = (
            " ".join([server.command, *server.args])
            if server.transport == "stdio"
            else server.url
            if args.show_secrets
            else mask_url(server.url)
        )
        if not args.show_secrets:
            what = mask_text(what, server.secrets)
        clients = (
            ", ".join(
                c if server.name in written.get(c, set()) else f"{c} (not written yet: 'kvswitch mcp sync')"
                for c in server.clients
            )
            or "no client"
        )
        out(for_terminal(f"{server.name}  [{server.transport}] {what}  ->  {clients}"))
        extras = {**server.env, **server.headers}
        if extras:
            shown = ", ".join(f"{k}={v if args.show_secrets else MASK}" for k, v in extras.items())
            out(for_terminal(f"    {'env' if server.env else 'headers'}: {shown}"))
        out(for_terminal(mcp_cost.cost_line(costs, server)))
    return 0


def _defined(args: argparse.Namespace, base: McpServer | None) -> McpServer:
    env = {**(base.env if base else {}), **_pairs(args.env, "env")}
    headers = {**(base.headers if base else {}), **_pairs(args.header, "header")}
    for name in getattr(args, "unset_env", []):
        env.pop(name, None)
    for name in getattr(args, "unset_header", []):
        headers.pop(name, None)
    return define(args.name, base, command=args.command, url=args.url, sse=args.sse, env=env, headers=headers)


def _check_clients(server: McpServer) -> None:
    for client in server.clients:
        to_client(server, client_kind(client))  # an SSE server for Codex is refused here, by name


def _write(args: argparse.Namespace, servers: list[McpServer], what: str, read: list[McpServer]) -> int:
    """Plan (and unless ``--dry-run`` write) ``servers`` into every client; then save the list.

    ``read``: the list the command started from; if another process changed it since, nothing is
    written (its change would be lost)."""
    for server in servers:
        _check_clients(server)
    sync = McpSync(paths_from(args))
    replace_names = frozenset(args.replace)
    if args.dry_run:
        plans = sync.plan(servers, replace_names)
        diff = render_mcp_plans(plans, args.show_secrets)
        warnings = [mask_text(w, [] if args.show_secrets else p.secrets) for p in plans for w in p.warnings]
        if args.json:
            changed = [p for p in plans if p.changed]
            out(
                json.dumps(
                    {
                        "dry_run": True,
                        "files": [p.location for p in changed],
                        "changes": [c for p in changed for c in p.changes],
                        "warnings": warnings,
                        "diff": diff,
                    },
                    indent=2,
                    ensure_ascii=False,
                )
            )
            return 0
        sys.stdout.write(for_terminal(diff) if diff else "no client file would change.\n")
        for warning in warnings:
            err(f"warning: {warning}")
        out("(dry run: nothing was written)")
        return 0
    store = McpStore(paths_from(args))
    with store.editing() as current:
        if current != read:
            raise UsageError(
                "the MCP list was changed by another KV Switch meanwhile; nothing was written, try again"
            )
        result = sync.apply(servers, replace_names)
        current[:] = servers
    if args.json:
        out(
            json.dumps(
                {
                    "dry_run": False,
                    "action": what,
                    "written": result.written,
                    "changes": [c for p in result.plans if p.changed for c in p.changes],
                    "warnings": list(dict.fromkeys(result.warnings)),
                    "backups": result.backups,
                },
                indent=2,
                ensure_ascii=False,
            )
        )
        return 0
    for note in sync.notes:
        out(f"note: {note}")
    out(
        f"{what}; "
        + (f"wrote {', '.join(result.written)}" if result.written else "no client file changed")
        + (" ('kvswitch undo' takes it back)" if result.written else "")
    )
    for warning in dict.fromkeys(result.warnings):
        err(f"warning: {warning}")
    return 0


def _indexes(servers: list[McpServer], names: list[str]) -> list[int]:
    """Where each named server is in the list (one pass: 10,000 names must not cost 10,000 scans)."""
    where = {server.name: index for index, server in enumerate(servers)}
    missing = [name for name in names if name not in where]
    if missing:
        raise UsageError(f"no MCP server named {missing[0]!r} ('kvswitch mcp list' shows them)")
    return [where[name] for name in names]


def cmd_add(args: argparse.Namespace) -> int:
    check_name(args.name)
    args.command = _command(args)
    servers = McpStore(paths_from(args)).servers()
    if any(s.name == args.name for s in servers):
        raise UsageError(
            f"an MCP server named {args.name!r} exists; 'kvswitch mcp edit {args.name}' changes it"
        )
    server = _defined(args, None).with_clients(args.client)
    return _write(args, [*servers, server], f"added {server.name!r}", servers)


def cmd_edit(args: argparse.Namespace) -> int:
    args.command = _command(args)
    read = McpStore(paths_from(args)).servers()
    servers = list(read)
    [index] = _indexes(servers, [args.name])
    servers[index] = _defined(args, servers[index])
    return _write(args, servers, f"changed {args.name!r}", read)


def cmd_remove(args: argparse.Namespace) -> int:
    read = McpStore(paths_from(args)).servers()
    gone = set(_indexes(read, args.names))
    servers = [server for index, server in enumerate(read) if index not in gone]
    return _write(args, servers, f"removed {_named(args.names)}", read)


def cmd_toggle(args: argparse.Namespace) -> int:
    read = McpStore(paths_from(args)).servers()
    servers = list(read)
    clients = [check_client(c) for c in args.client]
    for index in _indexes(servers, args.names):
        server = servers[index]
        if args.enable:
            servers[index] = server.with_clients([*server.clients, *clients])
        else:
            servers[index] = server.with_clients([c for c in server.clients if clients and c not in clients])
    where = ", ".join(clients) or "every client"
    verb = "enabled" if args.enable else "disabled"
    done = _write(args, servers, f"{verb} {_named(args.names)} in {where}", read)
    if not args.dry_run:
        for line in mcp_cost.toggle_warning(paths_from(args), clients or list(CLIENTS)):
            err(f"warning: {line}")
    return done


def _named(names: list[str]) -> str:
    """At most five names, then how many more (a command may name 10,000)."""
    more = f" and {len(names) - 5} more" if len(names) > 5 else ""
    return ", ".join(map(repr, names[:5])) + more


def cmd_sync(args: argparse.Namespace) -> int:
    servers = McpStore(paths_from(args)).servers()
    return _write(args, servers, "wrote the MCP list", servers)
