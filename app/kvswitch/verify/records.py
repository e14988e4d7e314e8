"""Run the real-client verify end to end and keep every verify in the profile's history.

The CLI (``kvswitch verify``) and the desktop app both call these, so a run looks the same in the
history whichever of them started it: one place builds the ``HistoryEntry`` of a real-client session
(reuse and TTFT from the first conversation's turns) and of a synthetic probe.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.verify.client_report import ClientReport, build_report, env_fingerprint
from kvswitch.verify.client_run import ClientSession, run_session
from kvswitch.verify.history import HistoryEntry, VerifyHistory, now, public_url, server_identity
from kvswitch.verify.result import VerifyResult


def history(paths: AppPaths) -> VerifyHistory:
    return VerifyHistory(paths.data_dir / "verify-history")


def run_client_check(
    paths: AppPaths,
    profile: Profile,
    binary: Path,
    *,
    timeout: float,
    on_step: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
    client: str = "claude",
) -> ClientReport:
    """Run the client's scripted session, judge every turn, and append the run to the history."""
    from kvswitch.verify.tokendiag import RenderError, ServerRenderer  # noqa: PLC0415 - only here

    session = run_session(profile, binary, timeout=timeout, on_step=on_step, cancel=cancel, client=client)
    try:
        renderer: ServerRenderer | None = ServerRenderer(
            profile.base_url, timeout=min(120.0, timeout), kind=profile.kind
        )
    except RenderError:
        renderer = None  # the diagnosis falls back to the request JSON, in bytes
    report = build_report(profile, session, renderer)
    remember_client(paths, profile, session, report)
    return report


def remember_client(paths: AppPaths, profile: Profile, session: ClientSession, report: ClientReport) -> None:
    """Keep a real-client run: reuse over the turns inside conversation 1, TTFT of its turns 1 and 2."""
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
            client=session.client,
            client_version=session.version,
            server=server_identity(profile.base_url),
            env_fingerprint=report.env_fingerprint,
            reuse_ratio=cached / prompt if prompt else None,
            cached_tokens=cached,
            prompt_tokens=prompt,
            ttft_cold_ms=cold.prompt_ms if cold else None,
            ttft_warm_ms=warm.prompt_ms if warm else None,
            requests=report.to_json()["requests"],
        )
    )


def remember_synthetic(paths: AppPaths, profile: Profile, result: VerifyResult) -> None:
    """Keep a synthetic verify in the profile's history (an ERROR too: it is part of the story)."""
    verdict = str(getattr(result.verdict, "value", result.verdict))
    reached = verdict != "ERROR"
    history(paths).append(
        HistoryEntry(
            time=now(),
            profile=profile.name,
            check="synthetic",
            verdict=verdict,
            server=server_identity(profile.base_url) if reached else {"url": public_url(profile.base_url)},
            env_fingerprint=env_fingerprint(profile),
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
