"""``kvswitch sweep PROFILE --server-cmd CMD --vary FLAG=V1,V2 ...``: the settings table, headless.

The command can also come last, after the profile and ``--`` (``kvswitch sweep --vary=-np=1,4 local --
SERVER ARGS...``), which needs no quoting; argparse then wants the options before the profile.
``--vary -np=1,4`` (the value in its own word, as people type it) works too: ``joined_vary_values`` makes
it ``--vary=-np=1,4`` before argparse, which would otherwise take ``-np=1,4`` for an option of its own.

Exit status: 0 when every setting was measured (whatever its verdict), 1 when a setting failed to start,
crashed or errored (its row says why), 2 bad usage — including a server already running on the profile's
port, which the sweep never restarts.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from typing import Any

from kvswitch.commands.common import err, out, paths_from, store_from, timeout_seconds
from kvswitch.core.errors import UsageError

EPILOG = ("exit status: 0 every setting measured, 1 a setting failed to start, crashed or errored (its row "
          "says why), 2 bad usage or a server already running on the profile's port")


def joined_vary_values(argv: list[str]) -> list[str]:
    """``--vary -np=1,4`` as ``--vary=-np=1,4`` (only before ``--``: what follows is the server's)."""
    joined: list[str] = []
    words = iter(argv)
    for word in words:
        if word == "--":
            joined += [word, *words]
            break
        if word == "--vary":
            value = next(words, None)
            if value is not None and value.startswith("-") and value != "--":
                joined.append(f"--vary={value}")
                continue
            joined += [word] if value is None else [word, value]
            if value == "--":
                joined += list(words)
                break
            continue
        joined.append(word)
    return joined


def register(subparsers: Any) -> None:
    sweep = subparsers.add_parser(
        "sweep",
        help="restart the profile's local server once per setting and measure each (the settings table)",
        description="Start the profile's local server with each setting of a grid (the cartesian product "
        "of the --vary options, substituted into --server-cmd), wait until it is ready, run the same "
        "measurement against it (verify's synthetic probe, or the real client's session with --client), "
        "stop it, and print TTFT, hit rate and tokens re-processed per setting from the server's own "
        "numbers. A setting that fails to start or crashes is a row with its reason. Each row also goes "
        "into the profile's verify history. With --tier-cmd a cache tier's own server is started "
        "before the server in every setting, and its flags can be varied too.",
        epilog=EPILOG,
    )
    sweep.add_argument("profile", help="the profile whose local server is swept (its base URL's port)")
    sweep.add_argument("--server-cmd", metavar="CMD",
                       help="the server's command line, as you would type it (it must listen on the "
                       "profile's port); run without a shell. Or give it last: [options] PROFILE -- CMD")
    sweep.add_argument("command", nargs="*", metavar="-- CMD", help="the server's command, after --")
    sweep.add_argument("--tier-cmd", metavar="CMD",
                       help="a cache tier's own server command (the server's connector must point at its "
                       "port): started first and stopped last in every setting; vary its flags as "
                       "TIER.FLAG=V1,V2 (e.g. the tier's --chunk-size as TIER.chunk-size=128,256), and the "
                       "rows add the warm request's tokens by tier")
    sweep.add_argument("--vary", action="append", required=True, metavar="FLAG=V1,V2",
                       help="a flag and its values, e.g. --vary -np=1,4 --vary --cache-ram=0,default; "
                       "'default' leaves the flag out, "
                       "'set' passes it alone; repeat for a grid")
    sweep.add_argument("--client", choices=["claude", "codex", "opencode"],
                       help="run the real client's session against each setting instead of the probe")
    for name in ("claude", "codex", "opencode"):
        sweep.add_argument(f"--{name}-bin", metavar="PATH", help=f"the {name} binary (default: on PATH)")
    sweep.add_argument("--interleave", action="store_true",
                       help="probe only: send another conversation between the cold and the warm request, "
                       "to see whether the setting keeps the first one")
    sweep.add_argument("--rounds", type=int, default=2, metavar="N",
                       help="probe only: N requests with the same system prompt and a new user question each "
                       "(2, the default: cold then warm; up to 5); the row is the last one's")
    sweep.add_argument("--timeout", type=timeout_seconds, default=None,
                       help="seconds per measurement (default 60; 600 with --client)")
    sweep.add_argument("--start-timeout", type=timeout_seconds, default=300.0,
                       help="seconds a setting's server may take to become ready (default 300)")
    shape = sweep.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="print the table as JSON")
    shape.add_argument("--csv", action="store_true", help="print the table as CSV")
    sweep.set_defaults(func=_sweep)


def _sweep(args: argparse.Namespace) -> int:
    from kvswitch.verify import sweep, sweep_measure  # noqa: PLC0415 - the probe loads only here
    from kvswitch.verify.records import history  # noqa: PLC0415

    profile = store_from(args).get(args.profile)
    if bool(args.server_cmd) == bool(args.command):
        raise UsageError("give the server's command once: --server-cmd \"CMD\" or, last, -- CMD")
    try:
        command = shlex.split(args.server_cmd) if args.server_cmd else list(args.command)
    except ValueError as exc:
        raise UsageError(f"--server-cmd: {exc}") from None
    varies = [sweep.parse_vary(text) for text in args.vary]
    try:
        tier_command = shlex.split(args.tier_cmd) if args.tier_cmd else None
    except ValueError as exc:
        raise UsageError(f"--tier-cmd: {exc}") from None
    if args.client:
        if args.interleave or args.rounds != 2:
            raise UsageError("--interleave and --rounds are for the synthetic probe; the client's session is "
                             "its own")
        from kvswitch.verify.client_run import find_client  # noqa: PLC0415

        binary = find_client(args.client, getattr(args, f"{args.client}_bin", None))
        measure, probe, timeout = sweep_measure.client(args.client, binary), f"{args.client} session", 600.0
    else:
        if not 2 <= args.rounds <= sweep_measure.MAX_ROUNDS:
            raise UsageError(f"--rounds {args.rounds}: give 2 to {sweep_measure.MAX_ROUNDS}")
        measure = sweep_measure.synthetic(interleave=args.interleave, rounds=args.rounds)
        probe = "interleaved probe" if args.interleave else "synthetic probe"
        if args.rounds > 2:
            probe += f", {args.rounds} rounds"
        timeout = 60.0
    quiet = args.json or args.csv or not sys.stderr.isatty()
    paths = paths_from(args)
    store = history(paths)
    log_dir = paths.data_dir / "verify-history" / "sweep-logs" / sweep.run_stamp()

    def on_row(row: sweep.SweepRow, measured: sweep.Measurement | None) -> None:
        store.append(sweep.history_entry(profile, row, measured))
        if not quiet:
            err(f"  {row.setting}: {row.verdict or row.status.upper()}")

    report = sweep.run_sweep(profile, command, varies, measure, probe=probe, timeout=args.timeout or timeout,
                             start_timeout=args.start_timeout, log_dir=log_dir,
                             on_step=None if quiet else err, on_row=on_row, tier_command=tier_command)
    if args.json:
        out(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    elif args.csv:
        out(report.to_csv().rstrip("\n"))
    else:
        out(report.describe())
    return report.exit_code
