"""Verify against a real llama-server: exact cached-token counts, MISS, the billing-header replay,
and the recorder passing real streams through byte for byte."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from kvswitch.core.models import LogSource, Profile
from kvswitch.verify import run_verify
from kvswitch.verify.api_detect import OPENAI_CHAT, ServerInfo
from kvswitch.verify.evidence import best_reading
from kvswitch.verify.prompts import SUFFIX_COLD, make_prefix
from kvswitch.verify.recorder import Capture, Recorder, routed_profile
from kvswitch.verify.result import verdict_for
from kvswitch.verify.target import Target, measure
from support.llama import RunningServer

pytestmark = pytest.mark.real_server


def _tokens(server: RunningServer, body: dict[str, Any]) -> list[int]:
    """The prompt tokens llama-server builds for a chat body (its own template and tokenizer)."""
    prompt = httpx.post(f"{server.url}/apply-template", json={"messages": body["messages"]}, timeout=30)
    tokens = httpx.post(f"{server.url}/tokenize", json={"content": prompt.json()["prompt"]}, timeout=30)
    return list(tokens.json()["tokens"])


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def test_hit_with_the_exact_counts_the_server_reports(real_server: RunningServer, tmp_path: Path) -> None:
    profile = Profile(
        name="local",
        kind="llama.cpp",
        base_url=real_server.url,
        targets=["codex"],
        log=LogSource(kind="file", path=str(real_server.log_file)),
    )
    captures: list[Capture] = []
    with Recorder(real_server.url, tmp_path / "caps", on_capture=captures.append) as recorder:
        result = run_verify(routed_profile(profile, recorder.url), timeout=120, claude_replay=False)
    assert result.verdict == "HIT", result.describe()
    assert result.api == "openai-chat"
    assert result.server == "llama.cpp"
    cold, warm = [c.body for c in captures if c.path == "/v1/chat/completions"]
    cold_tokens, warm_tokens = _tokens(real_server, cold), _tokens(real_server, warm)
    assert len(cold_tokens) >= 2000
    # llama-server keeps the longest common token prefix of the two prompts, and says so exactly
    assert result.cached_tokens == _common_prefix(cold_tokens, warm_tokens)
    assert result.prompt_tokens == len(warm_tokens)
    assert result.decided_by == "timings.cache_n"
    n, p = result.cached_tokens, result.prompt_tokens
    for source in (
        "timings.cache_n",
        "usage.prompt_tokens_details.cached_tokens",
        "metrics llamacpp:prompt_tokens_cached",
        "log",
    ):
        assert any(
            e.startswith(f"warm request: {source} = {n} of {p} prompt tokens") for e in result.evidence
        ), (source, result.evidence)
    assert result.cold_cached_tokens is not None
    assert result.cold_cached_tokens < 50  # only chat-template tokens before the per-run nonce


def test_miss_when_the_first_tokens_change(real_server: RunningServer) -> None:
    profile = Profile(name="local", kind="llama.cpp", base_url=real_server.url)
    target = Target(
        profile, ServerInfo(server="llama.cpp", metrics_url=f"{real_server.url}/metrics"), OPENAI_CHAT, "tiny"
    )
    first = target.body(make_prefix("aaaaaaaaaaaaaaaa", 40), SUFFIX_COLD)
    changed = target.body(make_prefix("zzzzzzzzzzzzzzzz", 40), SUFFIX_COLD)
    measure(target=target, body=first, guard=_guard())
    second = measure(target=target, body=changed, guard=_guard())
    best = best_reading(second.readings)
    assert best is not None
    assert best.cached is not None
    assert best.prompt is not None
    expected = _common_prefix(_tokens(real_server, first), _tokens(real_server, changed))
    assert best.cached == expected
    assert expected < 40
    assert verdict_for(best.cached, best.prompt) == "MISS"
    metrics = [r for r in second.readings if r.source.startswith("metrics")]
    assert [(r.cached, r.prompt) for r in metrics] == [(best.cached, best.prompt)]


def _guard() -> Any:
    from kvswitch.verify.probe import Guard  # noqa: PLC0415

    guard = Guard(120)
    return guard


def test_verify_reports_miss_when_the_server_keeps_no_cache(no_cache_server: RunningServer) -> None:
    profile = Profile(name="nocache", kind="llama.cpp", base_url=no_cache_server.url, targets=["codex"])
    result = run_verify(profile, timeout=120)
    assert result.verdict == "MISS", result.describe()
    assert result.cached_tokens == 0
    assert result.prompt_tokens is not None
    assert result.prompt_tokens > 2000
    assert "--no-cache-prompt" in (result.diagnosis or "")
    assert result.exit_code == 1


def test_claude_code_replay_shows_the_header_breaking_the_prefix(real_server: RunningServer) -> None:
    profile = Profile(name="claude-local", kind="llama.cpp", base_url=real_server.url, targets=["claude"])
    result = run_verify(profile, timeout=180)
    replay = result.claude_replay
    assert replay is not None, result.describe()
    assert replay.error is None, replay.message
    assert replay.with_header is not None
    assert replay.without_header is not None
    assert replay.header_breaks_prefix is True
    with_header, without = replay.with_header, replay.without_header
    assert with_header.cached_tokens is not None
    assert without.cached_tokens is not None
    assert with_header.prompt_tokens is not None
    assert with_header.prompt_tokens > 10000  # Claude Code's real prompt, ~13.7k tokens with this tokenizer
    assert with_header.cached_tokens < 100  # only the template tokens before system[0]
    assert without.cached_tokens > 5000  # everything before the user's first words
    assert result.fix_env == {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}
    assert "billing-header" in (replay.diagnosis or "")
    assert json.dumps(result.to_json())


def test_recorder_passes_a_real_stream_through_byte_exact(real_server: RunningServer, tmp_path: Path) -> None:
    captures: list[Capture] = []
    body = {
        "model": "tiny",
        "stream": True,
        "max_tokens": 16,
        "temperature": 0,
        "messages": [
            {"role": "system", "content": make_prefix("recorder-check", 20)},
            {"role": "user", "content": "hello"},
        ],
    }
    with Recorder(real_server.url, tmp_path / "caps", on_capture=captures.append) as recorder:
        with httpx.stream("POST", f"{recorder.url}/v1/chat/completions", json=body, timeout=60) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            received = b"".join(response.iter_raw())
        messages_body = {
            "model": "tiny",
            "stream": True,
            "max_tokens": 8,
            "system": "be brief",
            "messages": [{"role": "user", "content": "hi"}],
        }
        with httpx.stream("POST", f"{recorder.url}/v1/messages", json=messages_body, timeout=60) as response:
            received_messages = b"".join(response.iter_raw())
    chat, messages = captures
    assert received == chat.response_sample
    assert received.count(b"data: ") >= 3
    assert received.rstrip().endswith(b"data: [DONE]")
    assert received_messages == messages.response_sample
    assert b"event: message_stop" in received_messages
    assert chat.body == body
