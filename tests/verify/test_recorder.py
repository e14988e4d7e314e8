"""The recording proxy in front of a loopback upstream: byte-exact streaming, masked captures, live
divergence, loopback-only listening and a clear 502 when the upstream is down."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from verify_stubs import Reply, StubServer

from kvswitch.core.errors import UsageError
from kvswitch.core.models import Profile
from kvswitch.verify.recorder import Capture, Recorder, parse_listen, routed_profile
from support.net import free_port

KEY = "sk-ant-live-0123456789abcdefSECRET"


def _sse_reply(responses_dir: Path) -> Reply:
    stream = (responses_dir / "resp_anthropic_stream.json").read_bytes()
    chunks = [block + b"\n\n" for block in stream.split(b"\n\n") if block.strip()]
    return Reply(200, b"", "text/event-stream", chunks)


def test_streaming_passes_through_byte_exact(stub: StubServer, responses_dir: Path, tmp_path: Path) -> None:
    stub.routes["POST /v1/messages"] = [_sse_reply(responses_dir)]
    seen: list[Capture] = []
    with Recorder(stub.url, tmp_path / "caps", on_capture=seen.append) as rec:
        body = {"model": "tiny", "system": "S" * 100, "messages": [{"role": "user", "content": "hi"}]}
        direct = httpx.post(f"{stub.url}/v1/messages?beta=true", json=body).content
        chunks = []
        with httpx.stream(
            "POST",
            f"{rec.url}/v1/messages?beta=true",
            json=body,
            headers={"x-api-key": KEY, "authorization": f"Bearer {KEY}"},
        ) as response:
            assert response.status_code == 200
            assert response.headers["content-type"] == "text/event-stream"
            chunks.extend(response.iter_raw())
    assert b"".join(chunks) == direct
    assert (
        b"".join(chunks)
        == (responses_dir / "resp_anthropic_stream.json").read_bytes().rstrip(b"\n") + b"\n\n"
    )
    # the upstream saw the client's request unchanged (path, query, credentials, body)
    forwarded = [r for r in stub.requests if r[1] == "/v1/messages"][-1]
    assert forwarded[2]["x-api-key"] == KEY
    assert json.loads(forwarded[3]) == body
    capture_file = tmp_path / "caps" / "request_0001.json"
    saved = json.loads(capture_file.read_text())
    assert saved["path"] == "/v1/messages?beta=true"
    assert saved["body"] == body
    assert KEY not in capture_file.read_text()
    assert saved["headers"]["x-api-key"] == "••••••••"
    assert seen[-1].cache is not None
    assert (seen[-1].cache.cached, seen[-1].cache.prompt) == (1563, 1564)


def test_divergence_from_the_previous_request_is_reported(
    stub: StubServer, fixtures_dir: Path, tmp_path: Path
) -> None:
    stub.routes["POST /v1/messages"] = [
        Reply.json({"usage": {"input_tokens": 5, "cache_read_input_tokens": 8}})
    ]
    captures = fixtures_dir / "claude-code-2.1.332"
    seen: list[Capture] = []
    with Recorder(stub.url, tmp_path / "caps", on_capture=seen.append) as rec:
        for name in ("request_attribution_default_1.json", "request_attribution_default_3.json"):
            body = json.loads((captures / name).read_text())["body"]
            assert httpx.post(f"{rec.url}/v1/messages?beta=true", json=body).status_code == 200
    first, second = seen
    assert first.diagnosis is None
    assert second.previous == 1
    assert second.diagnosis is not None
    assert second.diagnosis.cause == "billing_header"
    summary = second.summary()
    assert "vs #1: first divergence system[0]" in summary
    assert "CLAUDE_CODE_ATTRIBUTION_HEADER=0" in summary


def test_upstream_down_gives_a_clear_502(tmp_path: Path) -> None:
    with Recorder(f"http://127.0.0.1:{free_port()}", tmp_path / "caps") as rec:
        response = httpx.post(f"{rec.url}/v1/messages", json={"messages": []})
    assert response.status_code == 502
    assert "recorder: upstream" in response.json()["error"]["message"]
    assert json.loads((tmp_path / "caps" / "request_0001.json").read_text())["response_status"] == 502


def test_get_and_head_pass_through(stub: StubServer, tmp_path: Path) -> None:
    stub.routes["GET /health"] = [Reply.json({"status": "ok"})]
    with Recorder(stub.url, tmp_path / "caps") as rec:
        assert httpx.get(f"{rec.url}/health").json() == {"status": "ok"}
        assert httpx.head(f"{rec.url}/health").status_code in (200, 404, 501)


def test_listen_is_loopback_only_by_default() -> None:
    assert parse_listen("127.0.0.1:8089") == ("127.0.0.1", 8089)
    assert parse_listen("[::1]:0") == ("::1", 0)
    assert parse_listen("localhost:9000") == ("localhost", 9000)
    with pytest.raises(UsageError, match="--allow-remote"):
        parse_listen("0.0.0.0:8089")
    with pytest.raises(UsageError, match="--allow-remote"):
        parse_listen("192.168.1.5:8089")
    assert parse_listen("0.0.0.0:8089", allow_remote=True) == ("0.0.0.0", 8089)
    with pytest.raises(UsageError, match="HOST:PORT"):
        parse_listen("8089x")
    with pytest.raises(UsageError):
        Recorder("http://127.0.0.1:1", Path("/tmp/x"), host="10.0.0.1")
    with pytest.raises(UsageError, match="--upstream"):
        Recorder("ftp://nowhere", Path("/tmp/x"))


def test_routed_profile_points_at_the_recorder() -> None:
    profile = Profile(
        name="local",
        kind="llama.cpp",
        base_url="http://127.0.0.1:8080",
        api_key="k" * 20,
        env={"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"},
    )
    routed = routed_profile(profile, "http://127.0.0.1:9999/")
    assert routed.base_url == "http://127.0.0.1:9999"
    assert routed.key == profile.key
    assert routed.env == profile.env
    assert profile.base_url == "http://127.0.0.1:8080"
