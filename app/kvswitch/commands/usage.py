"""``kvswitch usage``: what the gateway recorded, read without changing it (``kvswitch sessions``, which
joins the gateway's sessions with the clients' own files, is ``commands/sessions.py``).

A standalone command module (``cli.STANDALONE_COMMANDS``): reading a summary must not pay for importing
the switching engine, pydantic and httpx (issue 28 asks for a summary of a million rows in under 2 s).
Totals are summed by SQLite; ``--json``, ``--csv`` and ``--requests`` stream rows from a cursor, so
memory stays flat whatever the file holds. Every text a client or an upstream chose (model names,
profile names, errors) is passed through ``core.text.printable`` before it reaches a terminal or a
CSV file, and a CSV cell that a spreadsheet would run as a formula is quoted.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import re
import sqlite3
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO

from kvswitch.commands.common import err, out, paths_from
from kvswitch.core.errors import KvSwitchError, UsageError
from kvswitch.core.gateway_config import usage_db
from kvswitch.core.text import printable

VERDICTS = ("HIT", "PARTIAL", "MISS", "COLD")
_TOTAL_KEYS = ("requests", "errors", "input_tokens", "cached_tokens", "output_tokens", "cost")
#: what a spreadsheet reads as the start of a formula (``=HYPERLINK(...)``, ``+cmd|...``, ``@SUM``, ``-1+1``),
#: also after leading blanks, and a tab or carriage return, which some spreadsheets drop before reading on
#: (OWASP's CSV injection list)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def register(subparsers: Any) -> None:
    usage = subparsers.add_parser("usage", help="requests served by the gateway, with tokens and cost")
    _filters(usage)
    usage.add_argument("--requests", action="store_true",
                       help="one line per request (newest last) with its cache verdict and reason")
    form = usage.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="every request as a JSON object (streamed)")
    form.add_argument("--csv", action="store_true", help="every request as a CSV line (streamed)")
    usage.set_defaults(func=cmd_usage)


def _filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--since", default="1d", help="how far back: 30m, 12h, 1d, 7d, or all (default 1d)")
    parser.add_argument("--profile", help="only this profile's requests")
    parser.add_argument("--client", help="only this client's (claude, codex, pinned, or the client's name)")
    parser.add_argument("--session", help="only this session's requests")
    parser.add_argument("--verdict", type=str.upper, choices=VERDICTS, help="only requests with this verdict")


_SPAN = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(text: str) -> float | None:
    """``30m``, ``12h``, ``1d``, ``2w`` → seconds; ``all`` → None (no bound)."""
    if text.strip().lower() == "all":
        return None
    match = _SPAN.fullmatch(text.strip().lower())
    if not match:
        raise UsageError(f"--since {text!r}: expected a number and a unit (s, m, h, d, w), or all; e.g. 1d")
    return float(match.group(1)) * _UNIT[match.group(2)]


def _filter_of(args: argparse.Namespace) -> Any:
    from kvswitch.usage.queries import UsageFilter  # noqa: PLC0415 - only once parsing succeeded

    span = parse_since(args.since)
    return UsageFilter(since=None if span is None else time.time() - span, profile=args.profile,
                       client=args.client, session=args.session, verdict=args.verdict)


class _Unreadable(KvSwitchError):
    """The usage file cannot be read: the message names it and says what to do."""


def _unreadable(db: Any, exc: BaseException) -> _Unreadable:
    why = getattr(exc, "why", None) or (exc.strerror if isinstance(exc, OSError) and exc.strerror else exc)
    return _Unreadable(f"cannot read the usage database {db}: {why} (kvswitch gateway run sets an unusable "
                       "file aside and starts a new one)")


def cmd_usage(args: argparse.Namespace) -> int:
    from kvswitch.usage import queries as usage_queries  # noqa: PLC0415
    from kvswitch.usage.schema import UsageFileError  # noqa: PLC0415

    paths = paths_from(args)
    db = usage_db(paths)
    filters = _filter_of(args)
    tally = usage_queries.Tally()
    if args.json or args.csv or args.requests:
        _remember_secrets(paths)  # rows stored before errors were masked on the way in
    try:
        if args.json:
            write_json(usage_queries.iter_values(db, filters, tally=tally), sys.stdout)
        elif args.csv:
            write_csv(usage_queries.iter_values(db, filters, tally=tally), sys.stdout)
        elif args.requests:
            _print_requests(usage_queries.iter_rows(db, filters, tally=tally))
        else:
            _print_summary(usage_queries.summary(db, filters, tally), args.since)
        sys.stdout.flush()
    except BrokenPipeError:
        return quiet_closed_stdout()
    except (UsageFileError, sqlite3.Error, OSError) as exc:
        sys.stdout.flush()
        raise _unreadable(db, exc) from None
    if tally.note():
        err(f"kvswitch: note: {tally.note()}")
    return 0


def quiet_closed_stdout() -> int:
    """The reader closed our stdout (``| head -1``): stop quietly, as ``cat`` and ``grep`` do, with 0.

    What is still buffered cannot be written; pointing stdout at the null device keeps the
    interpreter's last flush from printing "Exception ignored … BrokenPipeError" and exiting 120.
    """
    import os  # noqa: PLC0415

    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError):  # no file descriptor behind stdout (a test's capture)
        pass
    return 0


def _remember_secrets(paths: Any) -> None:
    """The profiles' keys and the gateway token, for masking the error texts shown
    (``usage.readback.hide_secrets``); a profiles file that cannot be read masks by shape only."""
    from kvswitch.core.gateway_config import load_token  # noqa: PLC0415
    from kvswitch.core.knownsecrets import remember_secrets  # noqa: PLC0415
    from kvswitch.core.store import ProfileStore  # noqa: PLC0415

    with contextlib.suppress(KvSwitchError, OSError, ValueError):
        ProfileStore(paths).summaries()  # remembers every key it loads (core.store)
    token = load_token(paths)
    if token:
        remember_secrets([token])


def write_json(rows: Iterable[tuple[Any, ...]], stream: TextIO) -> int:
    """A JSON array of the rows, one object per line, written as they are read (never all in memory).
    The array is closed even when reading stops half-way, so what was read stays a valid document."""
    from kvswitch.servers.tier_words import parsed  # noqa: PLC0415
    from kvswitch.usage.schema import COLUMNS  # noqa: PLC0415

    encode = _row_encoder()  # ASCII-only: escapes and bidi marks are written as \\u escapes
    shown_time = _TimeCache()
    count = 0
    write = stream.write
    stream.write("[")
    try:
        for values in rows:
            data = dict(zip(COLUMNS, values, strict=True))
            data["time"] = shown_time(values[0]) if values[0] is not None else None
            if data.get("tiers") is not None:  # the split by cache tier as an object, null when unreadable
                data["tiers"] = parsed(data["tiers"])
            write((",\n  " if count else "\n  ") + encode(data))
            count += 1
    finally:
        stream.write("\n]\n" if count else "]\n")
    return count


def _row_encoder() -> Callable[[dict[str, Any]], str]:
    """``json.JSONEncoder().encode`` for one flat row, without building a new C encoder per call.

    Profiled on 100,000 rows, ``encode`` spent most of its time setting up the C encoder each time;
    one built once (``json.encoder.c_make_encoder``, where this Python has it) writes the same text.
    """
    import json.encoder  # noqa: PLC0415

    make = getattr(json.encoder, "c_make_encoder", None)
    plain = json.JSONEncoder()
    if make is None:
        return plain.encode
    encoder = make(None, plain.default, json.encoder.encode_basestring_ascii, None, ": ", ", ", False, False,
                   True)
    return lambda data: "".join(encoder(data, 0))


def csv_cell(value: Any) -> Any:
    """A CSV cell safe for a terminal and a spreadsheet: text without escapes, controls or bidi marks
    (``printable``), and a leading ``'`` before text a spreadsheet would run as a formula."""
    if not isinstance(value, str):
        return value
    raw_start = value.startswith(_FORMULA_START)  # a tab or CR that ``printable`` turns into a blank
    text = value if value.isascii() and value.isprintable() else printable(value, multiline=False)
    return "'" + text if raw_start or text.lstrip().startswith(_FORMULA_START) else text


class _Memo(dict[str, Any]):
    """``csv_cell`` per distinct text (profile, model and upstream repeat on nearly every row), bounded."""

    def __missing__(self, key: str) -> Any:
        if len(self) > 50_000:
            self.clear()
        value = self[key] = csv_cell(key)
        return value


class _TimeCache(dict[int, str]):
    """``local_time`` per whole second (rows of one second share it), bounded."""

    def __call__(self, epoch: Any) -> str:
        if epoch.__class__ is float or epoch.__class__ is int:
            found = self.get(int(epoch))
            if found is not None:
                return found
        return self._missing(epoch)

    def _missing(self, epoch: Any) -> str:
        from kvswitch.usage.schema import local_time  # noqa: PLC0415

        if not isinstance(epoch, int | float):
            return ""
        if len(self) > 50_000:
            self.clear()
        second = int(epoch)
        found = self[second] = local_time(second)
        return found


def write_csv(rows: Iterable[tuple[Any, ...]], stream: TextIO) -> int:
    """The header and one line per row, written as they are read."""
    from kvswitch.usage.schema import COLUMNS  # noqa: PLC0415

    writer = csv.writer(stream)
    writer.writerow(COLUMNS)
    cell, shown_time = _Memo(), _TimeCache()
    count = 0
    batch: list[list[Any]] = []
    try:
        for values in rows:
            cells = [cell[value] if value.__class__ is str else value for value in values]
            cells[0] = shown_time(values[0])
            batch.append(cells)
            if len(batch) == 500:  # one call per 500 lines: the per-call cost was a third of writerow's
                writer.writerows(batch)
                count += len(batch)
                batch.clear()
    finally:  # what was read is written, also when reading stops half-way
        writer.writerows(batch)
    return count + len(batch)


def _print_summary(totals: dict[str, dict[str, float]], since: str) -> None:
    if not totals:
        out("no requests through the gateway in that time")
        return
    out(f"usage through the gateway ({'all time' if since.strip().lower() == 'all' else 'last ' + since}):")
    whole = dict.fromkeys(_TOTAL_KEYS, 0.0)
    for profile, entry in sorted(totals.items(), key=lambda item: -item[1]["requests"]):
        out(printable(f"  {profile}: {_totals_line(entry)}", multiline=False))
        for key in whole:
            whole[key] += entry.get(key, 0)
    if len(totals) > 1:
        out(f"  all profiles: {_totals_line(whole)}")


def _totals_line(entry: dict[str, float]) -> str:
    share = f"{entry['cached_tokens'] / entry['input_tokens']:.0%}" if entry["input_tokens"] else "-"
    failed = f", {int(entry['errors']):,} failed" if entry.get("errors") else ""
    requests = int(entry["requests"])
    return (f"{requests:,} request{'' if requests == 1 else 's'}{failed}; "
            f"prompt {int(entry['input_tokens']):,} tokens, "
            f"cached {int(entry['cached_tokens']):,} ({share}), output {int(entry['output_tokens']):,}; "
            f"${entry['cost']:.4f}")


def _known(value: Any) -> Any:
    """A count as the request line shows it: ``?`` when it is unknown (not reported, or not readable)."""
    return "?" if value is None else value


def _print_requests(rows: Iterator[Any]) -> None:
    from kvswitch.servers.tier_words import tiers_line  # noqa: PLC0415

    any_row = False
    for row in rows:
        any_row = True
        data = row.to_json()
        share = f"{row.cached_tokens / row.input_tokens:.0%}" if row.input_tokens and row.cached_tokens \
            is not None else "-"
        cost = f"${row.cost:.4f}" if row.cost is not None else "-"
        ttft = f"{row.ttft_ms:.0f} ms" if row.ttft_ms is not None else "-"
        line = (f"{data['time']} {row.profile} {row.model or '-'} {_known(row.status)} in "
                f"{_known(row.input_tokens)} cached {_known(row.cached_tokens)} ({share}) out "
                f"{_known(row.output_tokens)} ttft {ttft} {cost}")
        if row.session:
            line += f" session {row.session}"
        if row.verdict:
            line += f" {row.verdict}" + (f" ({row.reason})" if row.reason else "")
        tiers = tiers_line(row.tiers)
        if tiers:
            line += f" tiers {tiers}"
        if row.failover:
            line += f" [failover: {row.failover}]"
        if row.notes:
            line += f" [{row.notes}]"
        out(printable(line, multiline=False))
    if not any_row:
        out("no requests through the gateway in that time")
