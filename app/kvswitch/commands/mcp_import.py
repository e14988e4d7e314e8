"""``kvswitch mcp import SOURCE``: servers brought into KV Switch's MCP list from a client's file, CC
Switch's database or pasted JSON/TOML. Only the list changes: no client's file is written (``kvswitch mcp
sync`` or an enable does that), so an import is safe to run at any time.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kvswitch.commands.common import err, out, paths_from
from kvswitch.core.errors import UsageError
from kvswitch.core.fsutil import read_bytes
from kvswitch.core.mcp import CLIENTS, check_client, merge_imported
from kvswitch.core.mcp_formats import parse_pasted
from kvswitch.core.mcp_store import McpStore
from kvswitch.platform.mcp_ccswitch import read_cc_switch_mcp
from kvswitch.targets.diff import mask_text
from kvswitch.targets.mcp_sync import McpSync, read_client

#: the most text ``import paste`` reads from a file or stdin
MAX_PASTE_BYTES = 16 << 20


def register(sub: Any) -> None:
    """``import`` under ``kvswitch mcp``'s actions."""
    imp = sub.add_parser(
        "import",
        help="bring servers in from a client, CC Switch or pasted JSON/TOML",
        description="SOURCE: claude, claude-project:DIR, codex, opencode, cc-switch [DB], "
        "or paste [FILE] (stdin when FILE is '-' or left out) holding Claude's "
        '{"mcpServers": ...}, OpenCode\'s {"mcp": ...} or Codex\'s [mcp_servers.NAME]. '
        "A name already known with another definition is skipped unless --replace names it. "
        "Nothing is written to any client.",
    )
    imp.add_argument("source")
    imp.add_argument("path", nargs="?")
    imp.add_argument(
        "--replace",
        action="append",
        default=[],
        metavar="NAME",
        help="take the imported definition of NAME over the known one (repeatable)",
    )
    imp.add_argument("--replace-all", action="store_true")
    imp.add_argument("--json", action="store_true", help="what happened, as JSON")
    imp.set_defaults(func=cmd_import)


def _read_paste(path: str | None) -> tuple[str, str]:
    if path in (None, "-"):
        return sys.stdin.read(MAX_PASTE_BYTES + 1), "stdin"
    raw = read_bytes(Path(path), limit=MAX_PASTE_BYTES)
    if raw is None:
        raise UsageError(f"{path}: no such file")
    try:
        return raw.decode("utf-8-sig"), path
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def cmd_import(args: argparse.Namespace) -> int:
    source = args.source
    if source == "cc-switch":
        incoming, problems = read_cc_switch_mcp(args.path)
    elif source == "paste":
        text, where = _read_paste(args.path)
        if len(text) > MAX_PASTE_BYTES:
            raise UsageError(f"{where}: more than {MAX_PASTE_BYTES >> 20} MiB of text; not read")
        incoming, problems = parse_pasted(text, where)
    elif source in CLIENTS or source.startswith("claude-project:"):
        incoming, problems = read_client(check_client(source), McpSync(paths_from(args)).env)
    else:
        raise UsageError(
            f"unknown source {source!r}: claude, claude-project:DIR, codex, opencode, cc-switch or paste"
        )
    store = McpStore(paths_from(args))
    with store.editing() as servers:
        merged, report = merge_imported(servers, incoming, set(args.replace), args.replace_all)
        servers[:] = merged
    if args.json:
        out(
            json.dumps(
                {
                    "report": report,
                    "problems": [mask_text(p, []) for p in problems],
                    "servers": [s.as_json(args.show_secrets) for s in incoming],
                },
                indent=2,
            )
        )
    else:
        for line in report:
            out(line)
        if not incoming:
            out("no MCP servers found to import")
    for problem in problems:
        err(f"not imported: {problem}")
    return 1 if problems and not incoming else 0
