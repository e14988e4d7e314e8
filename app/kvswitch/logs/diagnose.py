"""Patterns across requests, said in plain words with the fix when there is one.

One request that misses the cache proves little (a new conversation always starts cold). The useful
signal is the trend of the latest requests: each re-processes nearly its whole prompt while only the
same few leading tokens come from the cache. That is the fingerprint of a prompt whose very start
changes every time, such as Claude Code's per-conversation ``x-anthropic-billing-header`` system block.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kvswitch.logs.model import CacheEvent

#: prompts shorter than this are too small to say anything about caching
MIN_PROMPT = 256
#: a request "re-processes nearly the whole prompt" when at least this share was new
REPROCESS_SHARE = 0.8
#: "a small number of leading tokens": a chat template's header and a few words, not a conversation
SMALL_PREFIX = 256
ATTRIBUTION_FIX = {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}


@dataclass(frozen=True, slots=True)
class Diagnosis:
    code: str  # "unstable-prefix", "nothing-reused", "swa-reprocess"
    message: str
    fix_env: dict[str, str] | None = None
    requests: int = 0  # how many of the latest requests show the pattern


def diagnose(events: Sequence[CacheEvent]) -> Diagnosis | None:
    """What the latest requests have in common, or ``None`` when they look healthy or prove nothing."""
    if not events:
        return None
    server = events[-1].server
    run = _trailing_reprocessing_run([e for e in events if e.server == server])
    if not run:
        return None
    return _unstable_prefix(run) or _swa(run) or _nothing_reused(run)


def _trailing_reprocessing_run(events: Sequence[CacheEvent]) -> list[CacheEvent]:
    run: list[CacheEvent] = []
    for event in reversed(events):
        if event.prompt_tokens < MIN_PROMPT or event.new_tokens < REPROCESS_SHARE * event.prompt_tokens:
            break
        run.append(event)
    run.reverse()
    return run


def _unstable_prefix(run: list[CacheEvent]) -> Diagnosis | None:
    cached = [event.cached_tokens for event in run]
    if len(run) < 2 or min(cached) <= 0:
        return None
    if max(cached) > SMALL_PREFIX:
        return None
    if max(cached) - min(cached) > max(2, round(0.1 * max(cached))):
        return None
    reused = round(sum(cached) / len(cached))
    prompt = round(sum(event.prompt_tokens for event in run) / len(run))
    message = (
        f"The last {len(run)} requests each re-processed almost the whole prompt (about {prompt} tokens) "
        f"and reused only the first ~{reused} tokens from the cache, then the prompt differs. Something at "
        "the very start of the prompt changes every conversation, for example Claude Code's billing header "
        "(x-anthropic-billing-header). Set CLAUDE_CODE_ATTRIBUTION_HEADER=0 in the profile's environment."
    )
    return Diagnosis("unstable-prefix", message, dict(ATTRIBUTION_FIX), len(run))


def _swa(run: list[CacheEvent]) -> Diagnosis | None:
    forced = [event for event in run if event.reason and "full re-processing forced" in event.reason]
    if len(forced) < 2:
        return None
    message = (
        f"{len(forced)} of the last requests were fully re-processed because the model uses sliding-window "
        "attention or hybrid/recurrent memory and the cache could not be rolled back to where the prompt "
        f"changed. {_forced_reprocess_advice(forced[-1].server)}"
    )
    return Diagnosis("swa-reprocess", message, None, len(forced))


def _forced_reprocess_advice(server_name: str) -> str:
    """What the server that printed the events offers against it, as its module in ``kvswitch.servers``
    says (the switches to pass are the server's own knowledge); a general sentence when it names none.

    The registry is loaded here, not at start-up: a hint-less ``kvswitch log scan`` never pays for it
    (or for pydantic) unless this pattern is found, once, at the end of the scan.
    """
    from kvswitch import servers  # noqa: PLC0415 - see above; servers never imports the log engine

    server = servers.find(server_name)
    advice = server.advice.forced_reprocess if server is not None else None
    return advice or (
        "Keep the full sliding-window cache or more context checkpoints if the server has a "
        "setting for it, or use a model without SWA."
    )


def _nothing_reused(run: list[CacheEvent]) -> Diagnosis | None:
    if len(run) < 3 or any(event.cached_tokens > 0 for event in run):
        return None
    caching_off = any(event.reason and "caching was off" in event.reason for event in run)
    if caching_off:
        message = (
            f"The last {len(run)} requests reused nothing, although the server already held the same prompt: "
            'the client disables prompt caching ("cache_prompt": false in the request) or the server runs '
            "with --no-cache-prompt."
        )
    else:
        message = (
            f"The last {len(run)} requests reused nothing from the cache: the prompt changes at its "
            'very first tokens, or prompt caching is disabled ("cache_prompt": false, --no-cache-prompt), '
            "or each request lands on a slot that never held it (try -np 1 or pin id_slot)."
        )
    return Diagnosis("nothing-reused", message, None, len(run))
