"""``kvswitch verify --client claude|codex`` and ``verify --history``: the real-client check and the record
of every run, kept apart from the synthetic probe's options so each reads on its own."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.core.text import printable
from kvswitch.verify.history import describe, to_csv
from kvswitch.verify.result import VerifyResult

Printer = Callable[[str], None]


def run(
    paths: AppPaths, args: argparse.Namespace, profile: Profile, quiet: bool, out: Printer, err: Printer
) -> int:
    from kvswitch.verify.client_run import find_client  # noqa: PLC0415 - only this check needs them
    from kvswitch.verify.records import run_client_check  # noqa: PLC0415

    client = args.client
    binary = find_client(client, getattr(args, f"{client}_bin", None))
    timeout = args.timeout or 600.0

    def step(text: str) -> None:
        if not quiet:
            err(f"[{client}] {text}")

    if getattr(args, "ablate", False):
        from kvswitch.verify.ablate import ablate  # noqa: PLC0415

        ablation = ablate(profile, binary, client=client, timeout=timeout, on_step=step)
        if args.json:
            out(json.dumps(ablation.to_json(), indent=2, ensure_ascii=False))
        else:
            out(ablation.to_csv().rstrip("\n") if args.csv else ablation.describe())
        return ablation.exit_code
    report = run_client_check(paths, profile, binary, timeout=timeout, on_step=step, client=client)
    out(json.dumps(report.to_json(), indent=2, ensure_ascii=False) if args.json else report.describe())
    return report.exit_code


def register_compare(
    subparsers: Any, timeout_type: Callable[[str], float], load_profile: Callable[[Any, str], Profile]
) -> None:
    """``kvswitch compare PROFILE_A PROFILE_B --client ...``: the same session against two backends."""
    compare = subparsers.add_parser(
        "compare",
        help="run the same real-client session against two profiles and show their numbers side by side",
        description="Run the installed client's scripted session (conversation 1 turns 1-3, conversation 2 "
        "turn 1) through PROFILE_A, then through PROFILE_B, and show per turn each backend's own prompt and "
        "cached tokens, hit rate, time to first byte and the turn's time. Both runs go into the history.",
    )
    compare.add_argument("profile_a")
    compare.add_argument("profile_b")
    compare.add_argument("--client", choices=["claude", "codex", "opencode"], default="claude")
    compare.add_argument("--json", action="store_true", help="print the comparison as JSON")
    compare.add_argument(
        "--timeout", type=timeout_type, default=None, help="seconds per profile (default 600)"
    )
    for name in ("claude", "codex", "opencode"):
        compare.add_argument(
            f"--{name}-bin", metavar="PATH", help=f"the {name} binary to run (default: on PATH)"
        )

    def handler(args: argparse.Namespace) -> int:
        import sys  # noqa: PLC0415

        from kvswitch.commands.common import err, out, paths_from  # noqa: PLC0415
        from kvswitch.verify.client_run import find_client  # noqa: PLC0415
        from kvswitch.verify.compare import compare as run_compare  # noqa: PLC0415

        a, b = load_profile(args, args.profile_a), load_profile(args, args.profile_b)
        binary = find_client(args.client, getattr(args, f"{args.client}_bin", None))
        quiet = args.json or not sys.stderr.isatty()

        def step(text: str) -> None:
            if not quiet:
                err(f"[{args.client}] {text}")

        report = run_compare(paths_from(args), a, b, binary, client=args.client,
                             timeout=args.timeout or 600.0, on_step=step)
        out(json.dumps(report.to_json(), indent=2, ensure_ascii=False) if args.json else report.describe())
        return report.exit_code

    compare.set_defaults(func=handler)


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
