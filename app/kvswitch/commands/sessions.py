"""``kvswitch sessions`` and ``kvswitch session show|resume``: every client's past sessions, from its files.

``sessions`` lists one row per session: what the clients' own files say (``--source files``, read into
the sessions index first, incrementally), what the gateway recorded (``--source gateway``), or both
joined by session id (``all``, the default). ``session show ID`` prints the turn table with each loss and
its cause; ``session resume ID`` prints the command that resumes the session (``--run`` runs it). A
client file that could not be read is named on stderr with what was wrong, and the rest is listed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from kvswitch.commands.common import err, out, paths_from
from kvswitch.commands.session_output import local_minute, row_line, write_csv, write_json
from kvswitch.core.errors import KvSwitchError, UsageError
from kvswitch.core.text import printable

SOURCES = ("files", "gateway", "all")
CLIENT_NAMES = ("claude", "codex", "opencode")
_SPAN = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
#: what a spreadsheet runs as a formula when a cell starts with it
def register(subparsers: Any) -> None:
    listing = subparsers.add_parser(
        "sessions", help="every client's sessions (from its own files and the gateway): tokens, hit %%, cost"
    )
    listing.add_argument(
        "--since",
        default="1d",
        help="how far back: 30m, 12h, 1d, 7d, a date (2026-12-01), or all (default 1d)",
    )
    listing.add_argument("--client", type=str.lower, choices=CLIENT_NAMES, help="only this client's sessions")
    listing.add_argument("--project", help="only sessions whose project directory contains this")
    listing.add_argument(
        "--source",
        default="all",
        type=str.lower,
        choices=SOURCES,
        help="the clients' files, the gateway's record, or both joined by session id",
    )
    form = listing.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="one JSON object per session")
    form.add_argument("--csv", action="store_true", help="one CSV line per session")
    listing.set_defaults(func=cmd_sessions)
    one = subparsers.add_parser(
        "session", help="one session from the clients' files: its turns, or resume it"
    )
    actions = one.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="the turn table: reused / written / new tokens, losses and causes")
    show.add_argument("id", help="a session id, or its first characters")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=cmd_show)
    resume = actions.add_parser("resume", help="print the command that resumes the session in its client")
    resume.add_argument("id", help="a session id, or its first characters")
    resume.add_argument("--run", action="store_true", help="run it (in the session's project directory)")
    resume.add_argument(
        "client_args",
        nargs=argparse.REMAINDER,
        metavar="-- ARGS",
        help="with --run: more arguments for the client (e.g. -- -p 'go on')",
    )
    resume.set_defaults(func=cmd_resume)


def parse_since(text: str) -> float | None:
    """``30m``, ``12h``, ``1d``, ``2w`` or ``2026-12-01`` → the epoch to start at; ``all`` → None."""
    value = text.strip().lower()
    if value == "all":
        return None
    match = _SPAN.fullmatch(value)
    if match:
        return time.time() - float(match.group(1)) * _UNIT[match.group(2)]
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        raise UsageError(
            f"--since {text!r}: expected a number and a unit (s, m, h, d, w), a date "
            "(2026-12-01), or all; e.g. 1d"
        ) from None


class _IndexUnusable(KvSwitchError):
    """The sessions index (KV Switch's own file) cannot be opened or written."""


def _indexed(args: argparse.Namespace) -> Any:
    """Bring the index up to date with the clients' files; name on stderr each file that had trouble."""
    from kvswitch import sessions  # noqa: PLC0415 - the readers load only for these commands

    paths = paths_from(args)
    try:
        report = sessions.index_sessions(paths)
    except (sqlite3.Error, OSError) as exc:
        raise _IndexUnusable(
            f"cannot keep the sessions index {sessions.index_path(paths)}: {exc} (it is "
            "rebuilt from the clients' files: delete it and run the command again)"
        ) from None
    for path, notes in sorted(report.notes.items()):
        for text in notes:
            err(printable(f"note: {path}: {text}", multiline=False))
    return paths


def _gateway_sessions(
    args: argparse.Namespace, since: float | None, session: str | None = None
) -> Iterator[Any]:
    """The gateway's sessions (of one ``session`` id, or all), streamed from the usage file a page at a
    time (``usage.queries.iter_session_summaries``: a million sessions in constant memory)."""
    from kvswitch.core.gateway_config import usage_db  # noqa: PLC0415
    from kvswitch.usage.queries import UsageFilter, iter_session_summaries  # noqa: PLC0415
    from kvswitch.usage.schema import UsageFileError  # noqa: PLC0415

    db = usage_db(paths_from(args))
    wanted = {"claude": ("claude",), "codex": ("codex",), "opencode": ("opencode",)}.get(
        args.client or "", ()
    )
    try:
        for item in iter_session_summaries(db, UsageFilter(since=since, session=session)):
            if not wanted or any(name in (item.client or "").lower() for name in wanted):
                yield item
    except (UsageFileError, sqlite3.Error, OSError) as exc:
        raise KvSwitchError(f"cannot read the usage database {db}: {exc}") from None


def rows_of(args: argparse.Namespace) -> list[dict[str, Any]]:
    """One JSON-able row per session: ``source`` files, gateway or both; a joined row keeps the
    gateway's numbers under ``gateway``."""
    return list(iter_rows_of(args))


def iter_rows_of(args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    """``rows_of`` as a stream: the files' rows (joined first, one gateway query per session id they
    name), then the gateway's other sessions as SQLite hands them over, never all in memory (issue 39:
    a million gateway sessions took 817 MB, 4.0 GB as JSON)."""
    since = parse_since(args.since)
    rows: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    if args.source in ("files", "all"):
        from kvswitch.sessions import SessionFilter, list_sessions  # noqa: PLC0415

        paths = _indexed(args)
        for item in list_sessions(
            paths, SessionFilter(client=args.client, project=args.project, since=since)
        ):
            row = {"session": item.session_id, "source": "files", **item.to_json()}
            rows.append(row)
            by_id[item.session_id] = row
    if args.source in ("gateway", "all"):
        for session_id, joined in by_id.items():
            for item in _gateway_sessions(args, since, session_id):
                joined["source"] = "both"
                joined["gateway"] = item.to_json()
    yield from rows
    if args.source in ("gateway", "all") and not args.project:
        for item in _gateway_sessions(args, since):
            if (item.session or "") not in by_id:
                yield {"source": "gateway", **item.to_json()}


def cmd_sessions(args: argparse.Namespace) -> int:
    rows = iter_rows_of(args)
    try:
        if args.json:
            write_json(rows)
        elif args.csv:
            write_csv(rows)
        else:
            shown = 0
            for row in rows:
                out(printable(row_line(row), multiline=False))
                shown += 1
            if not shown:
                hint = " (--since all lists every one)" if args.since != "all" else ""
                out("no sessions in that time" + hint)
        sys.stdout.flush()
    except BrokenPipeError:  # | head: stop quietly, and keep the interpreter's last flush from failing
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    return 0


def _session(args: argparse.Namespace) -> tuple[Any, list[Any]]:
    from kvswitch.sessions import SessionNotFound, session_turns  # noqa: PLC0415

    paths = _indexed(args)
    try:
        return session_turns(paths, args.id)
    except SessionNotFound as exc:
        raise KvSwitchError(str(exc)) from None


def cmd_show(args: argparse.Namespace) -> int:
    summary, turns = _session(args)
    if args.json:
        out(json.dumps({"session": summary.to_json(), "turns": [turn.to_json() for turn in turns]}, indent=2))
        return 0
    out(
        printable(
            row_line({"session": summary.session_id, "source": "files", **summary.to_json()}), multiline=False
        )
    )
    for note in summary.notes:
        out(printable(f"  note: {note}", multiline=False))
    out(
        f"{'#':>4} {'time':<16} {'model':<20} {'agent':<10} {'reused':>9} {'written':>9} {'new':>9} "
        f"{'output':>8} {'cost':>9}"
    )
    lost_tokens, lost_cost = 0, 0.0
    for turn in turns:
        call = turn.call
        who = _who(call)
        out(
            printable(
                f"{turn.index + 1:>4} {local_minute(call.time):<16} {call.model[:20]:<20} {who[:10]:<10} "
                f"{call.cache_read:>9,} {call.cache_write:>9,} {call.fresh:>9,} {call.output:>8,} "
                f"${turn.cost:>8.4f}",
                multiline=False,
            )
        )
        if turn.loss is not None:
            lost_tokens += turn.loss.lost_tokens
            lost_cost += turn.loss.lost_cost
            out(
                printable(
                    f"       loss [{turn.loss.causes[0]}]: {turn.loss.detail} (${turn.loss.lost_cost:.4f})",
                    multiline=False,
                )
            )
        if turn.gateway is not None and turn.gateway.reason:  # the gateway's byte-level word on it
            out(printable(f"       {turn.gateway.words}", multiline=False))
    losses = sum(turn.loss is not None for turn in turns)
    out(
        f"{losses} loss{'' if losses == 1 else 'es'}: {lost_tokens:,} tokens processed again, "
        f"${lost_cost:.4f}"
    )
    out(printable(f"resume: {summary.resume_command}", multiline=False))
    return 0


def _who(call: Any) -> str:
    """The turn table's agent column: the subagent, or what the row is when it is not one request."""
    if "unrecorded" in call.events:
        return "(no line)"  # a request the client counted but wrote no line for (/compact's summary)
    if "shared_counts" in call.events:
        return "(in next)"  # its tokens are in the next row's: the client counted them per turn
    return str(call.agent)


def cmd_resume(args: argparse.Namespace) -> int:
    extra = list(args.client_args)
    if extra[:1] == ["--run"]:  # after the id, argparse hands everything to the client's arguments
        args.run, extra = True, extra[1:]
    if extra[:1] == ["--"]:
        extra = extra[1:]
    if extra and not args.run:
        raise UsageError("arguments for the client are given only with --run")
    summary, _turns = _session(args)
    command = summary.resume_command
    if not args.run:
        out(printable(command, multiline=False))
        return 0
    program = {
        "claude": os.environ.get("KVSWITCH_CLAUDE_BIN") or "claude",
        "codex": os.environ.get("KVSWITCH_CODEX_BIN") or "codex",
    }.get(summary.client, summary.client)
    found = shutil.which(program)
    if found is None:
        raise KvSwitchError(f"{program} is not on PATH: run it yourself: {command}")
    argv = {
        "claude": [found, "--resume", summary.session_id],
        # 'codex resume' is its interactive screen only; with arguments (a prompt) the session goes on
        # without one through 'codex exec resume ID PROMPT' (Codex 0.171's --help)
        "codex": [found, *(["exec"] if extra else []), "resume", summary.session_id],
        "opencode": [found, "-s", summary.session_id],
    }[summary.client]
    where = summary.project if summary.project and os.path.isdir(summary.project) else None
    if summary.client != "codex" and where is None:
        raise KvSwitchError(
            f"the session's project directory {summary.project!r} is gone: {summary.client} "
            "resumes a session only from there"
        )
    return subprocess.run([*argv, *extra], cwd=where, check=False).returncode
