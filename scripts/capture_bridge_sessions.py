"""Record real Claude Code 2.1.332 sessions for the bridge tests (fixtures `claude-code-2.1.332/sessions`).

A scripted Anthropic Messages upstream on loopback answers every request at once (text "hi", or a
``Read`` tool call when the prompt asks to read a file, then text once the tool result comes back),
and writes each request body as Claude Code sent it. Sessions: ``continue`` (three turns, the second
and third with ``--continue``), ``tool`` (one turn with a Read round trip), ``other`` (a second new
conversation in the same project). Run: ``python scripts/capture_bridge_sessions.py CLAUDE_BIN OUT``.

``--codex CODEX_BIN OUT`` records a real Codex session the same way (fixtures ``codex-<version>``): a
scripted Responses upstream answers "hello" to ``codex exec "say hi"`` and then to
``codex exec resume --last "say more"`` (throwaway ``CODEX_HOME``, ``wire_api = "responses"``), and each
``POST /v1/responses`` body is written as ``resume_NN.json`` (the authorization header is not kept).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FILE_TEXT = "kvswitch-bridge-fixture: the answer is 42\n"


def _sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def _answer(blocks: list[dict[str, Any]], stop: str) -> bytes:
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "tiny",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 0},
            },
        }
    ]
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            events.append(
                {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}
            )
            events.append(
                {
                    "type": "content_block_delta",
                    "index": i,
                    "delta": {"type": "text_delta", "text": block["text"]},
                }
            )
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            events.append({"type": "content_block_start", "index": i, "content_block": start})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events.append({"type": "content_block_delta", "index": i, "delta": delta})
        events.append({"type": "content_block_stop", "index": i})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 1},
        }
    )
    events.append({"type": "message_stop"})
    return _sse(events)


class _Upstream(BaseHTTPRequestHandler):
    out: Path
    session = ""
    count = 0
    file_path = ""

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        type(self).count += 1
        name = f"{self.session}_{type(self).count:02d}.json"
        (self.out / name).write_text(
            json.dumps({"path": self.path, "body": body}, indent=1, ensure_ascii=False)
        )
        last = body["messages"][-1]
        content = (
            last["content"]
            if isinstance(last["content"], list)
            else [{"type": "text", "text": last["content"]}]
        )
        text = json.dumps(body["messages"])
        if any(b.get("type") == "tool_result" for b in content):
            payload = _answer([{"type": "text", "text": "the file says 42"}], "end_turn")
        elif "read the file" in text and body.get("tools"):
            call = {
                "type": "tool_use",
                "id": "toolu_fixture_1",
                "name": "Read",
                "input": {"file_path": self.file_path},
            }
            payload = _answer([call], "tool_use")
        else:
            payload = _answer([{"type": "text", "text": "hi"}], "end_turn")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


def _responses_answer(number: int) -> bytes:
    """The Responses stream Codex reads: created, one "hello" message, completed with usage."""
    response_id = f"resp_fixture_{number}"
    message = {"type": "message", "status": "completed", "id": f"msg_{number}", "role": "assistant",
               "content": [{"type": "output_text", "text": "hello", "annotations": []}]}
    usage = {"input_tokens": 1, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 1,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 2}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": response_id, "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": {**message, "content": []}},
        {"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
         "item_id": message["id"], "delta": "hello"},
        {"type": "response.output_item.done", "output_index": 0, "item": message},
        {"type": "response.completed",
         "response": {"id": response_id, "status": "completed", "output": [message], "usage": usage}},
    ]
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


class _ResponsesUpstream(BaseHTTPRequestHandler):
    out: Path
    count = 0

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        type(self).count += 1
        (self.out / f"resume_{type(self).count:02d}.json").write_text(
            json.dumps({"path": self.path, "body": body}, indent=1, ensure_ascii=False)
        )
        payload = _responses_answer(type(self).count)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


def capture_codex(codex: str, out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    _ResponsesUpstream.out = out
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ResponsesUpstream)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp) / "home", Path("/tmp/kvswitch-fixture-codex-project")
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True)
        project.mkdir(exist_ok=True)
        (codex_home / "config.toml").write_text(
            'model = "tiny"\nmodel_provider = "fixture"\n\n[model_providers.fixture]\nname = "fixture"\n'
            f'base_url = "http://127.0.0.1:{server.server_port}/v1"\nenv_key = "FIXTURE_KEY"\n'
            'wire_api = "responses"\n'
        )
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
               "CODEX_HOME": str(codex_home), "LANG": "C.UTF-8", "FIXTURE_KEY": "dummy"}
        for args in (["say hi"], ["resume", "--last", "say more"]):
            done = subprocess.run([codex, "exec", "--skip-git-repo-check", *args], cwd=project, env=env,
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=240)
            failed += done.returncode != 0
            print(args, done.returncode, done.stdout.strip()[:200], done.stderr.strip()[-300:])
    server.shutdown()
    return 1 if failed else 0


def main() -> int:
    if sys.argv[1] == "--codex":
        return capture_codex(sys.argv[2], Path(sys.argv[3]))
    claude, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    _Upstream.out = out
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp) / "home", Path("/tmp/kvswitch-fixture-project")
        home.mkdir()
        project.mkdir(exist_ok=True)
        (project / "notes.txt").write_text(FILE_TEXT)
        _Upstream.file_path = str(project / "notes.txt")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "LANG": "C.UTF-8",
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.server_port}",
            "ANTHROPIC_AUTH_TOKEN": "dummy",
            "ANTHROPIC_MODEL": "tiny",
            "ANTHROPIC_SMALL_FAST_MODEL": "tiny",
            "CLAUDE_CODE_ATTRIBUTION_HEADER": "0",
            "CLAUDE_CODE_MAX_CONTEXT_TOKENS": "32768",
        }
        runs = [
            ("continue", ["-p", "say hi"]),
            ("continue", ["-p", "--continue", "say it again"]),
            ("continue", ["-p", "--continue", "and once more"]),
            ("other", ["-p", "what is in this folder"]),
            ("tool", ["-p", "read the file notes.txt", "--allowedTools", "Read"]),
        ]
        for session, args in runs:
            if _Upstream.session != session:
                _Upstream.session, _Upstream.count = session, 0
            done = subprocess.run(
                [claude, *args],
                cwd=project,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=240,
            )
            print(session, args, done.returncode, done.stdout.strip()[:200], done.stderr.strip()[-300:])
    server.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
