"""``kvswitch log scan`` and ``kvswitch log tail``: the log engine from a terminal or a script.

``scan FILE --jsonl`` is the stable machine form: one JSON object per completed request, then one
``{"summary": {...}}`` line (with the diagnosis, if any). Without ``--jsonl`` a table for people.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import deque
from typing import Any, TextIO

from kvswitch.core.errors import UsageError
from kvswitch.logs.analyzer import LogAnalyzer
from kvswitch.logs.diagnose import Diagnosis, diagnose
from kvswitch.logs.model import CacheEvent
from kvswitch.logs.parsers import KINDS
from kvswitch.logs.render import describe_event, render_ansi
from kvswitch.logs.scan import scan_file
from kvswitch.logs.sources import FileFollower

#: events kept for the diagnosis (it only looks at the latest run), so memory never grows with the file
DIAGNOSIS_WINDOW = 64


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


class _Summary:
    def __init__(self) -> None:
        self.counts = {"hit": 0, "partial": 0, "miss": 0}
        self.prompt = self.cached = self.new = 0
        self.recent: deque[CacheEvent] = deque(maxlen=DIAGNOSIS_WINDOW)

    def add(self, event: CacheEvent) -> None:
        self.counts[event.verdict] += 1
        self.prompt += event.prompt_tokens
        self.cached += event.cached_tokens
        self.new += event.new_tokens
        self.recent.append(event)

    @property
    def requests(self) -> int:
        return sum(self.counts.values())

    def to_json(self, diagnosis: Diagnosis | None) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "hits": self.counts["hit"],
            "partial": self.counts["partial"],
            "misses": self.counts["miss"],
            "prompt_tokens": self.prompt,
            "cached_tokens": self.cached,
            "new_tokens": self.new,
            "reuse_ratio": round(self.cached / self.prompt, 4) if self.prompt else 0.0,
            "diagnosis": None if diagnosis is None else {
                "code": diagnosis.code, "message": diagnosis.message, "fix_env": diagnosis.fix_env,
            },
        }


def _scan(args: argparse.Namespace) -> int:
    out: TextIO = sys.stdout
    summary = _Summary()
    events = scan_file(args.file, _hint(args.kind))  # opens now: a bad path fails before any output
    if not args.jsonl:
        out.write(f"{'line':>8} {'slot':>4} {'task':>8} {'prompt':>7} {'cached':>7} {'new':>7} "
                  f"{'ms':>9} {'reuse':>6}  verdict  reason\n")
    for event in events:
        summary.add(event)
        if args.jsonl:
            out.write(event_json_line(event))
        else:
            out.write(_table_row(event))
    diagnosis = diagnose(list(summary.recent))
    if args.jsonl:
        out.write(json.dumps({"summary": summary.to_json(diagnosis)}) + "\n")
        return 0
    reuse = summary.cached / summary.prompt if summary.prompt else 0.0
    out.write(f"\n{summary.requests} requests: {summary.counts['hit']} hits, {summary.counts['partial']} "
              f"partial, {summary.counts['miss']} misses; {summary.cached} of {summary.prompt} prompt tokens "
              f"came from the cache ({reuse:.0%}).\n")
    if summary.requests == 0:
        out.write("No completed request was found in this log.\n")
    if diagnosis is not None:
        out.write(f"\nDiagnosis: {diagnosis.message}\n")
        if diagnosis.fix_env:
            out.write("Fix: " + " ".join(f"{k}={v}" for k, v in diagnosis.fix_env.items()) + "\n")
    return 0


_JSON_TEXT_CACHE: dict[str | None, str] = {}


def _json_text(value: str | None) -> str:
    """JSON of a short string that repeats a lot (server names, reasons), memoised (bounded)."""
    found = _JSON_TEXT_CACHE.get(value)
    if found is None:
        found = json.dumps(value)
        if len(_JSON_TEXT_CACHE) < 4096:
            _JSON_TEXT_CACHE[value] = found
    return found


def _json_number(value: int | float | None) -> str:
    """What ``json.dumps`` writes for a finite number (its ``repr``), without its overhead."""
    return "null" if value is None else repr(value)


def event_json_line(event: CacheEvent) -> str:
    """``json.dumps(event.to_json())`` plus a newline, several times faster (a scan prints millions)."""
    return (
        f'{{"line": {event.last_line}, "server": {_json_text(event.server)}, '
        f'"slot": {_json_number(event.slot)}, '
        f'"task": {_json_number(event.task)}, "request_id": {_json_text(event.request_id)}, '
        f'"prompt_tokens": {event.prompt_tokens}, "cached_tokens": {event.cached_tokens}, '
        f'"new_tokens": {event.new_tokens}, "prompt_ms": {_json_number(event.prompt_ms)}, '
        f'"reuse_ratio": {_json_number(round(event.reuse_ratio, 4))}, "verdict": "{event.verdict}", '
        f'"first_line": {event.first_line}, "last_line": {event.last_line}, '
        f'"reason": {_json_text(event.reason)}, "timestamp": {_json_text(event.timestamp)}}}\n'
    )


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
    follower = FileFollower(args.file, start_at_end=True, tail_lines=args.lines)
    analyzer = LogAnalyzer(_hint(args.kind))
    line_no = 0
    last_status = ""
    try:
        while True:
            lines = follower.read_lines()
            if follower.status != last_status:
                last_status = follower.status
                sys.stderr.write(f"kvswitch: {last_status}\n")
                sys.stderr.flush()
            for line in lines:
                line_no += 1
                result = analyzer.feed(line, line_no)
                sys.stdout.write((render_ansi(result.line) if colour else result.line.text) + "\n")
                for event in result.events:
                    note = f"  => {describe_event(event)}"
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
