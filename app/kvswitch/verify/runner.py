"""``run_verify``: prove with the server's own numbers whether it reuses a prompt prefix.

Two streamed requests share a long prefix that starts with a per-run nonce: the cold one fills the
cache, the warm one (same prefix, different short question) should find it. Every cache number the
server offers is read for the warm request; the most trusted decides the verdict and all are listed
as evidence. Time to first token is measured too, but only as a hint: on small models it is noise.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import fields, is_dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from kvswitch import servers
from kvswitch.core.addresses import is_loopback_url
from kvswitch.core.errors import UsageError
from kvswitch.core.http import check_timeout
from kvswitch.core.models import Profile
from kvswitch.core.text import printable
from kvswitch.servers.base import Advice
from kvswitch.verify import api_detect
from kvswitch.verify.api_detect import ServerInfo, api_root, candidate_apis
from kvswitch.verify.evidence import Reading, best_reading, context_limit, order_readings
from kvswitch.verify.instances import given_instances
from kvswitch.verify.logtap import LogTap
from kvswitch.verify.probe import Guard, ProbeError
from kvswitch.verify.prompts import PREFIX_LINES, SUFFIX_COLD, SUFFIX_WARM, make_prefix, new_nonce
from kvswitch.verify.result import ERROR, HIT, MISS, PARTIAL, UNKNOWN, VerifyResult, verdict_for
from kvswitch.verify.target import Measured, Target, measure
from kvswitch.verify.tier_truth import chunk_boundary

Progress = Callable[[str, float], None]
_MISSING_ENDPOINT = (404, 405, 501)


def run_verify(
    profile: Profile,
    *,
    timeout: float = 30.0,
    cancel: threading.Event | None = None,
    progress: Progress | None = None,
    log_events: Callable[[], Sequence[Any]] | None = None,
    api: str | None = None,
    claude_replay: bool | None = None,
    between: Callable[[Guard, Target, str], None] | None = None,
    explain: bool = False,
    instances: Sequence[str] = (),
) -> VerifyResult:
    """Verify the profile's endpoint; blocking, bounded by ``timeout`` seconds in total, cancellable.

    Args:
        profile: the backend (base URL, key, model, kind, targets, log) to check.
        timeout: the whole run's budget; a hung server ends as ERROR within it.
        cancel: set it from another thread to stop; open connections are shut at once.
        progress: called as ``progress(step_text, fraction)`` from this thread.
        log_events: returns the log engine's cache events seen so far (the GUI's live panel); without
            it the profile's log file, if any, is read directly.
        api: force one API (one of ``api_detect.APIS``) instead of detecting it.
        claude_replay: also replay Claude Code-shaped requests with and without the billing header;
            ``None`` does it for Claude profiles on a local (or loopback) server, never on a vendor's
            own billed API.
        between: called as ``between(guard, target, cold_prefix)`` after the cold request and before
            the warm one (``kvswitch sweep --interleave`` sends another conversation there, as a
            subagent or a second session would, to show whether the server keeps the first).
        explain: with a second cache tier that reuses whole chunks, also say where the warm prompt first
            differs from the cold one (the server's tokens) and what the chunk boundary cost.
        instances: the base URLs of the instances behind a router that does not list them itself
            (``verify.instances``); a router that does is asked, and this list replaces its answer.
    """
    try:
        timeout = check_timeout(timeout)
    except ValueError as exc:
        raise UsageError(f"verify: {exc}") from None
    report = progress or (lambda _text, _fraction: None)
    secrets = (profile.key, urlsplit(profile.base_url).password or "")
    with Guard(timeout, cancel, secrets=secrets) as guard:
        try:
            result = _run(guard, profile, report, log_events, api, claude_replay, between, explain,
                          instances)
        except ProbeError as exc:
            result = VerifyResult(
                ERROR,
                api=api,
                message=guard.redact(exc.message),
                base_url=display_url(profile.base_url),
                diagnosis=_error_hint(exc, profile),
            )
        result = replace(result, requests_sent=guard.requests_sent)
    return shown(result)


def shown(result: Any) -> Any:
    """The result with every text a server could have put in it (error words, model names, notes)
    made printable, so neither the CLI (human or JSON) nor the window ever emits a server's escapes."""
    changes: dict[str, Any] = {}
    for item in fields(result):
        value = getattr(result, item.name)
        if isinstance(value, str):
            changes[item.name] = printable(value, multiline=item.name in ("message", "diagnosis"))
        elif isinstance(value, list):
            changes[item.name] = [printable(v, multiline=False) if isinstance(v, str) else v for v in value]
        elif isinstance(value, dict):
            changes[item.name] = _printable_dict(value)
        elif is_dataclass(value) and not isinstance(value, type):
            changes[item.name] = shown(value)
    return replace(result, **changes)


def _printable_dict(value: dict[Any, Any]) -> dict[str, Any]:
    """Keys and texts printable; numbers stay numbers (the tier split's counts), nested dicts too."""
    return {printable(str(k), multiline=False): _printable_dict(v) if isinstance(v, dict)
            else v if v is None or isinstance(v, int | float) else printable(str(v), multiline=False)
            for k, v in value.items()}


def _run(
    guard: Guard,
    profile: Profile,
    report: Progress,
    log_events: Callable[[], Sequence[Any]] | None,
    forced_api: str | None,
    claude_replay: bool | None,
    between: Callable[[Guard, Target, str], None] | None = None,
    explain: bool = False,
    instances: Sequence[str] = (),
) -> VerifyResult:
    report("Detecting the server", 0.02)
    server = api_detect.detect_server(guard, profile)
    server.instances = given_instances(server.server, instances) or server.instances
    model = api_detect.pick_model(profile, server)
    tap = LogTap(profile, log_events)
    tap.start()
    try:
        nonce = new_nonce()
        report("Sending the cold request", 0.1)
        target, cold = _first_request(guard, profile, server, model, nonce, forced_api)
        if between is not None:
            between(guard, target, cold.prefix)
        report("Sending the warm request (same prefix)", 0.45)
        warm = measure(guard, target, target.body(cold.prefix, SUFFIX_WARM))
        report("Reading the cache numbers", 0.6)
        warm_prompt = next((r.prompt for r in warm.readings if r.prompt), None)
        log_reading = tap.reading(tap.events(wait=min(1.0, guard.remaining())), warm_prompt)
    finally:
        tap.close()
    if log_reading is not None:
        warm.readings.append(log_reading)
    result = _judge(target, cold, warm)
    if result.tier_problems and result.verdict in (PARTIAL, MISS, UNKNOWN):
        result = _replace(result, diagnosis=" ".join(result.tier_problems))
    if explain and warm.tiers:
        report("Finding where the prompts differ", 0.62)
        why = chunk_boundary(guard, warm.tier, profile.base_url, target.headers,
                             target.body(cold.prefix, SUFFIX_COLD), target.body(cold.prefix, SUFFIX_WARM),
                             warm.tiers)
        result = _replace(result, chunk_boundary=why)
    if _wants_replay(claude_replay, target) and result.verdict != ERROR:
        report("Replaying Claude Code-shaped requests", 0.65)
        from kvswitch.verify.claude_replay import replay  # noqa: PLC0415 - loads the request template lazily

        outcome = replay(guard, Target(profile, target.server, api_detect.MESSAGES, target.model), nonce)
        fix = dict(result.fix_env or {})
        diagnosis = result.diagnosis
        if outcome.fix_env and profile.env.get("CLAUDE_CODE_ATTRIBUTION_HEADER") != "0":
            fix.update(outcome.fix_env)
            diagnosis = diagnosis or (
                "this profile lets Claude Code send its billing header, which changes with every "
                "conversation and breaks the prefix on this server: set CLAUDE_CODE_ATTRIBUTION_HEADER=0."
            )
        result = _replace(result, claude_replay=outcome, fix_env=fix or None, diagnosis=diagnosis)
    report("Done", 1.0)
    return result


def _wants_replay(flag: bool | None, target: Target) -> bool:
    """By default only for Claude profiles on a local server: the replay sends four ~14k-token
    prompts, which a paid gateway would bill."""
    if flag is not None:
        return flag
    profile = target.profile
    uses_claude = any(t.startswith("claude") for t in profile.targets)
    local = profile.is_local or is_loopback_url(profile.base_url)
    return (
        uses_claude
        and local
        and not servers.get(profile.kind).vendor_api
        and not _is_vendor_api(target.server.server)
    )


def _is_vendor_api(name: str) -> bool:
    known = servers.find(name)
    return known is not None and known.vendor_api


def display_url(url: str) -> str:
    """The URL without any ``user:password@`` part, for messages and results."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    return parts._replace(netloc=netloc).geturl()


def _replace(result: VerifyResult, **changes: Any) -> VerifyResult:
    return replace(result, **changes)


def _first_request(
    guard: Guard, profile: Profile, server: ServerInfo, model: str, nonce: str, forced_api: str | None
) -> tuple[Target, Measured]:
    """The cold request, on the first API the server really has; shrinks the prefix once if the
    server's context is too small for it (it says so in a 400 with ``n_ctx``)."""
    errors: list[str] = []
    prefix = make_prefix(nonce)
    for api in candidate_apis(profile, server, forced_api):
        target = Target(profile, server, api, model)
        for attempt in range(2):
            try:
                cold = measure(guard, target, target.body(prefix, SUFFIX_COLD))
                cold.prefix = prefix
                return target, cold
            except ProbeError as exc:
                limit = context_limit(exc.body) if exc.status == 400 else None
                if limit is not None and attempt == 0:
                    n_prompt, n_ctx = limit
                    lines = max(20, int(PREFIX_LINES * 0.6 * n_ctx / max(n_prompt, 1)))
                    prefix = make_prefix(nonce, lines)
                    continue
                if _missing_endpoint(exc) and forced_api is None:
                    errors.append(f"{api}: HTTP {exc.status}")
                    break
                raise
    raise ProbeError(
        "http",
        f"{api_root(profile.base_url)}: none of the known APIs answered "
        f"({'; '.join(errors)}) — check the base URL",
    )


def _missing_endpoint(exc: ProbeError) -> bool:
    """A 404/405 means "no such route", unless the server is complaining about the model name."""
    return exc.status in _MISSING_ENDPOINT and b"model" not in exc.body.lower()


def _judge(target: Target, cold: Measured, warm: Measured) -> VerifyResult:
    evidence: list[str] = []
    best = best_reading(warm.readings)
    for reading in order_readings(warm.readings):
        tag = " (decided)" if reading is best else ""
        evidence.append(f"warm request: {reading.describe()}{tag}")
    if warm.served_by:
        evidence.append(f"warm request: {warm.served_by}")
    evidence += [f"{name} request: {m.instance_text}" for name, m in (("warm", warm), ("cold", cold))
                 if m.instance_text]
    if warm.tiers_text:
        evidence.append(f"warm request: {warm.tiers_text}")
    cold_best = best_reading(cold.readings)
    for reading in order_readings(cold.readings):
        evidence.append(f"cold request: {reading.describe()}")
    if best is None:
        inferred = servers.infer_reuse(cold.readings, warm.readings)
        if inferred is not None:
            best, why = inferred
            evidence.insert(0, f"warm request: {best.describe()} (decided; {why})")
    ttft_cold, ttft_warm = cold.result.ttft_ms, warm.result.ttft_ms
    speedup = ttft_cold / ttft_warm if ttft_cold and ttft_warm else None
    if ttft_cold is not None and ttft_warm is not None:
        evidence.append(
            f"time to first token: cold {ttft_cold:.0f} ms, warm {ttft_warm:.0f} ms"
            + (f" ({speedup:.1f}x)" if speedup else "")
        )
    common: dict[str, Any] = {
        "api": target.api,
        "ttft_cold_ms": ttft_cold,
        "ttft_warm_ms": ttft_warm,
        "speedup": speedup,
        "evidence": evidence,
        "server": target.server.server,
        "base_url": display_url(target.profile.base_url),
        "model": target.model,
        "cold_cached_tokens": cold_best.cached if cold_best else None,
        "cold_prompt_tokens": cold_best.prompt if cold_best else None,
        "served_by": warm.served_by,
        "instance": warm.instance,
        "cold_instance": cold.instance,
        "tiers": warm.tiers,
        "tiers_text": warm.tiers_text,
        "tier_problems": list(dict.fromkeys(cold.tier_problems + warm.tier_problems)),
    }
    if best is None or best.cached is None:
        hint = ""
        if speedup is not None:
            hint = (
                f" The warm request's first token came {speedup:.1f}x faster, which suggests reuse, "
                "but timing alone proves nothing."
                if speedup >= 1.5
                else " The warm request was not faster either."
            )
        return VerifyResult(
            UNKNOWN,
            message="the server answered but reports no prompt-cache numbers." + hint,
            diagnosis=_unknown_hint(target),
            **common,
        )
    prompt = best.prompt or 0
    cached = best.cached
    verdict = verdict_for(cached, prompt) if prompt else (HIT if cached > 0 else MISS)
    ratio = cached / prompt if prompt else None
    disagree = _disagreement(warm.readings, best)
    if disagree:
        evidence.append(disagree)
    share = f" ({ratio:.1%})" if ratio is not None else ""
    if verdict == HIT:
        message = f"the server reused {cached} of {prompt} prompt tokens{share}: the prefix cache works."
        diagnosis = None
    elif verdict == PARTIAL:
        message = f"the server reused only {cached} of {prompt} prompt tokens{share}."
        diagnosis = _partial_hint(target)
    else:
        message = (
            f"the server re-processed the prompt ({cached} of {prompt} tokens reused{share}) "
            "although the prefix was identical."
        )
        diagnosis = _miss_hint(target)
    return VerifyResult(
        verdict,
        cached_tokens=cached,
        prompt_tokens=prompt or None,
        reuse_ratio=ratio,
        message=message,
        diagnosis=diagnosis,
        decided_by=best.source,
        **common,
    )


def _disagreement(readings: list[Reading], best: Reading) -> str | None:
    others = [r for r in readings if r is not best and r.cached is not None and r.prompt]
    best_verdict = verdict_for(best.cached or 0, best.prompt or 0) if best.prompt else None
    for other in others:
        if best_verdict and verdict_for(other.cached or 0, other.prompt or 0) != best_verdict:
            return (
                f"note: {other.source} disagrees ({other.cached} of {other.prompt}); another client may "
                "have used the server at the same time, or the log belongs to another server."
            )
    return None


def _advice(target: Target) -> Advice:
    """The detected server's own advice (an unknown server gets the generic texts)."""
    known = servers.find(target.server.server)
    return known.advice if known is not None else Advice()


def _miss_hint(target: Target) -> str:
    return _advice(target).miss or (
        "the server did not reuse the identical prefix; check that its prompt/prefix caching is enabled.")


def _partial_hint(target: Target) -> str:
    return _advice(target).partial or (
        "part of the identical prefix was re-processed: the cache may have been trimmed (context shift, "
        "--cache-reuse chunks) or evicted by another request in between."
    )


def _unknown_hint(target: Target) -> str:
    return _advice(target).unknown or (
        "attach the server's log to the profile so the log engine can count reused tokens.")


def _error_hint(exc: ProbeError, profile: Profile) -> str | None:
    if exc.kind == "refused":
        return "nothing listens at that address: start the server or fix the port in the profile."
    if exc.status in (401, 403):
        return "the server rejected the key: check the profile's API key."
    if exc.status == 400 and b"context" in exc.body:
        return "the server's context is too small for the probe; start it with a larger -c / --ctx-size."
    if exc.status == 404 and b"model" in exc.body.lower():
        return "the server does not know that model name: fix the profile's model."
    if exc.kind == "timeout":
        return "the server accepted the connection but did not answer in time (busy, loading, or hung)."
    if exc.kind == "too_large":
        return "the server sent far more than any API answer; is this URL really an inference server?"
    return None
