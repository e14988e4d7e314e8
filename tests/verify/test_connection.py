"""``kvswitch test`` / ``kvswitch models``: each failure told apart against real sockets.

The OK case runs against a real llama-server; the HTTP error statuses come from a loopback stub (a
real server cannot be made to answer 401 or 429 on demand); refused, DNS and TLS failures are real.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from verify_stubs import HangingServer, Reply, StubServer

from kvswitch.core.errors import KvSwitchError
from kvswitch.core.models import Profile
from kvswitch.verify.connection import check_connection, clean_message, list_models
from support.llama import llama_server
from support.net import free_port

KEY = "sk-conn-secret-0123456789"
APP = Path(__file__).resolve().parents[2] / "app"


def profile(url: str, **extra: object) -> Profile:
    fields: dict[str, object] = {"name": "gw", "kind": "openai-compatible", "base_url": url,
                                 "api_key": KEY, "model": "m1"}
    fields.update(extra)
    return Profile.model_validate(fields)


@pytest.mark.real_server
def test_real_llama_server_answers_ok_and_lists_its_model(tmp_path: Path) -> None:
    with llama_server(tmp_path) as server:
        local = profile(server.url, kind="llama.cpp", api_key=None, model="tiny")
        report = check_connection(local, timeout=30)
        assert report.ok, report.lines()
        assert report.outcome == "ok"
        assert report.status == 200
        assert report.url == f"{server.url}/v1/messages"
        listing = list_models(local, timeout=10)
        assert listing.url == f"{server.url}/v1/models"
        assert "tiny" in listing.models
        codex_only = profile(server.url, kind="llama.cpp", api_key=None, targets=["codex"])
        assert check_connection(codex_only, timeout=10).outcome == "ok"


@pytest.mark.parametrize(
    ("status", "outcome", "fix_words"),
    [
        (401, "auth", "Check the key"),
        (403, "auth", "Check the key"),
        (404, "route", "path segment"),
        (429, "rate-limited", "quota"),
        (500, "server-error", "retry later"),
        (503, "server-error", "retry later"),
        (400, "bad-request", "kvswitch models gw"),
    ],
)
def test_error_statuses_are_told_apart_with_the_servers_message(
    stub: StubServer, status: int, outcome: str, fix_words: str
) -> None:
    said = f"upstream says no\x1b[31m ({status})\x00 with key {KEY}"
    stub.routes["POST /v1/messages"] = [Reply.json({"error": {"type": "x", "message": said}}, status)]
    report = check_connection(profile(stub.url), timeout=5)
    assert not report.ok
    assert report.outcome == outcome
    assert report.status == status
    assert report.server_message.startswith("upstream says no")
    assert f"({status})" in report.server_message
    assert "\x1b" not in report.server_message
    assert "\x00" not in report.server_message
    assert KEY not in report.server_message
    assert fix_words in report.fix
    headers = stub.requests[-1][2]
    assert headers["authorization"] == f"Bearer {KEY}"


def test_key_in_api_key_variable_is_sent_as_x_api_key(stub: StubServer) -> None:
    stub.routes["POST /v1/messages"] = [Reply.json({"type": "message", "content": [], "model": "m1"})]
    report = check_connection(profile(stub.url, key_env="ANTHROPIC_API_KEY"), timeout=5)
    assert report.ok, report.lines()
    headers = stub.requests[-1][2]
    assert headers["x-api-key"] == KEY
    assert "authorization" not in headers


def test_html_page_is_non_json(stub: StubServer) -> None:
    stub.routes["POST /v1/messages"] = [Reply(200, b"<html><body>Welcome\r\n</body></html>", "text/html")]
    report = check_connection(profile(stub.url), timeout=5)
    assert report.outcome == "non-json"
    assert "web page" in report.fix
    assert report.server_message == "<html><body>Welcome </body></html>"


def test_error_object_with_200_is_an_error_body(stub: StubServer) -> None:
    stub.routes["POST /v1/messages"] = [Reply.json({"error": {"message": "model m1 not found"}})]
    report = check_connection(profile(stub.url), timeout=5)
    assert report.outcome == "error-body"
    assert report.server_message == "model m1 not found"


def test_json_without_content_is_unexpected(stub: StubServer) -> None:
    stub.routes["GET /v1/models"] = [Reply.json({"object": "list"})]
    report = check_connection(profile(stub.url, targets=["codex"]), timeout=5)
    assert report.outcome == "unexpected-body"
    with pytest.raises(KvSwitchError, match="no 'data'"):
        list_models(profile(stub.url), timeout=5)


def test_closed_port_is_refused() -> None:
    report = check_connection(profile(f"http://127.0.0.1:{free_port()}"), timeout=5)
    assert report.outcome == "refused"
    assert "Start the server" in report.fix


def test_unresolvable_host_is_dns() -> None:
    started = time.monotonic()
    report = check_connection(profile("https://no-such-gateway.invalid"), timeout=5)
    assert report.outcome == "dns", report.lines()
    assert "no-such-gateway.invalid" in report.summary
    assert time.monotonic() - started < 15


def test_tls_spoken_to_a_plain_http_port_is_tls(stub: StubServer) -> None:
    plain = stub.url.replace("http://", "https://")
    report = check_connection(profile(plain), timeout=5)
    assert report.outcome == "tls", report.lines()
    assert "http://" in report.fix


def test_silent_server_times_out_within_the_bound() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        started = time.monotonic()
        report = check_connection(profile(f"http://127.0.0.1:{port}"), timeout=1)
    assert report.outcome == "timeout"
    assert time.monotonic() - started < 5


def test_ollama_models_come_from_its_native_list(stub: StubServer) -> None:
    stub.routes["GET /api/tags"] = [Reply.json({"models": [{"name": "qwen3:8b"}, {"name": "llama3"}]})]
    listing = list_models(profile(stub.url, kind="ollama", api_key=None), timeout=5)
    assert listing.models == ("qwen3:8b", "llama3")
    assert listing.url == f"{stub.url}/api/tags"


def test_clean_message_strips_control_characters_and_bounds_length() -> None:
    assert clean_message("a\tb\nc\x7fd\x9b") == "a b cd"  # core.text.printable drops controls
    assert len(clean_message("x" * 5000)) == 300


def kvswitch(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(APP)}
    return subprocess.run([sys.executable, "-m", "kvswitch", *args], env=env, capture_output=True,
                          text=True, timeout=60)


def test_cli_test_and_models_report_without_the_key(stub: StubServer) -> None:
    stub.routes["POST /v1/messages"] = [Reply.json({"error": {"message": "invalid x-api-key"}}, 401)]
    stub.routes["GET /v1/models"] = [Reply.json({"data": [{"id": "m1"}, {"id": "m2"}]})]
    added = kvswitch("profile", "add", "gw", "--kind", "openai-compatible", "--base-url", stub.url,
                     "--api-key", KEY)
    assert added.returncode == 0, added.stderr
    result = kvswitch("test", "gw", "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["outcome"] == "auth"
    assert report["server_message"] == "invalid x-api-key"
    assert KEY not in result.stdout + result.stderr
    text = kvswitch("test", "gw")
    assert text.stdout.startswith(f"FAILED [auth] {stub.url}/v1/messages: HTTP 401")
    assert "server said: invalid x-api-key" in text.stdout
    models = kvswitch("models", "gw")
    assert models.returncode == 0, models.stderr
    assert models.stdout.split() == ["m1", "m2"]


def test_fixes_name_the_catalogs_endpoint_and_key_variable() -> None:
    from kvswitch.verify.connection import _auth_fix, _vendor_hint  # noqa: PLC0415 - the wording itself

    wrong_path = profile("https://api.deepseek.com/v1")
    assert "https://api.deepseek.com/anthropic" in _vendor_hint(wrong_path)
    assert _vendor_hint(profile("https://api.deepseek.com/anthropic")) == ""
    assert _vendor_hint(profile("https://gw.example")) == ""
    bearer_to_anthropic = profile("https://api.anthropic.com", kind="anthropic")
    assert "--key-env ANTHROPIC_API_KEY" in _auth_fix(bearer_to_anthropic)
    assert "reads its key from ANTHROPIC_API_KEY" in _auth_fix(bearer_to_anthropic)
    assert "platform.deepseek.com/api_keys" in _auth_fix(profile("https://api.deepseek.com/anthropic"))
    assert "--api-key-stdin" in _auth_fix(profile("https://gw.example", api_key=None))


def test_trickling_answer_is_cut_at_the_overall_timeout(trickling: HangingServer) -> None:
    started = time.monotonic()
    report = check_connection(profile(trickling.url), timeout=1)
    assert report.outcome == "timeout"
    assert time.monotonic() - started < 4


def test_models_fall_back_from_the_anthropic_path_to_the_vendors_root(stub: StubServer) -> None:
    stub.routes["GET /v1/models"] = [Reply.json({"data": [{"id": "glm-5.1"}, {"id": "glm-4.7"}]})]
    listing = list_models(profile(f"{stub.url}/anthropic"), timeout=5)
    assert listing.url == f"{stub.url}/v1/models"
    assert listing.models == ("glm-5.1", "glm-4.7")
    assert [r[1] for r in stub.requests] == ["/anthropic/v1/models", "/v1/models"]


def test_models_keep_the_first_failure_when_it_is_not_a_missing_route(stub: StubServer) -> None:
    stub.routes["GET /anthropic/v1/models"] = [Reply.json({"error": {"message": "bad key"}}, 401)]
    with pytest.raises(KvSwitchError, match=r"\[auth\].*bad key"):
        list_models(profile(f"{stub.url}/anthropic"), timeout=5)
    assert len(stub.requests) == 1
