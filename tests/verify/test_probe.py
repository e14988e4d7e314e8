"""run_verify against loopback stubs that answer with llama-server's captured bodies, and against
stubs that fail in every way a real server can: refused, hanging, trickling, 401, HTML, bad JSON."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from verify_stubs import HangingServer, Reply, StubServer

from kvswitch.core.models import Profile
from kvswitch.verify import run_verify
from kvswitch.verify.evidence import metrics_reading, parse_metrics
from support.net import free_port

KEY = "sk-test-0123456789abcdef-SECRET"


def _profile(url: str, **extra: object) -> Profile:
    data: dict = {"name": "t", "kind": "llama.cpp", "base_url": url, "targets": ["codex"], **extra}
    return Profile(**data)


def _read(responses_dir: Path, name: str) -> bytes:
    return (responses_dir / name).read_bytes()


class MetricsCounter:
    """Serves /metrics whose cached counter moves by what the last answered request reported."""

    def __init__(self) -> None:
        self.cached = 0
        self.processed = 0

    def add(self, cached: int, processed: int) -> None:
        self.cached += cached
        self.processed += processed

    def reply(self, _path: str, _headers: dict, _body: bytes) -> Reply:
        text = (
            f"llamacpp:prompt_tokens_total {self.processed}\n"
            f"llamacpp:prompt_tokens_cached_total {self.cached}\n"
        )
        return Reply(200, text.encode(), "text/plain; version=0.0.4")


def _llama_stub(stub: StubServer, responses_dir: Path, first: str, second: str) -> MetricsCounter:
    metrics = MetricsCounter()
    answers = [json.loads(_read(responses_dir, first)), json.loads(_read(responses_dir, second))]

    def chat(_path: str, _headers: dict, _body: bytes) -> Reply:
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        metrics.add(answer["timings"]["cache_n"], answer["timings"]["prompt_n"])
        return Reply.json(answer)

    stub.routes["GET /props"] = [Reply(200, _read(responses_dir, "props.txt"))]
    stub.routes["GET /v1/models"] = [Reply(200, _read(responses_dir, "v1_models.txt"))]
    stub.routes["GET /metrics"] = metrics.reply
    stub.routes["POST /v1/chat/completions"] = chat
    return metrics


def test_hit_from_captured_chat_answers(stub: StubServer, responses_dir: Path) -> None:
    _llama_stub(stub, responses_dir, "resp_chat_first.json", "resp_chat_hit.json")
    result = run_verify(_profile(stub.url), timeout=10)
    assert result.verdict == "HIT"
    assert result.api == "openai-chat"
    assert result.server == "llama.cpp"
    assert result.model == "tiny"
    assert (result.cached_tokens, result.prompt_tokens) == (1564, 1601)
    assert result.decided_by == "timings.cache_n"
    assert result.reuse_ratio == pytest.approx(1564 / 1601)
    assert any("usage.prompt_tokens_details.cached_tokens = 1564 of 1601" in e for e in result.evidence)
    assert any("metrics llamacpp:prompt_tokens_cached = 1564 of 1601" in e for e in result.evidence)
    assert result.cold_cached_tokens == 0
    assert result.ttft_cold_ms is not None
    assert result.ttft_warm_ms is not None
    # the two requests share the long prefix, which starts with the per-run nonce
    cold, warm = stub.posts("/v1/chat/completions")
    assert cold["messages"][0] == warm["messages"][0]
    assert cold["messages"][1] != warm["messages"][1]
    assert cold["messages"][0]["content"].startswith("KV Switch cache probe ")
    assert cold["max_tokens"] <= 4
    assert cold["stream"] is True
    assert json.loads(json.dumps(result.to_json()))["verdict"] == "HIT"


def test_each_run_uses_a_new_prefix(stub: StubServer, responses_dir: Path) -> None:
    _llama_stub(stub, responses_dir, "resp_chat_first.json", "resp_chat_hit.json")
    run_verify(_profile(stub.url), timeout=10)
    run_verify(_profile(stub.url), timeout=10)
    prefixes = {body["messages"][0]["content"] for body in stub.posts("/v1/chat/completions")}
    assert len(prefixes) == 2


def test_miss_from_captured_answers(stub: StubServer, responses_dir: Path) -> None:
    _llama_stub(stub, responses_dir, "resp_chat_first.json", "resp_chat_miss.json")
    result = run_verify(_profile(stub.url), timeout=10)
    assert result.verdict == "MISS"
    assert (result.cached_tokens, result.prompt_tokens) == (29, 1564)
    assert "llama-server" in (result.diagnosis or "")


def test_completion_endpoint_and_anthropic_stream(stub: StubServer, responses_dir: Path) -> None:
    stub.routes["POST /completion"] = [
        Reply(200, _read(responses_dir, "resp_completion_first.json")),
        Reply(200, _read(responses_dir, "resp_completion_hit.json")),
    ]
    result = run_verify(_profile(stub.url), timeout=10, api="llamacpp-completion")
    assert result.verdict == "HIT"
    assert (result.cached_tokens, result.prompt_tokens) == (1536, 1559)

    stream = _read(responses_dir, "resp_anthropic_stream.json")
    chunks = [block + b"\n\n" for block in stream.split(b"\n\n") if block.strip()]
    stub.routes["POST /v1/messages"] = [
        Reply(200, _read(responses_dir, "resp_anthropic_first.json")),
        Reply(200, b"", "text/event-stream", chunks),
    ]
    result = run_verify(_profile(stub.url), timeout=10, api="anthropic", claude_replay=False)
    assert result.verdict == "HIT"
    assert result.decided_by == "usage.cache_read_input_tokens"
    assert (result.cached_tokens, result.prompt_tokens) == (1563, 1564)


def test_ollama_native_counts(stub: StubServer) -> None:
    stub.routes["GET /api/version"] = [Reply.json({"version": "0.34.3"})]

    def ndjson(prompt: int, cached: int) -> Reply:
        lines = [
            {"message": {"role": "assistant", "content": "Hi"}, "done": False},
            {"done": True, "prompt_eval_count": prompt, "prompt_eval_cached_count": cached},
        ]
        return Reply(200, b"".join(json.dumps(x).encode() + b"\n" for x in lines), "application/x-ndjson")

    stub.routes["POST /api/chat"] = [ndjson(2400, 0), ndjson(2410, 2390)]
    result = run_verify(_profile(stub.url, kind="ollama"), timeout=10)
    assert result.api == "ollama"
    assert result.verdict == "HIT"
    assert (result.cached_tokens, result.prompt_tokens) == (2390, 2410)
    assert result.decided_by == "prompt_eval_cached_count"


def test_no_cache_numbers_is_unknown(stub: StubServer) -> None:
    answer = {
        "choices": [{"message": {"content": "x"}}],
        "usage": {"prompt_tokens": 2300, "completion_tokens": 1},
    }
    stub.routes["POST /v1/chat/completions"] = [Reply.json(answer)]
    result = run_verify(_profile(stub.url, kind="vllm"), timeout=10)
    assert result.verdict == "UNKNOWN"
    assert result.cached_tokens is None
    assert "--enable-prompt-tokens-details" in (result.diagnosis or "")
    assert result.exit_code == 3


def test_partial(stub: StubServer) -> None:
    def answer(cached: int) -> Reply:
        return Reply.json(
            {
                "choices": [{"message": {"content": "x"}}],
                "usage": {"prompt_tokens": 2400, "prompt_tokens_details": {"cached_tokens": cached}},
            }
        )

    stub.routes["POST /v1/chat/completions"] = [answer(0), answer(1024)]
    result = run_verify(_profile(stub.url, kind="vllm"), timeout=10)
    assert result.verdict == "PARTIAL"
    assert result.reuse_ratio == pytest.approx(1024 / 2400)


def test_missing_endpoint_falls_back_to_the_next_api(stub: StubServer, responses_dir: Path) -> None:
    stub.routes["POST /v1/responses"] = [
        Reply(200, _read(responses_dir, "resp_chat_first.json")),
        Reply(200, _read(responses_dir, "resp_chat_hit.json")),
    ]
    # codex target: /v1/responses is tried first; make chat missing too and check the order
    result = run_verify(_profile(stub.url, kind="custom"), timeout=10)
    assert result.api == "openai-responses"
    assert result.verdict == "HIT"
    stub.routes.clear()
    result = run_verify(_profile(stub.url, kind="custom"), timeout=10)
    assert result.verdict == "ERROR"
    assert "none of the known APIs answered" in result.message


def test_context_too_small_shrinks_the_prefix_once(stub: StubServer, responses_dir: Path) -> None:
    too_big = Reply.json(
        {
            "error": {
                "code": 400,
                "message": "request (9000 tokens) exceeds the available context "
                "size (4096 tokens), try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 9000,
                "n_ctx": 4096,
            }
        },
        400,
    )
    stub.routes["POST /v1/chat/completions"] = [
        too_big,
        Reply(200, _read(responses_dir, "resp_chat_first.json")),
        Reply(200, _read(responses_dir, "resp_chat_hit.json")),
    ]
    result = run_verify(_profile(stub.url), timeout=10)
    assert result.verdict == "HIT"
    first, second, third = stub.posts("/v1/chat/completions")
    assert len(second["messages"][0]["content"]) < len(first["messages"][0]["content"]) * 0.5
    assert second["messages"][0] == third["messages"][0]

    stub.routes["POST /v1/chat/completions"] = [too_big]
    result = run_verify(_profile(stub.url), timeout=10)
    assert result.verdict == "ERROR"
    assert "exceeds the available context size (4096 tokens)" in result.message
    assert "-c" in (result.diagnosis or "")


def test_refused_is_quick_and_clear() -> None:
    started = time.monotonic()
    result = run_verify(_profile(f"http://127.0.0.1:{free_port()}"), timeout=5)
    assert result.verdict == "ERROR"
    assert "connection refused" in result.message
    assert "nothing listens" in (result.diagnosis or "")
    assert result.exit_code == 4
    assert time.monotonic() - started < 3


@pytest.mark.parametrize("kind", ["hanging", "trickling"])
def test_hung_server_ends_within_the_timeout(kind: str, request: pytest.FixtureRequest) -> None:
    server: HangingServer = request.getfixturevalue(kind)
    threads_before = threading.active_count()
    started = time.monotonic()
    result = run_verify(_profile(server.url), timeout=1.5)
    elapsed = time.monotonic() - started
    assert result.verdict == "ERROR"
    assert "1.5 s timeout" in result.message
    assert elapsed < 3.0
    time.sleep(0.2)
    assert threading.active_count() <= threads_before + 1  # the server's own drip thread at most


def test_cancel_stops_a_hung_request_promptly(hanging: HangingServer) -> None:
    cancel = threading.Event()
    threading.Timer(0.4, cancel.set).start()
    started = time.monotonic()
    result = run_verify(_profile(hanging.url), timeout=30, cancel=cancel)
    assert result.verdict == "ERROR"
    assert "cancelled" in result.message
    assert time.monotonic() - started < 1.5


def test_401_shows_the_server_words_but_never_the_key(stub: StubServer) -> None:
    def deny(_path: str, headers: dict, _body: bytes) -> Reply:
        return Reply.json({"error": {"message": f"invalid key {headers.get('authorization')}"}}, 401)

    stub.routes["POST /v1/chat/completions"] = deny
    result = run_verify(_profile(stub.url, api_key=KEY), timeout=5)
    assert result.verdict == "ERROR"
    assert "HTTP 401" in result.message
    assert "invalid key Bearer" in result.message
    assert KEY not in json.dumps(result.to_json())
    assert "key" in (result.diagnosis or "")
    sent = [h for _m, p, h, _b in stub.requests if p == "/v1/chat/completions"]
    assert sent[0]["authorization"] == f"Bearer {KEY}"


def test_html_and_garbage_bodies(stub: StubServer) -> None:
    stub.routes["POST /v1/chat/completions"] = [
        Reply(200, b"<!DOCTYPE html><html><head><title>Router login</title></head></html>", "text/html")
    ]
    result = run_verify(_profile(stub.url), timeout=5, api="openai-chat")
    assert result.verdict == "ERROR"
    assert "HTML page (Router login)" in result.message

    stub.routes["POST /v1/chat/completions"] = [Reply(200, b"", "text/event-stream", [b"data: hello\n\n"])]
    result = run_verify(_profile(stub.url), timeout=5, api="openai-chat")
    assert result.verdict == "ERROR"
    assert "not JSON" in result.message


def test_rejected_model_name(stub: StubServer) -> None:
    stub.routes["POST /v1/chat/completions"] = [
        Reply.json({"error": {"message": "model 'gpt-9' not found", "code": 404}}, 404)
    ]
    result = run_verify(_profile(stub.url, model="gpt-9"), timeout=5)
    assert result.verdict == "ERROR"
    assert "model 'gpt-9' not found" in result.message
    assert "model" in (result.diagnosis or "")


def test_metrics_parsing_from_the_captured_scrape(responses_dir: Path) -> None:
    values = parse_metrics((responses_dir / "metrics.txt").read_text())
    assert values["llamacpp:prompt_tokens_cached_total"] == 10969
    assert values["llamacpp:prompt_tokens_total"] == 9430
    after = dict(
        values,
        **{"llamacpp:prompt_tokens_cached_total": 10969 + 1500, "llamacpp:prompt_tokens_total": 9430 + 20},
    )
    reading = metrics_reading(values, after)
    assert reading is not None
    assert (reading.cached, reading.prompt) == (1500, 1520)
    vllm = {"vllm:prefix_cache_hits_total": 100.0, "vllm:prefix_cache_queries_total": 200.0}
    vllm_after = {"vllm:prefix_cache_hits_total": 2148.0, "vllm:prefix_cache_queries_total": 2504.0}
    reading = metrics_reading(vllm, vllm_after)
    assert reading is not None
    assert (reading.cached, reading.prompt) == (2048, 2304)


def test_replay_without_its_template_reports_instead_of_crashing(
    stub: StubServer, responses_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kvswitch.verify import claude_replay

    def missing() -> dict:
        raise FileNotFoundError("data/claude_code_request.json")

    monkeypatch.setattr(claude_replay, "load_template", missing)
    _llama_stub(stub, responses_dir, "resp_chat_first.json", "resp_chat_hit.json")
    result = run_verify(_profile(stub.url, targets=["claude"]), timeout=10)
    assert result.verdict == "HIT"
    assert result.claude_replay is not None
    assert "template is missing" in (result.claude_replay.error or "")
    assert not stub.posts("/v1/messages")


def test_replay_against_captured_anthropic_answers(stub: StubServer, responses_dir: Path) -> None:
    """Four non-streamed Claude Code-shaped requests; the second of each pair decides."""
    _llama_stub(stub, responses_dir, "resp_chat_first.json", "resp_chat_hit.json")
    usage = [
        {"input_tokens": 13800, "cache_read_input_tokens": 0},
        {"input_tokens": 13775, "cache_read_input_tokens": 48},
        {"input_tokens": 13700, "cache_read_input_tokens": 59},
        {"input_tokens": 7653, "cache_read_input_tokens": 6106},
    ]
    stub.routes["POST /v1/messages"] = [Reply.json({"type": "message", "usage": u}) for u in usage]
    result = run_verify(_profile(stub.url, targets=["claude"]), timeout=10)
    replay = result.claude_replay
    assert replay is not None
    assert replay.header_breaks_prefix is True
    assert replay.with_header is not None
    assert (replay.with_header.cached_tokens, replay.with_header.prompt_tokens) == (48, 13823)
    assert replay.without_header is not None
    assert (replay.without_header.cached_tokens, replay.without_header.prompt_tokens) == (6106, 13759)
    assert result.fix_env == {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}
    bodies = stub.posts("/v1/messages")
    assert [b["system"][0]["text"].startswith("x-anthropic-billing-header") for b in bodies] == [
        True,
        True,
        False,
        False,
    ]
    assert bodies[0]["system"][0] != bodies[1]["system"][0]
    assert all(b["stream"] is False and b["max_tokens"] <= 4 for b in bodies)
    headers = [h for m, p, h, _b in stub.requests if p == "/v1/messages"]
    assert headers[0]["anthropic-version"] == "2023-06-01"
    assert headers[0]["x-app"] == "cli"


def test_password_in_the_url_is_never_shown() -> None:
    port = free_port()
    result = run_verify(_profile(f"http://user:hunter2-pass@127.0.0.1:{port}"), timeout=3)
    assert result.verdict == "ERROR"
    assert "hunter2-pass" not in json.dumps(result.to_json())
    assert result.base_url == f"http://127.0.0.1:{port}"


def test_replay_on_a_server_without_the_messages_endpoint(stub: StubServer, responses_dir: Path) -> None:
    _llama_stub(stub, responses_dir, "resp_chat_first.json", "resp_chat_hit.json")
    result = run_verify(_profile(stub.url, targets=["claude"]), timeout=10)
    assert result.verdict == "HIT"
    assert result.claude_replay is not None
    assert "no Anthropic /v1/messages endpoint" in result.claude_replay.message
    assert result.fix_env is None


def test_sse_relabelled_as_plain_text_is_still_read(stub: StubServer, responses_dir: Path) -> None:
    stream = (responses_dir / "resp_anthropic_stream.json").read_bytes()
    first = (responses_dir / "resp_anthropic_first.json").read_bytes()
    stub.routes["POST /v1/messages"] = [Reply(200, first), Reply(200, stream, "text/plain")]
    result = run_verify(_profile(stub.url), timeout=10, api="anthropic", claude_replay=False)
    assert result.verdict == "HIT"
    assert (result.cached_tokens, result.prompt_tokens) == (1563, 1564)
