"""The protocol bridges and the prefix stabiliser end to end, with the real clients and server.

Real Claude Code 2.1.332 and Codex (0.169.0 and the newest, 0.171.0) talk to the real KV Switch gateway,
which speaks only chat completions to a real llama-server b11434 (the profiles force ``openai_chat``).
Between the gateway and the server sits the recorder, so each request's reuse is read from the server's
own answer (``timings`` / usage), never from the code under test. A server-side logit bias on the tiny
model's end-of-turn token makes every answer end at once."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from kvswitch.cli import main
from kvswitch.core.paths import AppPaths
from kvswitch.gateway.control import start_background
from kvswitch.verify.recorder import Capture, Recorder
from support.claude import claude_binary, eos_token_id
from support.clients import CODEX_VERSIONS, codex_binary
from support.llama import llama_server

pytestmark = pytest.mark.real_server


@contextmanager
def gateway() -> Iterator[tuple[str, str]]:
    """The real gateway (on a thread of this process): its URL and the local token."""
    paths = AppPaths.default()
    server = start_background(paths, port=0)  # a free port, remembered for the profiles applied next
    try:
        token = (paths.config_dir / "gateway-token").read_text().strip()
        yield server.url, token
    finally:
        server.stop()


def _add(name: str, url: str, *extra: str) -> None:
    argv = ["profile", "add", name, "--kind", "llama.cpp", "--base-url", url, "--model", "tiny", *extra]
    assert main(argv) == 0


def _claude(
    home: Path, project: Path, base_url: str, token: str, prompt: str, *flags: str
) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_AUTH_TOKEN": token,
        "ANTHROPIC_MODEL": "tiny",
        "ANTHROPIC_SMALL_FAST_MODEL": "tiny",
        "CLAUDE_CODE_ATTRIBUTION_HEADER": "0",
        "CLAUDE_CODE_MAX_CONTEXT_TOKENS": "32768",
        "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "64",
    }
    return subprocess.run(
        [str(claude_binary()), "-p", prompt, *flags],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _posts(captures: list[Capture], route: str) -> list[Capture]:
    """The POSTs to ``route`` so far, once the recorder has settled: it adds a capture after the answer
    reached the client, so right after a client exits its last request may still be on the way."""
    deadline, seen, stable_since = time.monotonic() + 15, -1, time.monotonic()
    while time.monotonic() < deadline:
        if len(captures) != seen:
            seen, stable_since = len(captures), time.monotonic()
        elif time.monotonic() - stable_since >= 1.0:
            break
        time.sleep(0.1)
    return [c for c in list(captures) if c.method == "POST" and c.path.split("?")[0].endswith(route)]


def _reuse(capture: Capture) -> float:
    assert capture.cache is not None, capture.path
    assert capture.cache.cached is not None
    assert capture.cache.prompt
    return capture.cache.cached / capture.cache.prompt


def test_claude_code_on_chat_completions_keeps_the_prefix_like_the_native_route(
    fake_home: Path, tmp_path: Path, record_property: Any
) -> None:
    captures: list[Capture] = []
    with (
        llama_server(tmp_path / "server", "-l", f"{eos_token_id()}+100") as server,
        Recorder(server.url, tmp_path / "captures", on_capture=captures.append) as recorder,
        gateway() as (gateway_url, token),
    ):
        _add("chat", recorder.url, "--protocol", "openai_chat")
        _add("native", recorder.url)
        routes = {"chat": "/v1/chat/completions", "native": "/v1/messages"}
        reuse: dict[str, list[float]] = {}
        for name, route in routes.items():
            project = tmp_path / f"project-{name}"
            project.mkdir()
            firsts: list[Capture] = []
            for turn, prompt in enumerate(["say hi", "say it again", "and once more"]):
                flags = ["--continue"] if turn else []
                before = len(_posts(captures, route))
                done = _claude(fake_home, project, f"{gateway_url}/p/{name}", token, prompt, *flags)
                assert done.returncode == 0, (name, turn, done.stdout[-1000:], done.stderr[-2000:])
                # a turn's first request (Claude Code then retries an empty answer with a reminder added)
                firsts.append(_posts(captures, route)[before])
            reuse[name] = [_reuse(c) for c in firsts]
    chat = _posts(captures, "/v1/chat/completions")
    # the converted request is Claude Code's whole prompt, environment block included (ccr drops it)
    assert all(c.cache is not None and (c.cache.prompt or 0) > 10_000 for c in chat)
    assert all("Primary working directory" in json.dumps(c.body) for c in chat)
    assert all(c.body["messages"][0]["role"] == "system" for c in chat)
    # continued turns: >= 99% reused by the server's own numbers, on both routes
    assert min(reuse["chat"][1:]) >= 0.99, reuse
    assert min(reuse["native"][1:]) >= 0.99, reuse
    record_property("reuse_per_turn", json.dumps(reuse))


def _chat_sse(chunks: list[dict[str, Any]]) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


class _ScriptedChat(BaseHTTPRequestHandler):
    """A chat-completions upstream that asks for a Read of ``path`` first, then answers in text."""

    requests: list[dict[str, Any]] = []
    path_to_read = ""
    #: the tool call to ask for: Claude Code's Read, or Codex's shell tool
    codex = False

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        type(self).requests.append({"path": self.path, "body": body})
        last = body["messages"][-1]
        head = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "model": "tiny"}
        usage = {"prompt_tokens": 10, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": 0}}
        if last["role"] == "tool" or not body.get("tools"):
            chunks = [
                {
                    **head,
                    "choices": [{"index": 0, "delta": {"role": "assistant", "content": "the file says 42"}}],
                },
                {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            ]
        else:
            if self.codex:
                arguments = json.dumps({"cmd": f"cat {self.path_to_read}"})
                function = {"name": "exec_command", "arguments": arguments}
            else:
                function = {"name": "Read", "arguments": json.dumps({"file_path": self.path_to_read})}
            call = {"index": 0, "id": "call_read_1", "type": "function", "function": function}
            chunks = [
                {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}}]},
                {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
            ]
        payload = _chat_sse([*chunks, {**head, "choices": [], "usage": usage}])
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


def test_a_tool_round_trip_through_the_claude_code_bridge(fake_home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    secret = "kvswitch-bridge-e2e: the answer is 42\n"
    (project / "notes.txt").write_text(secret)
    _ScriptedChat.requests = []
    _ScriptedChat.path_to_read = str(project / "notes.txt")
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), _ScriptedChat)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    try:
        with gateway() as (gateway_url, token):
            _add("scripted", f"http://127.0.0.1:{upstream.server_port}", "--protocol", "openai_chat")
            done = _claude(
                fake_home,
                project,
                f"{gateway_url}/p/scripted",
                token,
                "read the file notes.txt",
                "--allowedTools",
                "Read",
            )
    finally:
        upstream.shutdown()
    assert done.returncode == 0, (done.stdout[-1000:], done.stderr[-2000:])
    assert "the file says 42" in done.stdout
    main_requests = [r for r in _ScriptedChat.requests if r["body"].get("tools")]
    assert all(r["path"] == "/v1/chat/completions" for r in _ScriptedChat.requests)
    first, second = main_requests[0]["body"], main_requests[1]["body"]
    assert any(m["role"] == "user" and "read the file notes.txt" in m["content"] for m in first["messages"])
    calls = second["messages"][-2]["tool_calls"]
    assert calls[0]["id"] == "call_read_1"
    assert calls[0]["function"]["name"] == "Read"
    tool = second["messages"][-1]
    assert tool["role"] == "tool"
    assert tool["tool_call_id"] == "call_read_1"
    assert "kvswitch-bridge-e2e: the answer is 42" in tool["content"]  # the client ran the tool


def _new_conversation_cost(captures: list[Capture], before: int) -> tuple[int, int]:
    """The prompt tokens and the re-processed ones of the main request of one ``claude -p`` run."""
    run = [c for c in _posts(captures, "/v1/messages")[before:] if c.body.get("tools")]
    assert run, "no main request"
    cache = run[0].cache
    assert cache is not None
    assert cache.prompt is not None
    assert cache.cached is not None
    return cache.prompt, cache.prompt - cache.cached


def test_the_stabiliser_lets_a_new_conversation_reuse_the_shared_context(
    fake_home: Path, tmp_path: Path, record_property: Any
) -> None:
    results: dict[str, dict[str, Any]] = {}
    for mode, flags in (("off", []), ("on", ["--stable-prefix"])):
        captures: list[Capture] = []
        with (
            llama_server(tmp_path / f"server-{mode}", "-l", f"{eos_token_id()}+100") as server,
            Recorder(server.url, tmp_path / f"captures-{mode}", on_capture=captures.append) as recorder,
            gateway() as (gateway_url, token),
        ):
            _add(mode, recorder.url, *flags)
            project = tmp_path / f"project-{mode}"
            project.mkdir()
            url = f"{gateway_url}/p/{mode}"
            first = _claude(fake_home, project, url, token, "say hi")
            assert first.returncode == 0, first.stderr[-2000:]
            before = len(_posts(captures, "/v1/messages"))
            second = _claude(fake_home, project, url, token, "what is in this folder")
            assert second.returncode == 0, second.stderr[-2000:]
            prompt, reprocessed = _new_conversation_cost(captures, before)
            before = len(_posts(captures, "/v1/messages"))
            again = _claude(fake_home, project, url, token, "say it again", "--continue")
            assert again.returncode == 0, again.stderr[-2000:]
            continued = _posts(captures, "/v1/messages")[before:]
            results[mode] = {
                "prompt": prompt,
                "reprocessed": reprocessed,
                "continued_reuse": _reuse(continued[0]),  # the turn's first request (see above)
                "answers": [first.stdout.strip(), second.stdout.strip(), again.stdout.strip()],
                "requests": [
                    (c.cache.prompt, c.cache.cached) for c in _posts(captures, "/v1/messages") if c.cache
                ],
            }
    record_property("stabiliser", json.dumps(results))
    words = 16  # "what is in this folder" is a handful of tokens on the tiny model's byte-level vocabulary
    assert results["on"]["reprocessed"] <= words + 64, results
    assert results["off"]["reprocessed"] > 1000, results  # the environment block, re-processed
    assert results["on"]["continued_reuse"] >= 0.99, results
    assert results["off"]["continued_reuse"] >= 0.99, results
    assert results["on"]["answers"] == results["off"]["answers"]


def _codex(
    codex: Path, home: Path, project: Path, base_url: str, token: str, *args: str
) -> subprocess.CompletedProcess[str]:
    codex_home = home / ".codex"
    codex_home.mkdir(exist_ok=True)
    (codex_home / "config.toml").write_text(
        'model = "tiny"\nmodel_provider = "kvswitch"\n\n'
        '[model_providers.kvswitch]\nname = "KV Switch gateway"\n'
        f'base_url = "{base_url}"\nenv_key = "KVSWITCH_GATEWAY_TOKEN"\nwire_api = "responses"\n'
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        "LANG": "C.UTF-8",
        "KVSWITCH_GATEWAY_TOKEN": token,
    }
    return subprocess.run(
        [str(codex), "exec", "--skip-git-repo-check", *args],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("codex_version", CODEX_VERSIONS)
def test_codex_on_chat_completions_resumes_with_the_prefix_reused(
    fake_home: Path, tmp_path: Path, record_property: Any, codex_version: str
) -> None:
    codex = codex_binary(codex_version)
    captures: list[Capture] = []
    project = tmp_path / "project"
    project.mkdir()
    with (
        llama_server(tmp_path / "server", "-l", f"{eos_token_id()}+100") as server,
        Recorder(server.url, tmp_path / "captures", on_capture=captures.append) as recorder,
        gateway() as (gateway_url, token),
    ):
        _add("codexchat", recorder.url, "--protocol", "openai_chat", "--target", "codex")
        url = f"{gateway_url}/p/codexchat/v1"
        first = _codex(codex, fake_home, project, url, token, "say hi")
        assert first.returncode == 0, (first.stdout[-1000:], first.stderr[-3000:])
        second = _codex(codex, fake_home, project, url, token, "resume", "--last", "say more")
        assert second.returncode == 0, (second.stdout[-1000:], second.stderr[-3000:])
    posts = _posts(captures, "/v1/chat/completions")
    assert not _posts(captures, "/v1/responses")
    assert len(posts) >= 2, [c.path for c in captures]
    assert (posts[0].cache.prompt if posts[0].cache else 0) > 10_000  # Codex's whole prompt
    reuse = _reuse(posts[-1])
    record_property("codex_resumed", json.dumps({"reuse": reuse, "reading": str(posts[-1].cache)}))
    assert reuse >= 0.99


@pytest.mark.parametrize("codex_version", CODEX_VERSIONS)
def test_a_tool_round_trip_through_the_codex_bridge(
    fake_home: Path, tmp_path: Path, codex_version: str
) -> None:
    codex = codex_binary(codex_version)
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("kvswitch-bridge-e2e: the answer is 42\n")
    _ScriptedChat.requests = []
    _ScriptedChat.path_to_read = str(project / "notes.txt")
    _ScriptedChat.codex = True
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), _ScriptedChat)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    try:
        with gateway() as (gateway_url, token):
            _add("scripted", f"http://127.0.0.1:{upstream.server_port}", "--protocol", "openai_chat",
                 "--target", "codex")
            done = _codex(codex, fake_home, project, f"{gateway_url}/p/scripted/v1", token,
                          "show me notes.txt")
    finally:
        upstream.shutdown()
        _ScriptedChat.codex = False
    assert done.returncode == 0, (done.stdout[-1000:], done.stderr[-3000:])
    assert all(r["path"] == "/v1/chat/completions" for r in _ScriptedChat.requests)
    first, second = _ScriptedChat.requests[0]["body"], _ScriptedChat.requests[1]["body"]
    assert any(m["role"] == "user" and m["content"] == "show me notes.txt" for m in first["messages"])
    calls = second["messages"][-2]["tool_calls"]
    assert calls[0]["id"] == "call_read_1"
    assert calls[0]["function"]["name"] == "exec_command"
    tool = second["messages"][-1]
    assert tool["role"] == "tool"
    assert tool["tool_call_id"] == "call_read_1"
    assert "kvswitch-bridge-e2e: the answer is 42" in json.dumps(tool["content"])  # Codex ran the command
    assert "the file says 42" in done.stdout
