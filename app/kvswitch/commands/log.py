"""``kvswitch log scan`` and ``kvswitch log tail``: the log engine from a terminal or a script.

``scan FILE --jsonl`` is the stable machine form: one JSON object per completed request, then one
``{"summary": {...}}`` line (with the diagnosis, if any). Without ``--jsonl`` a table for people.

Everything for people passes ``core.text.for_terminal`` (the one gate of ``commands.common.out``): a
log's text (its lines, request ids, reasons, the file's name in a status) is whatever a server wrote,
and its escape sequences, C1 controls and bidi marks must not act on the terminal; ``tail``'s own
colours are added around the cleaned text (``logs.render.render_ansi``). The JSON lines need no gate:
``json.dumps`` escapes every control character and the scanner writes the same bytes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, BinaryIO, TextIO

from kvswitch.core.errors import UsageError
from kvswitch.core.text import for_terminal
from kvswitch.logs.diagnose import diagnose
from kvswitch.logs.jsonl import DIAGNOSIS_WINDOW, Totals, event_json_line
from kvswitch.logs.jsonscan import jsonl_file
from kvswitch.logs.model import CacheEvent
from kvswitch.logs.parsers import KINDS
from kvswitch.logs.scan import scan_file

__all__ = ["DIAGNOSIS_WINDOW", "event_json_line", "register"]


def register(subparsers: Any) -> None:
    log = subparsers.add_parser("log", help="read a local server's log: cache hits and misses per request")
    sub = log.add_subparsers(dest="log_command", metavar="SUBCOMMAND", required=True)
    kinds = [*KINDS, "auto"]

    scan = sub.add_parser("scan", help="every completed request of a log file, with its cache reuse")
    scan.add_argument("file", metavar="FILE")
    scan.add_argument("--kind", choices=kinds, default="auto", help="server kind (default: detect per line)")
    scan.add_argument("--jsonl", action="store_true", help="JSON lines only, ending with a summary line")
    scan.set_defaults(func=_scan)

    tail = sub.add_parser("tail", help="follow a log file live (like tail -F), colouring cache lines")
    tail.add_argument("file", metavar="FILE")
    tail.add_argument("--kind", choices=kinds, default="auto")
    tail.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    tail.add_argument("-n", "--lines", type=int, default=20, help="start with the last N lines (default 20)")
    tail.add_argument("--no-follow", action="store_true", help="print the last lines and exit")
    tail.set_defaults(func=_tail)


def _hint(kind: str) -> str | None:
    return None if kind == "auto" else kind


def _scan(args: argparse.Namespace) -> int:
    if args.jsonl:
        return _scan_jsonl(args)
    out = _Gated(sys.stdout)
    summary = Totals()
    events = scan_file(args.file, _hint(args.kind))  # opens now: a bad path fails before any output
    out.write(f"{'line':>8} {'slot':>4} {'task':>8} {'prompt':>7} {'cached':>7} {'new':>7} "
              f"{'ms':>9} {'reuse':>6}  verdict  reason\n")
    for event in events:
        summary.add(event)
        out.write(_table_row(event))
    diagnosis = diagnose(summary.latest())
    reuse = summary.cached / summary.prompt if summary.prompt else 0.0
    out.write(f"\n{summary.requests} requests: {summary.hits} hits, {summary.partial} "
              f"partial, {summary.misses} misses; {summary.cached} of {summary.prompt} prompt tokens "
              f"came from the cache ({reuse:.0%}).\n")
    if summary.requests == 0:
        out.write("No completed request was found in this log.\n")
        for note in _periodic_notes(args.file, _hint(args.kind)):
            out.write(f"{note}\n")
    if diagnosis is not None:
        out.write(f"\nDiagnosis: {diagnosis.message}\n")
        if diagnosis.fix_env:
            out.write("Fix: " + " ".join(f"{k}={v}" for k, v in diagnosis.fix_env.items()) + "\n")
    return 0


def _periodic_notes(path: str, hint: str | None) -> list[str]:
    """A log with no per-request line may still carry periodic stats (an engine-stats line): say so."""
    from kvswitch.logs.parsers import periodic_summaries  # noqa: PLC0415

    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return periodic_summaries(handle.read(64 * 1024 * 1024).splitlines(), hint)
    except OSError:
        return []


def _scan_jsonl(args: argparse.Namespace) -> int:
    """JSON lines written in big batches, straight from the scanner."""
    hint = _hint(args.kind)
    sys.stdout.flush()
    binary: BinaryIO | None = getattr(sys.stdout, "buffer", None)
    totals = Totals()
    for text in jsonl_file(args.file, hint, totals):  # opens now: a bad path fails before any output
        if binary is not None:
            binary.write(text)
        else:
            sys.stdout.write(text.decode())
    summary = json.dumps({"summary": totals.to_json(diagnose(totals.latest()))}) + "\n"
    if binary is not None:
        binary.write(summary.encode())
        binary.flush()
    else:
        sys.stdout.write(summary)
    return 0


class _Gated:
    """``log scan``'s table stream: every write through ``for_terminal``."""

    def __init__(self, stream: TextIO):
        self.stream = stream

    def write(self, text: str) -> None:
        self.stream.write(for_terminal(text))


def _table_row(event: CacheEvent) -> str:
    def show(value: object) -> str:
        return "-" if value is None else str(value)

    ms = "-" if event.prompt_ms is None else f"{event.prompt_ms:.1f}"
    task = event.request_id if event.task is None else event.task
    return (f"{event.last_line:>8} {show(event.slot):>4} {show(task):>8} "
            f"{event.prompt_tokens:>7} {event.cached_tokens:>7} {event.new_tokens:>7} {ms:>9} "
            f"{event.reuse_ratio:>6.0%}  {event.verdict:<7}  {event.reason or ''}\n")


def _tail(args: argparse.Namespace) -> int:
    if args.lines < 0:
        raise UsageError("--lines must be 0 or more")
    colour = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
    # the live path's modules, imported here: ``log scan`` (often run in a loop) never needs them
    from kvswitch.logs.analyzer import LogAnalyzer  # noqa: PLC0415
    from kvswitch.logs.render import describe_event, render_ansi  # noqa: PLC0415
    from kvswitch.logs.sources import FileFollower  # noqa: PLC0415

    follower = FileFollower(args.file, start_at_end=True, tail_lines=args.lines)
    analyzer = LogAnalyzer(_hint(args.kind))
    line_no = 0
    last_status = ""
    try:
        while True:
            lines = follower.read_lines()
            if follower.status != last_status:
                last_status = follower.status
                sys.stderr.write(for_terminal(f"kvswitch: {last_status}") + "\n")
                sys.stderr.flush()
            for line in lines:
                line_no += 1
                result = analyzer.feed(line, line_no)
                shown = render_ansi(result.line) if colour else for_terminal(result.line.text)
                sys.stdout.write(shown + "\n")
                for event in result.events:
                    note = for_terminal(f"  => {describe_event(event)}")
                    sys.stdout.write((render_ansi_note(note, event) if colour else note) + "\n")
            sys.stdout.flush()
            if args.no_follow and not lines:
                return 0 if follower.status.startswith("following") else 1
            if not lines:
                time.sleep(0.25)
    except KeyboardInterrupt:
        return 0
    finally:
        follower.close()


def render_ansi_note(note: str, event: CacheEvent) -> str:
    from kvswitch.logs.model import kind_for_verdict  # noqa: PLC0415
    from kvswitch.logs.render import LINE_COLOURS, RESET  # noqa: PLC0415

    return f"{LINE_COLOURS[kind_for_verdict(event.verdict)]}\x1b[1m{note}{RESET}"
