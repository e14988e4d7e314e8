"""The measurements ``kvswitch sweep`` repeats per server setting: verify's own, in the server's numbers.

- ``synthetic``: ``run_verify``'s probe (a cold request, then a warm one with the same long prefix). With
  ``interleave`` another conversation of the same size goes in between, as a subagent or a second
  session would: it shows whether the setting keeps the first conversation (its slot, its RAM cache) or
  makes the server re-process it, which the plain probe cannot show on a server with one conversation.
  With ``rounds`` above 2, further rounds go in between with the same system prompt and other user
  questions (the way a cache tier's users measure it: a long fixed system prompt, then question after
  question); the row's numbers are the last round's, every round's are in ``requests``.
- ``client``: ``verify --client``'s real session (Claude Code, Codex, OpenCode), judged turn by turn.

Either way the hit rate and the tokens re-processed are the server's own (its answers' usage and timings,
its ``/metrics``); TTFT is the time to the first byte of the answer.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from kvswitch.core.models import Profile
from kvswitch.verify.evidence import best_reading
from kvswitch.verify.probe import Guard
from kvswitch.verify.prompts import SUFFIX_COLD, make_prefix, new_nonce
from kvswitch.verify.sweep import Measure, Measurement
from kvswitch.verify.target import Target, measure


def _another_conversation(guard: Guard, target: Target, cold_prefix: str) -> dict[str, Any]:
    """A request as long as the cold one that shares none of its prefix (its own nonce); its numbers."""
    lines = cold_prefix.count("\n")
    other = measure(guard, target, target.body(make_prefix(new_nonce(), lines), SUFFIX_COLD))
    best = best_reading(other.readings)
    return {"request": "between", "cached_tokens": best.cached if best else None,
            "prompt_tokens": best.prompt if best else None, "prompt_ms": other.result.ttft_ms}


#: the questions of the rounds between the cold and the warm one (the probe asks its own two)
ROUND_QUESTIONS = (
    "Question three: which line mentions the bridge first? Reply with one number.",
    "Question four: how many lines are there? Reply with one number.",
    "Question five: which word comes last in line 010? Reply with one word.",
)
MAX_ROUNDS = 2 + len(ROUND_QUESTIONS)


def _another_round(guard: Guard, target: Target, cold_prefix: str, number: int) -> dict[str, Any]:
    """The same system prompt with another user question; its numbers and its tokens by tier."""
    asked = measure(guard, target, target.body(cold_prefix, ROUND_QUESTIONS[number - 2]))
    best = best_reading(asked.readings)
    return {"request": f"round {number}", "cached_tokens": best.cached if best else None,
            "prompt_tokens": best.prompt if best else None, "prompt_ms": asked.result.ttft_ms,
            "tiers": asked.tiers}


def synthetic(*, interleave: bool = False, rounds: int = 2) -> Measure:
    """``rounds``: 2 is verify's cold and warm request; up to ``MAX_ROUNDS`` asks more questions between."""
    if not 2 <= rounds <= MAX_ROUNDS:
        raise ValueError(f"rounds must be 2 to {MAX_ROUNDS}")
    from kvswitch.verify.runner import run_verify  # noqa: PLC0415 - the probe loads when a sweep runs

    def run(profile: Profile, timeout: float, cancel: threading.Event | None) -> Measurement:
        between: list[dict[str, Any]] = []

        def interleaved(guard: Guard, target: Target, cold_prefix: str) -> None:
            for number in range(2, rounds):
                between.append(_another_round(guard, target, cold_prefix, number))
            if interleave:
                between.append(_another_conversation(guard, target, cold_prefix))

        result = run_verify(profile, timeout=timeout, cancel=cancel, claude_replay=False,
                            between=interleaved if interleave or rounds > 2 else None)
        reprocessed = None
        if result.prompt_tokens is not None and result.cached_tokens is not None:
            reprocessed = result.prompt_tokens - result.cached_tokens
        requests = [
            {"request": "cold", "cached_tokens": result.cold_cached_tokens,
             "prompt_tokens": result.cold_prompt_tokens, "prompt_ms": result.ttft_cold_ms},
            *between,
            {"request": "warm", "cached_tokens": result.cached_tokens, "prompt_tokens": result.prompt_tokens,
             "prompt_ms": result.ttft_warm_ms, **({"tiers": _tiers_of(result)} if rounds > 2 else {})},
        ]
        return Measurement(
            verdict=result.verdict, message=result.message, cached_tokens=result.cached_tokens,
            prompt_tokens=result.prompt_tokens, reprocessed_tokens=reprocessed,
            reuse_ratio=result.reuse_ratio,
            ttft_cold_ms=result.ttft_cold_ms, ttft_warm_ms=result.ttft_warm_ms,
            failed=result.verdict == "ERROR", requests=requests,
            tiers=_tiers_of(result),
        )

    return run


def _tiers_of(result: Any) -> dict[str, Any] | None:
    """Verify's account of the warm request by cache tier, when the server has tiers to account."""
    tiers = getattr(result, "tiers", None)
    if tiers is not None and not isinstance(tiers, dict) and hasattr(tiers, "to_json"):
        tiers = tiers.to_json()
    return tiers if isinstance(tiers, dict) else None


def client(name: str, binary: Path) -> Measure:
    """The real client's scripted session; the numbers over the continued turns of conversation 1."""
    from kvswitch.verify.client_report import build_report  # noqa: PLC0415
    from kvswitch.verify.client_run import run_session  # noqa: PLC0415

    def run(profile: Profile, timeout: float, cancel: threading.Event | None) -> Measurement:
        session = run_session(profile, binary, timeout=timeout, cancel=cancel, client=name)
        report = build_report(profile, session, None)
        turns = {(t.conversation, t.turn): t for t in report.turns}
        inside = [t for t in report.turns if t.conversation == 1 and t.turn > 1 and t.prompt_tokens]
        prompt = sum(t.prompt_tokens or 0 for t in inside)
        cached = sum(t.cached_tokens or 0 for t in inside)
        cold, warm = turns.get((1, 1)), turns.get((1, 2))
        failed = not any(r.status == 200 for r in session.requests)
        message = f"{session.label} got no answer from the server" if failed else ""
        return Measurement(
            verdict=report.verdict.upper(), message=message, cached_tokens=cached if inside else None,
            prompt_tokens=prompt if inside else None,
            reprocessed_tokens=sum(t.reprocessed_tokens or 0 for t in inside) if inside else None,
            reuse_ratio=cached / prompt if prompt else None,
            ttft_cold_ms=cold.prompt_ms if cold else None, ttft_warm_ms=warm.prompt_ms if warm else None,
            client=session.client, client_version=session.version, failed=failed,
            requests=report.to_json()["requests"],
        )

    return run
