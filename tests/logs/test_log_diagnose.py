"""Patterns across requests: the unstable-prefix fingerprint and its fix, and what must not trigger it."""

from __future__ import annotations

from kvswitch.logs.diagnose import diagnose
from kvswitch.logs.model import CacheEvent, make_event


def _event(cached: int, new: int, line: int, reason: str | None = None) -> CacheEvent:
    return make_event(server="llama.cpp", slot=0, task=line, cached=cached, new=new, first_line=line,
                      last_line=line, reason=reason)


def test_constant_small_prefix_points_at_the_billing_header() -> None:
    events = [_event(12000, 40, 1), _event(48, 13715, 2), _event(48, 13802, 3), _event(47, 13950, 4)]
    diagnosis = diagnose(events)
    assert diagnosis is not None
    assert diagnosis.code == "unstable-prefix"
    assert diagnosis.fix_env == {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}
    assert "~48 tokens" in diagnosis.message
    assert "CLAUDE_CODE_ATTRIBUTION_HEADER=0" in diagnosis.message
    assert diagnosis.requests == 3


def test_healthy_hits_after_misses_say_nothing() -> None:
    events = [_event(48, 13715, 1), _event(48, 13802, 2), _event(13850, 40, 3)]
    assert diagnose(events) is None


def test_varying_prefix_is_not_the_fingerprint() -> None:
    assert diagnose([_event(21, 1515, 1), _event(400, 1200, 2)]) is None
    assert diagnose([_event(21, 1515, 1), _event(90, 1500, 2)]) is None


def test_one_miss_proves_nothing() -> None:
    assert diagnose([_event(48, 13715, 1)]) is None
    assert diagnose([]) is None


def test_tiny_prompts_are_ignored() -> None:
    assert diagnose([_event(5, 100, 1), _event(5, 110, 2), _event(5, 120, 3)]) is None


def test_nothing_reused_with_caching_off() -> None:
    off = "the slot already held this prompt but processed it again: prompt caching was off"
    events = [_event(0, 1559, 1, off), _event(0, 1559, 2, off), _event(0, 1559, 3, off)]
    diagnosis = diagnose(events)
    assert diagnosis is not None
    assert diagnosis.code == "nothing-reused"
    assert "cache_prompt" in diagnosis.message
    assert diagnosis.fix_env is None


def test_swa_forced_reprocessing() -> None:
    reason = "full re-processing forced: SWA or hybrid/recurrent model without a usable checkpoint"
    events = [_event(0, 5000, 1, reason), _event(0, 5100, 2, reason)]
    diagnosis = diagnose(events)
    assert diagnosis is not None
    assert diagnosis.code == "swa-reprocess"
    assert "--swa-full" in diagnosis.message


def test_swa_advice_comes_from_the_server_that_logged_it() -> None:
    """llama-server has the switches; a server that names none gets the general sentence (LM Studio and
    Ollama embed the same engine but do not take its command-line flags)."""
    reason = "full re-processing forced: SWA or hybrid/recurrent model without a usable checkpoint"
    for server, names_flags in (("llama.cpp", True), ("lm-studio", False), ("ollama", False),
                                ("something else", False)):
        events = [make_event(server=server, slot=0, task=n, cached=0, new=5000, first_line=n, last_line=n,
                             reason=reason) for n in (1, 2)]
        diagnosis = diagnose(events)
        assert diagnosis is not None, server
        assert diagnosis.code == "swa-reprocess", server
        assert ("--swa-full" in diagnosis.message) is names_flags, server
        assert "without SWA" in diagnosis.message, server
