"""``kvswitch verify --client claude`` and ``verify --history``: the real-client check and the record
of every run, kept apart from the synthetic probe's options so each reads on its own."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.core.text import printable
from kvswitch.verify.history import describe, to_csv
from kvswitch.verify.result import VerifyResult

Printer = Callable[[str], None]


def run(
    paths: AppPaths, args: argparse.Namespace, profile: Profile, quiet: bool, out: Printer, err: Printer
) -> int:
    from kvswitch.verify.client_run import find_claude  # noqa: PLC0415 - only this check needs them
    from kvswitch.verify.records import run_client_check  # noqa: PLC0415

    binary = find_claude(args.claude_bin)
    timeout = args.timeout or 600.0

    def step(text: str) -> None:
        if not quiet:
            err(f"[claude] {text}")

    report = run_client_check(paths, profile, binary, timeout=timeout, on_step=step)
    out(json.dumps(report.to_json(), indent=2, ensure_ascii=False) if args.json else report.describe())
    return report.exit_code


def remember_synthetic(paths: AppPaths, profile: Profile, result: VerifyResult) -> None:
    """Kept for callers of the command layer; the record itself lives in ``verify.records``."""
    from kvswitch.verify import records  # noqa: PLC0415 - the client-check modules load on use

    records.remember_synthetic(paths, profile, result)


def show_history(paths: AppPaths, args: argparse.Namespace, out: Printer) -> int:
    from kvswitch.verify.records import history  # noqa: PLC0415

    store = history(paths)
    names = [args.profile] if args.profile else store.profiles()
    problems: list[str] = []
    entries = sorted((e for name in names for e in store.load(name, problems)), key=lambda e: e.time)
    for problem in problems:
        sys.stderr.write(f"warning: {printable(problem)}\n")
    if args.json:
        out(json.dumps([e.to_json() for e in entries], indent=2, ensure_ascii=False))
    elif args.csv:
        out(to_csv(entries).rstrip("\n"))
    else:
        out(describe(entries))
    return 0
