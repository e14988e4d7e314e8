"""``kvswitch verify | diagnose | ps``: the cache checks, headless (``record`` is ``commands.record``).

Exit status of ``verify``: 0 HIT, 1 PARTIAL or MISS (the server does not fully reuse the prefix),
3 UNKNOWN (it answered but reports no cache numbers), 4 ERROR (no usable answer), 2 bad usage.
``diagnose``: 0 when B reuses all of A (identical or append-only), 1 when they diverge.
``ps``: 0 when every agent process is up to date, 1 when one needs a restart.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from kvswitch.commands import verify_client
from kvswitch.commands.common import err, out, paths_from, store_from, timeout_seconds
from kvswitch.core.errors import UsageError
from kvswitch.core.models import Profile, ProfileKind
from kvswitch.core.paths import AppPaths
from kvswitch.verify.api_detect import APIS

EPILOG_VERIFY = "exit status: 0 HIT, 1 PARTIAL or MISS, 3 UNKNOWN (no cache numbers), 4 ERROR, 2 bad usage"


def register(subparsers: Any) -> None:
    verify = subparsers.add_parser(
        "verify",
        help="prove whether a backend reuses the prompt prefix (prompt/KV cache)",
        description="Send two requests sharing a long, never-seen-before prefix and read every cache number "
        "the server reports. Claude profiles also replay Claude Code-shaped requests with and "
        "without its billing header.",
        epilog=EPILOG_VERIFY,
    )
    verify.add_argument("profile", nargs="?", help="profile name (default: the active profile)")
    verify.add_argument("--json", action="store_true", help="print the result as JSON")
    verify.add_argument(
        "--timeout",
        type=timeout_seconds,
        default=None,
        help="seconds for the whole check, every request included (default 30; 600 with --client; "
        "at most 86400)",
    )
    verify.add_argument(
        "--client",
        choices=["claude", "codex", "opencode"],
        help="run the installed client headless through the profile (conversation 1 turns 1-3, "
        "conversation 2 turn 1) and report the server's numbers for every request it sends",
    )
    verify.add_argument("--claude-bin", metavar="PATH", help="the claude binary to run (default: on PATH)")
    verify.add_argument("--codex-bin", metavar="PATH", help="the codex binary to run (default: on PATH)")
    verify.add_argument(
        "--opencode-bin", metavar="PATH", help="the opencode binary to run (default: on PATH)"
    )
    verify.add_argument(
        "--ablate",
        action="store_true",
        help="with --client: run the session once as the profile is and once without each of its env "
        "settings, and say which settings matter (the server's re-processed tokens)",
    )
    verify.add_argument("--csv", action="store_true", help="with --history or --ablate: print CSV")
    verify.add_argument(
        "--history", action="store_true", help="list the stored verify runs of PROFILE (or of every profile)"
    )
    verify.add_argument("--base-url", help="check this URL without a profile")
    verify.add_argument(
        "--kind",
        choices=[k.value for k in ProfileKind],
        default=None,
        help="server kind for --base-url (default: detect)",
    )
    verify.add_argument(
        "--model", help="model name to request (default: the profile's, or the server's first)"
    )
    verify.add_argument("--api", choices=APIS, help="force one API instead of detecting it")
    verify.add_argument(
        "--explain",
        action="store_true",
        help="also say where the warm prompt first differs from the cold one (the server's tokens) and, "
        "behind a cache tier that reuses whole chunks, how many tokens the chunk boundary cost",
    )
    verify.add_argument(
        "--instance",
        action="append",
        default=[],
        metavar="URL",
        help="an instance behind the router at the base URL (repeat it for each): verify reads every "
        "instance's counters and says which one ran each request; a router that lists its instances "
        "itself needs none",
    )
    replay = verify.add_mutually_exclusive_group()
    replay.add_argument(
        "--claude-replay",
        dest="claude_replay",
        action="store_true",
        default=None,
        help="always replay Claude Code-shaped requests (with/without billing header)",
    )
    replay.add_argument(
        "--no-claude-replay", dest="claude_replay", action="store_false", help="skip the Claude Code replay"
    )
    verify.set_defaults(func=_verify)
    verify_client.register_compare(subparsers, timeout_seconds, _load_profile)

    diagnose = subparsers.add_parser(
        "diagnose",
        help="show where two requests stop sharing their prompt prefix, and why",
        description="Compare two request bodies (or recorder captures): first divergent part, byte offset, "
        "snippets, identical share and a named cause (billing header, date, tools, whitespace...).",
        epilog="exit status: 0 when B reuses all of A, 1 when they diverge, 2 bad input",
    )
    diagnose.add_argument("a", type=Path, help="the earlier request (JSON body or capture)")
    diagnose.add_argument("b", type=Path, help="the later request")
    diagnose.add_argument("--json", action="store_true", help="print the diagnosis as JSON")
    diagnose.add_argument(
        "--server",
        metavar="URL",
        help="render and tokenize both requests with this server's own template and tokenizer, so the "
        "numbers are its tokens",
    )
    diagnose.add_argument(
        "--server-timeout",
        type=timeout_seconds,
        default=60.0,
        metavar="S",
        help="deadline for the server (default 60 s)",
    )
    diagnose.set_defaults(func=_diagnose)

    ps = subparsers.add_parser(
        "ps",
        help="list running Claude Code / Codex processes that need a restart after a switch",
        epilog="exit status: 0 all up to date (or none running), 1 some need a restart",
    )
    ps.add_argument("--json", action="store_true", help="print the processes as JSON")
    ps.add_argument("--profile", help="compare with this profile (default: the active one)")
    ps.set_defaults(func=_ps)


def _load_profile(args: argparse.Namespace, name: str | None) -> Profile:
    store = store_from(args)
    name = name or store.active_name
    if not name:
        raise UsageError(
            "no profile named and none is active; name one (kvswitch profile list) or use --base-url"
        )
    profile: Profile = store.get(name)
    return profile


def _verify(args: argparse.Namespace) -> int:
    from kvswitch.core.addresses import check_url_port  # noqa: PLC0415
    from kvswitch.verify.runner import run_verify  # noqa: PLC0415

    if args.history:
        return verify_client.show_history(paths_from(args), args, out)

    if args.base_url:
        try:
            check_url_port(args.base_url)
            profile = Profile(
                name="ad hoc",
                kind=ProfileKind(args.kind or "custom"),
                base_url=args.base_url,
                model=args.model,
                targets=["claude"],
            )
        except ValueError as exc:
            raise UsageError(f"--base-url: {_first_error(exc)}") from None
    else:
        profile = _load_profile(args, args.profile)
        if args.model:
            profile = profile.model_copy(update={"model": args.model})
    quiet = args.json or not sys.stderr.isatty()
    if args.ablate and not args.client:
        raise UsageError("--ablate needs --client claude|codex|opencode (it runs the real client)")
    if args.client:
        return verify_client.run(paths_from(args), args, profile, quiet, out, err)
    args.timeout = args.timeout or 30.0

    def progress(text: str, fraction: float) -> None:
        if not quiet:
            err(f"[{fraction:4.0%}] {text}")

    cancel = threading.Event()
    try:
        result = run_verify(
            profile,
            timeout=args.timeout,
            cancel=cancel,
            progress=progress,
            api=args.api,
            claude_replay=args.claude_replay,
            explain=args.explain,
            instances=args.instance,
        )
    except KeyboardInterrupt:
        cancel.set()
        raise
    verify_client.remember_synthetic(paths_from(args), profile, result)
    if args.json:
        out(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    else:
        out(f"{profile.name}: {result.describe()}")
    return result.exit_code


def _first_error(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        items = errors()
        if items:
            return str(items[0].get("msg", exc)).removeprefix("Value error, ")
    return str(exc)


def _diagnose(args: argparse.Namespace) -> int:
    from kvswitch.verify.diagnose import diagnose_requests, load_request  # noqa: PLC0415

    a, b = load_request(args.a), load_request(args.b)
    fallback_note = BYTES_NOTE
    if args.server:
        from kvswitch.verify.tokendiag import RenderError, ServerRenderer, diagnose_tokens  # noqa: PLC0415

        try:
            tokens = diagnose_tokens(ServerRenderer(args.server, timeout=args.server_timeout), a, b)
        except RenderError as exc:
            fallback_note = f"{exc}; compared the request JSON instead: the numbers are bytes, not tokens."
        else:
            as_json = json.dumps(tokens.to_json(), indent=2, ensure_ascii=False)
            out(as_json if args.json else tokens.describe())
            return 0 if tokens.reusable else 1
    diagnosis = diagnose_requests(a, b)
    if args.json:
        out(
            json.dumps(
                {"units": "bytes", **diagnosis.to_json(), "bytes_note": fallback_note},
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        out(diagnosis.describe() + f"\nNote: {fallback_note}")
    return 0 if diagnosis.identical or diagnosis.extends else 1


#: said whenever ``diagnose`` compares JSON: a person must not read byte shares as reusable tokens
BYTES_NOTE = (
    "numbers are bytes of the request JSON, not tokens; give --server URL (a server that renders "
    "prompts) to count what the server can reuse in its own tokens."
)


def _ps(args: argparse.Namespace) -> int:
    from kvswitch.core.envmap import shell_env  # noqa: PLC0415
    from kvswitch.verify.processes import find_agent_processes  # noqa: PLC0415

    store = store_from(args)
    name = args.profile or store.active_name
    expected: dict[str, str] = {}
    if name:
        profile = store.get(name)
        if any(t in ("bash", "zsh", "fish", "pwsh", "windows-env") for t in profile.targets):
            expected = shell_env(profile)
    applied_at = _last_apply_time(paths_from(args))
    procs = find_agent_processes(expected, applied_at=applied_at)
    if args.json:
        out(
            json.dumps(
                {"profile": name, "applied_at": applied_at, "processes": [p.to_json() for p in procs]},
                indent=2,
            )
        )
    elif not procs:
        out("No Claude Code or Codex process is running.")
    else:
        for proc in procs:
            started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(proc.started_at))
            flag = "RESTART" if proc.needs_restart else "ok"
            out(f"{flag:8} {proc.agent:6} pid {proc.pid:<7} started {started}  {proc.reason}")
    return 1 if any(p.needs_restart for p in procs) else 0


def _last_apply_time(paths: AppPaths) -> float | None:
    """When the last profile was applied, from the switching engine's ledger (``None`` if unknown)."""
    try:
        from kvswitch.core.ledger import Ledger  # noqa: PLC0415

        state = Ledger(paths.state_file).load()
    except Exception:  # noqa: BLE001 - no ledger yet, or an older format: the time check is skipped
        return None
    for entry in reversed(state.history):
        if entry.action == "apply" and entry.created_at:
            try:
                return datetime.fromisoformat(entry.created_at).timestamp()
            except ValueError:
                return None
    return None
