"""``kvswitch verify --client claude`` and ``verify --history``: the real-client check and the record
of every run, kept apart from the synthetic probe's options so each reads on its own."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.verify.history import HistoryEntry, VerifyHistory, describe, now, server_identity, to_csv
from kvswitch.verify.result import VerifyResult

Printer = Callable[[str], None]


def history(paths: AppPaths) -> VerifyHistory:
    return VerifyHistory(paths.data_dir / "verify-history")


def run(
    paths: AppPaths, args: argparse.Namespace, profile: Profile, quiet: bool, out: Printer, err: Printer
) -> int:
    from kvswitch.verify.client_report import build_report  # noqa: PLC0415 - only this check needs them
    from kvswitch.verify.client_run import find_claude, run_session  # noqa: PLC0415
    from kvswitch.verify.tokendiag import RenderError, ServerRenderer  # noqa: PLC0415

    binary = find_claude(args.claude_bin)
    timeout = args.timeout or 600.0

    def step(text: str) -> None:
        if not quiet:
            err(f"[claude] {text}")

    session = run_session(profile, binary, timeout=timeout, on_step=step)
    try:
        renderer: ServerRenderer | None = ServerRenderer(
            profile.base_url, timeout=min(120.0, timeout), kind=profile.kind
        )
    except RenderError:
        renderer = None  # the diagnosis falls back to the request JSON, in bytes
    report = build_report(profile, session, renderer)
    data = report.to_json()
    turns = {(t.conversation, t.turn): t for t in report.turns}
    inside = [t for t in report.turns if t.conversation == 1 and t.turn > 1 and t.prompt_tokens]
    prompt = sum(t.prompt_tokens or 0 for t in inside)
    cached = sum(t.cached_tokens or 0 for t in inside)
    cold, warm = turns.get((1, 1)), turns.get((1, 2))
    history(paths).append(
        HistoryEntry(
            time=now(),
            profile=profile.name,
            check="client",
            verdict=report.verdict,
            client="claude",
            client_version=session.version,
            server=server_identity(profile.base_url),
            env_fingerprint=report.env_fingerprint,
            reuse_ratio=cached / prompt if prompt else None,
            cached_tokens=cached,
            prompt_tokens=prompt,
            ttft_cold_ms=cold.prompt_ms if cold else None,
            ttft_warm_ms=warm.prompt_ms if warm else None,
            requests=data["requests"],
        )
    )
    out(json.dumps(data, indent=2, ensure_ascii=False) if args.json else report.describe())
    return report.exit_code


def remember_synthetic(paths: AppPaths, profile: Profile, result: VerifyResult) -> None:
    """Keep a synthetic verify in the profile's history (an ERROR too: it is part of the story)."""
    history(paths).append(
        HistoryEntry(
            time=now(),
            profile=profile.name,
            check="synthetic",
            verdict=result.verdict,
            server=server_identity(profile.base_url)
            if result.verdict != "ERROR"
            else {"url": profile.base_url},
            env_fingerprint=_fingerprint(profile),
            reuse_ratio=result.reuse_ratio,
            cached_tokens=result.cached_tokens,
            prompt_tokens=result.prompt_tokens,
            ttft_cold_ms=result.ttft_cold_ms,
            ttft_warm_ms=result.ttft_warm_ms,
            requests=[
                {
                    "request": "cold",
                    "cached_tokens": result.cold_cached_tokens,
                    "prompt_tokens": result.cold_prompt_tokens,
                    "prompt_ms": result.ttft_cold_ms,
                },
                {
                    "request": "warm",
                    "cached_tokens": result.cached_tokens,
                    "prompt_tokens": result.prompt_tokens,
                    "prompt_ms": result.ttft_warm_ms,
                },
            ],
        )
    )


def _fingerprint(profile: Profile) -> str:
    from kvswitch.verify.client_report import env_fingerprint  # noqa: PLC0415

    return env_fingerprint(profile)


def show_history(paths: AppPaths, args: argparse.Namespace, out: Printer) -> int:
    store = history(paths)
    names = [args.profile] if args.profile else store.profiles()
    entries = sorted((e for name in names for e in store.load(name)), key=lambda e: e.time)
    if args.json:
        out(json.dumps([e.to_json() for e in entries], indent=2, ensure_ascii=False))
    elif args.csv:
        out(to_csv(entries).rstrip("\n"))
    else:
        out(describe(entries))
    return 0
