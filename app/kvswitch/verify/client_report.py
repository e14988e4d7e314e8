"""Verdicts for a real-client session: per turn, what was reused, what it cost, and why it was lost.

The first request of a session is *cold* (nothing can be reused yet), not a miss. A turn inside a
conversation should reuse almost all of the previous turn's prompt (HIT at 90 % and more). A new
conversation can reuse only what it shares with the last one (the system prompt and tools, when nothing
before them changes); when the server can render prompts, that share is computed in its tokens and the
new conversation is judged against it. Each turn that lost reuse carries the diagnosis of its request
against the one before, in tokens when the server can render, in bytes otherwise.
"""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass, field
from typing import Any

from kvswitch.core.errors import KvSwitchError
from kvswitch.core.models import Profile
from kvswitch.verify.client_run import ClientRequest, ClientSession
from kvswitch.verify.diagnose import diagnose_requests
from kvswitch.verify.result import HIT_RATIO, MISS_RATIO
from kvswitch.verify.system_split import split_system_note
from kvswitch.verify.tokendiag import ServerRenderer, diagnose_tokens


@dataclass(frozen=True)
class TurnVerdict:
    conversation: int
    turn: int
    verdict: str  # cold | hit | partial | miss | shared_prefix | unknown
    prompt_tokens: int | None
    cached_tokens: int | None
    reusable_tokens: int | None
    reprocessed_tokens: int | None
    cost_ms: float | None
    diagnosis: dict[str, Any] | None = None
    #: time to the first byte of the turn's answer, at the recorder
    prompt_ms: float | None = None

    @property
    def lost(self) -> bool:
        return self.verdict in ("partial", "miss")


@dataclass(frozen=True)
class ClientReport:
    profile: str
    session: ClientSession
    turns: list[TurnVerdict]
    env_fingerprint: str
    fixes: dict[str, str] = field(default_factory=dict)
    #: what the requests themselves show that can cost reuse (a split system prompt)
    notes: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        inside = [t for t in self.turns if t.conversation == 1 and t.turn > 1]
        if not inside or any(t.verdict == "unknown" for t in inside):
            return "unknown"
        if all(t.verdict == "hit" for t in inside) and not any(t.lost for t in self.turns):
            return "hit"
        return "miss" if any(t.verdict == "miss" for t in self.turns) else "partial"

    @property
    def exit_code(self) -> int:
        return {"hit": 0, "unknown": 3}.get(self.verdict, 1)

    @property
    def version_note(self) -> str | None:
        """When the client is not the version the cache-safe settings were measured on: say so."""
        return version_note(self.session.client, self.session.version, self.profile)

    def to_json(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "client": self.session.client,
            "client_version": self.session.version,
            "verdict": self.verdict,
            "env_fingerprint": self.env_fingerprint,
            "env_names": self.session.env_names,
            "requests": [_request_json(r) for r in self.session.requests],
            "turns": [t.__dict__ for t in self.turns],
            "fixes": self.fixes,
            "version_note": self.version_note,
            "notes": self.notes,
            "client_warnings": self.session.client_warnings,
        }

    def describe(self) -> str:
        lines = [
            f"{self.session.label} {self.session.version} through profile {self.profile!r}: "
            f"{self.verdict.upper()}"
        ]
        for t in self.turns:
            numbers = f"{t.cached_tokens} of {t.prompt_tokens} prompt tokens reused"
            extra = f", {t.reprocessed_tokens} re-processed" if t.reprocessed_tokens else ""
            cost = f" (~{t.cost_ms / 1000:.1f} s)" if t.cost_ms else ""
            lines.append(
                f"  conversation {t.conversation} turn {t.turn}: {t.verdict}, {numbers}{extra}{cost}"
            )
            if t.diagnosis and (t.lost or t.verdict == "shared_prefix") and t.diagnosis.get("cause_text"):
                lines.append(f"    why: {t.diagnosis['cause_text']}")
        inside = [
            t for t in self.turns if t.conversation == 1 and t.turn > 1 and t.reprocessed_tokens is not None
        ]
        if inside:
            worst = max(inside, key=lambda t: t.reprocessed_tokens or 0)
            lines.append(
                f"Per turn inside a conversation: up to {worst.reprocessed_tokens} tokens re-processed"
                + (f", about {worst.cost_ms / 1000:.1f} s" if worst.cost_ms else "")
                + "."
            )
        new = next((t for t in self.turns if t.conversation == 2), None)
        if new is not None and new.prompt_tokens:
            lines.append(
                f"Per new conversation: {new.cached_tokens} of {new.prompt_tokens} tokens reused"
                + (f" ({new.reusable_tokens} shared with the last one)" if new.reusable_tokens else "")
                + (f", about {new.cost_ms / 1000:.1f} s of prompt processing" if new.cost_ms else "")
                + "."
            )
        lines.extend(f"Note: {note}" for note in self.notes)
        lines.extend(f"{self.session.label} warned: {warning}" for warning in self.session.client_warnings)
        if self.version_note:
            lines.append(self.version_note)
        if self.fixes:
            settings = " ".join(f"{k}={v}" for k, v in self.fixes.items())
            lines.append(
                f"Fix: add {settings} to the profile's env "
                f"(kvswitch profile edit {self.profile} "
                + " ".join(f"--env {k}={v}" for k, v in self.fixes.items())
                + ")"
            )
        return "\n".join(lines)


def version_note(client: str, version: str, profile: str | None = None) -> str | None:
    """``None`` when the installed client is the one the settings table was measured on (only Claude
    Code's settings are measured); else the sentence that says so and how to measure again."""
    from kvswitch.core.client_settings import claude_settings  # noqa: PLC0415 - read on use

    if client != "claude":
        return None
    measured = claude_settings().client_version
    if version == measured:
        return None
    name = profile or "PROFILE"
    return (
        f"The cache-safe settings were measured on Claude Code {measured}; this is {version}, so they may "
        f"no longer hold: measure again with kvswitch verify {name} --client claude --ablate"
    )


def _request_json(r: ClientRequest) -> dict[str, Any]:
    return {
        "conversation": r.conversation,
        "turn": r.turn,
        "number": r.number,
        "prompt_tokens": r.prompt_tokens,
        "cached_tokens": r.cached_tokens,
        "prompt_ms": r.prompt_ms,
        "status": r.status,
    }


def env_fingerprint(profile: Profile) -> str:
    """A stable digest of the env the profile applies, keys left out (a digest of a key is still a key)."""
    from kvswitch.core.envmap import claude_env  # noqa: PLC0415

    secrets = {profile.key} if profile.key else set()
    items = sorted((k, "" if v in secrets else v) for k, v in claude_env(profile).items())
    return hashlib.sha256(repr(items).encode()).hexdigest()[:16]


def _main_requests(session: ClientSession) -> dict[tuple[int, int], ClientRequest]:
    """Per turn, the request that carries the turn's new user message.

    A turn can send more: a retry when an answer came back empty (it follows the first and reuses
    what the first left in the cache) and small side requests, which may run alongside and finish
    first. So: the earliest of the turn's requests whose prompt is at least half its largest.
    """
    turns: dict[tuple[int, int], list[ClientRequest]] = {}
    for request in session.requests:
        turns.setdefault((request.conversation, request.turn), []).append(request)
    main: dict[tuple[int, int], ClientRequest] = {}
    for key, requests in turns.items():
        largest = max(r.prompt_tokens or 0 for r in requests)
        big = [r for r in requests if (r.prompt_tokens or 0) * 2 >= largest]
        main[key] = min(big, key=lambda r: r.number)
    return main


def _diagnosis(renderer: ServerRenderer | None, a: object, b: object) -> tuple[dict[str, Any], int | None]:
    if renderer is not None and isinstance(a, dict) and isinstance(b, dict):
        with contextlib.suppress(KvSwitchError):
            tokens = diagnose_tokens(renderer, a, b)
            return tokens.to_json(), tokens.shared_tokens
    if isinstance(a, dict) and isinstance(b, dict):
        return {"units": "bytes", **diagnose_requests(a, b).to_json()}, None
    return {}, None


def _ms_per_token(cold: ClientRequest | None) -> float | None:
    if cold is None or not cold.prompt_ms or not cold.prompt_tokens:
        return None
    processed = cold.prompt_tokens - (cold.cached_tokens or 0)
    return cold.prompt_ms / processed if processed > 0 else None


def build_report(profile: Profile, session: ClientSession, renderer: ServerRenderer | None) -> ClientReport:
    main = _main_requests(session)
    order = sorted(main)
    per_token = _ms_per_token(main.get(order[0])) if order else None
    turns: list[TurnVerdict] = []
    fixes: dict[str, str] = {}
    previous: ClientRequest | None = None
    for key in order:
        request = main[key]
        prompt, cached = request.prompt_tokens, request.cached_tokens
        reprocessed = prompt - cached if prompt is not None and cached is not None else None
        cost = reprocessed * per_token if reprocessed is not None and per_token else None
        if previous is None:
            turns.append(
                TurnVerdict(*key, "cold", prompt, cached, 0, reprocessed, cost, None, request.prompt_ms)
            )
            previous = request
            continue
        diagnosis, shared = _diagnosis(renderer, previous.body, request.body)
        reusable = shared if shared is not None else previous.prompt_tokens
        verdict = _verdict(key[1] == 1, prompt, cached, shared, diagnosis, reusable)
        turns.append(
            TurnVerdict(
                *key, verdict, prompt, cached, shared, reprocessed, cost, diagnosis or None, request.prompt_ms
            )
        )
        fix = diagnosis.get("fix_env") if diagnosis else None
        if isinstance(fix, dict):
            fixes.update({k: v for k, v in fix.items() if profile.env.get(k) != v})
        previous = request
    notes = []
    for key in order:
        note = split_system_note(main[key].body)
        if note:
            notes.append(f"conversation {key[0]} turn {key[1]}: {note}")
    return ClientReport(profile.name, session, turns, env_fingerprint(profile), fixes, notes)


def _verdict(
    new_conversation: bool,
    prompt: int | None,
    cached: int | None,
    shared: int | None,
    diagnosis: dict[str, Any],
    reusable: int | None = None,
) -> str:
    """``reusable``: what the turn shares with the one before (the server's common tokens, else that
    turn's prompt). A continued turn that reused all of it is a hit whatever its new part's size: a long
    answer grows the next prompt, and its new tokens are new by nature (a tiny model's 5,000-token
    answer once made a turn that reused every shared token "partial" by the ratio alone)."""
    if prompt is None or cached is None or prompt <= 0:
        return "unknown"
    ratio = cached / prompt
    if ratio >= HIT_RATIO:
        return "hit"
    if not new_conversation and reusable is not None and reusable > 0 and cached >= reusable - 1:
        return "hit"
    by_ratio = "miss" if ratio < MISS_RATIO else "partial"
    if not new_conversation or diagnosis.get("fix_env"):
        return by_ratio  # a setting would keep more: a loss, whatever two conversations share
    if shared is not None:
        return "shared_prefix" if cached >= shared - 1 else by_ratio
    # without the server's tokens: the client's own layout (the first user message before its
    # environment block) is what a new conversation cannot share
    return "shared_prefix" if diagnosis.get("cause") == "user_before_system" else by_ratio
