#!/usr/bin/env python3
"""Capture real llama-server logs, with the server's own per-request cache numbers as the truth.

Why: the log engine must recover, from the log alone, the numbers the server gives in its HTTP
answers. This runs the real llama-server (b11434) on the tiny model in one configuration after
another, sends it real Claude Code traffic (``claude -p``: a new conversation, a ``--continue`` turn,
a second conversation) and synthetic requests (cold, hit, miss, ``cache_prompt:false``,
``/v1/chat/completions``, ``/v1/messages``, streaming), all through a small recording reverse proxy.
The proxy serialises requests and notes, for each one, the log line count when it began
(``after_line``) and once the log settled after its answer (``until_line``); the truth
(``new_tokens``, ``cached_tokens``) comes from the answer's ``timings.prompt_n``/``cache_n`` or
Anthropic ``usage``, the final stream event included, never from the log.

Output per configuration: ``llama_server_<name>.log`` (stdout+stderr, local paths replaced by
stable ones) and ``llama_server_<name>.truth.json``.

usage: capture_llama_logs.py [--out DIR] [--only NAME ...] [--skip-claude]
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import pwd
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
HOME = Path(pwd.getpwuid(os.getuid()).pw_dir)
CACHE = HOME / ".cache" / "kvswitch"
CLAUDE = CACHE / "claude-code/2.1.332/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
CONTEXT = 32768
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailers", "upgrade", "content-length"}

#: name -> (extra llama-server flags, extra environment); the context is 32768 tokens per slot.
#: ``-np auto`` is absent: b11434 refuses it ('Error while handling argument "-np": stoi'); leaving
#: ``-np`` out is its automatic mode (4 slots, unified KV cache), which ``cc_default`` captures.
CONFIGS: dict[str, tuple[list[str], dict[str, str]]] = {
    "cc_default": ([], {}),
    "cc_prefix_ts": (["--log-timestamps", "--log-prefix"], {}),
    "cc_lv3": (["-lv", "3"], {}),
    "cc_lv4": (["-lv", "4"], {}),
    "cc_slots_debug": ([], {"LLAMA_SERVER_SLOTS_DEBUG": "1", "LLAMA_SERVER_SLOTS_N_DIFF": "16"}),
    "cc_jsonl": (["--log-jsonl"], {}),
    "cc_np1": (["-np", "1"], {}),
    "cc_np2": (["-np", "2", "-c", str(2 * CONTEXT)], {}),
    "cc_np4": (["-np", "4", "-c", str(4 * CONTEXT)], {}),
    "cc_cache_ram0": (["--cache-ram", "0"], {}),
    "cc_small_batch": (["-b", "256", "-ub", "128"], {}),
    "cc_verbose": (["-v"], {}),
}

#: configurations on the sliding-window variant of the tiny model (``make_tiny_model.py --swa``):
#: name -> the window in tokens. At ``-lv 4`` b11434 says when it forces a full re-processing.
SWA: dict[str, int] = {"swa_lv4": 64}
CONFIGS["swa_lv4"] = (["-lv", "4", "-np", "1"], {})

#: configurations whose log is large per request (``-v`` logs every request body): fewer requests, so
#: the capture stays small enough to commit; name -> (Claude Code runs, synthetic steps)
SMALLER: dict[str, tuple[int, tuple[str, ...]]] = {
    "cc_verbose": (1, ("completion_first", "completion_hit", "completion_miss", "anthropic_first",
                       "anthropic_stream_hit")),
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def line_count(path: Path) -> int:
    with path.open("rb") as handle:
        return handle.read().count(b"\n")


def settle(path: Path, quiet: float = 0.4, limit: float = 10.0) -> int:
    """Wait until the log stops growing (the server logs from a worker thread), then count lines."""
    deadline = time.monotonic() + limit
    size, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        now_size = path.stat().st_size
        if now_size != size:
            size, since = now_size, time.monotonic()
        elif time.monotonic() - since >= quiet:
            break
        time.sleep(0.05)
    return line_count(path)


def truth_from_answer(raw: bytes) -> tuple[int, int, str] | None:
    """(new_tokens, cached_tokens, source) from a JSON answer or an SSE stream (last numbers win)."""
    text = raw.decode("utf-8", errors="replace")
    payloads: list[Any] = []
    if text.lstrip().startswith("{"):
        with contextlib.suppress(ValueError):
            payloads.append(json.loads(text))
    else:
        for line in text.splitlines():
            if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]"):
                with contextlib.suppress(ValueError):
                    payloads.append(json.loads(line[5:]))
    found: tuple[int, int, str] | None = None
    anthropic: dict[str, int] = {}
    for payload in payloads:
        if not isinstance(payload, dict):
            continue
        timings = payload.get("timings")
        if isinstance(timings, dict) and "cache_n" in timings and "prompt_n" in timings:
            found = (int(timings["prompt_n"]), int(timings["cache_n"]), "timings")
        usage = payload.get("usage") or (payload.get("message") or {}).get("usage")
        if isinstance(usage, dict) and "cache_read_input_tokens" in usage | anthropic:
            anthropic.update({k: v for k, v in usage.items() if isinstance(v, int)})
    if found is None and "input_tokens" in anthropic:
        found = (anthropic["input_tokens"], anthropic.get("cache_read_input_tokens", 0), "usage")
    return found


def prompt_counters(port: int) -> tuple[int, int]:
    """(prompt tokens processed, prompt tokens cached) so far, from the server's ``/metrics``."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode("utf-8", errors="replace")
    conn.close()
    values = dict(line.split(" ", 1) for line in text.splitlines() if line.startswith("llamacpp:"))
    return int(float(values["llamacpp:prompt_tokens_total"])), int(
        float(values["llamacpp:prompt_tokens_cached_total"])
    )


class Recording:
    """What the proxy learnt: one entry per prompt-processing request, in order."""

    def __init__(self, log: Path):
        self.log = log
        self.requests: list[dict[str, Any]] = []
        self.label = "request"
        self.lock = threading.Lock()

    def name(self) -> str:
        taken = {r["name"] for r in self.requests}
        if self.label not in taken:
            return self.label
        n = 2
        while f"{self.label}_{n}" in taken:
            n += 1
        return f"{self.label}_{n}"


def make_proxy(upstream_port: int, recording: Recording) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP | {"host"}}
            path = self.path
            counts = self.command == "POST" and not path.split("?")[0].endswith(("count_tokens", "tokenize"))
            with recording.lock:  # one request at a time, so each has its own stretch of the log
                before = prompt_counters(upstream_port) if counts else (0, 0)
                after = settle(recording.log)
                conn = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=600)
                conn.request(self.command, path, body=body, headers=headers)
                answer = conn.getresponse()
                raw = answer.read()
                status, answer_headers = answer.status, answer.getheaders()
                conn.close()
                until = settle(recording.log)
                truth = truth_from_answer(raw) if counts and status == 200 else None
                if counts and status == 200:
                    now = prompt_counters(upstream_port)
                    counted = (now[0] - before[0], now[1] - before[1], "metrics")
                    if truth is None:
                        # b11434 sometimes drops an Anthropic stream's message_start (the usage)
                        truth = counted if counted[0] else None
                    elif truth[:2] != counted[:2]:
                        print(f"  {recording.label}: answer {truth} but /metrics {counted}", file=sys.stderr)
                if truth is not None:
                    recording.requests.append(
                        {
                            "name": recording.name(),
                            "endpoint": path.split("?")[0],
                            "stream": b"data:" in raw[:200],
                            "after_line": after,
                            "until_line": until,
                            "new_tokens": truth[0],
                            "cached_tokens": truth[1],
                            "truth_from": truth[2],
                        }
                    )
            self.send_response(status)
            for key, value in answer_headers:
                if key.lower() not in HOP_BY_HOP:
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = _forward  # noqa: N815

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.1,), daemon=True).start()
    return server


@contextlib.contextmanager
def llama_server(
    binary: Path, model: Path, log: Path, flags: list[str], env: dict[str, str]
) -> Iterator[int]:
    port = free_port()
    argv = [str(binary), "-m", str(model), "-a", "tiny", "--host", "127.0.0.1", "--port", str(port)]
    argv += ["--metrics", *([] if "-c" in flags else ["-c", str(CONTEXT)]), *flags]
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **env})
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"llama-server {' '.join(flags)} exited with {proc.returncode}; see {log}")
            with contextlib.suppress(OSError):
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
                conn.request("GET", "/health")
                if conn.getresponse().status == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("llama-server did not become healthy within 60 s")
            time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def document(seed: str, lines: int) -> str:
    """Deterministic prose-like text; the tiny model's byte tokenizer makes ~1 token per character."""
    words = ("the", "cache", "slot", "prompt", "token", "server", "reuse", "prefix", "batch", "answer")
    out = [f"ts=2026-11-29T08:00:00Z {seed}"]
    for i in range(lines):
        out.append(" ".join(words[(i * 7 + j * 3) % len(words)] for j in range(9)) + f" #{i}")
    return "\n".join(out) + "\n"


def post(proxy: int, path: str, payload: dict[str, Any]) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", proxy, timeout=600)
    conn.request("POST", path, body=json.dumps(payload), headers={"Content-Type": "application/json"})
    answer = conn.getresponse()
    answer.read()
    conn.close()
    if answer.status != 200:
        raise RuntimeError(f"{path} answered {answer.status}")


def follow_up(question: str) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": "ok"}, {"role": "user", "content": question}]


def synthetic(proxy: int, recording: Recording, only: tuple[str, ...] = ()) -> None:
    """Cold (several batches), hit, miss, no-cache, chat and Anthropic, plain and streaming."""
    first = document("completion", 110)  # ~6000 tokens: three default batches
    steps: list[tuple[str, str, dict[str, Any]]] = [
        ("completion_first", "/completion", {"prompt": first}),
        ("completion_hit", "/completion", {"prompt": first + "What did the server say?\n"}),
        ("completion_miss", "/completion", {"prompt": first.replace("08:00:00Z", "08:00:07Z")}),
        ("completion_nocache", "/completion", {"prompt": first, "cache_prompt": False}),
    ]
    chat = [{"role": "user", "content": document("chat", 40)}]
    steps += [
        ("chat_first", "/v1/chat/completions", {"messages": chat, "max_tokens": 8}),
        (
            "chat_stream_hit",
            "/v1/chat/completions",
            {
                "messages": [*chat, *follow_up("more")],
                "max_tokens": 8,
                "stream": True,
                "stream_options": {"include_usage": True},
            },
        ),
    ]
    messages = [{"role": "user", "content": document("anthropic", 40)}]
    steps += [
        ("anthropic_first", "/v1/messages", {"model": "tiny", "max_tokens": 8, "messages": messages}),
        (
            "anthropic_stream_hit",
            "/v1/messages",
            {
                "model": "tiny",
                "max_tokens": 8,
                "stream": True,
                "messages": [*messages, *follow_up("go")],
            },
        ),
    ]
    for name, path, payload in steps:
        if only and name not in only:
            continue
        recording.label = name
        if path == "/completion":
            payload.setdefault("n_predict", 8)
        payload.setdefault("temperature", 0)
        post(proxy, path, payload)


def claude_runs(claude: Path, proxy: int, work: Path, recording: Recording, count: int = 3) -> None:
    """A new conversation, a ``--continue`` turn and a second conversation, one turn each."""
    home, project = work / "home", work / "project"
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    project.mkdir(exist_ok=True)
    env_block = {
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{proxy}",
        "ANTHROPIC_AUTH_TOKEN": "dummy",
        "ANTHROPIC_MODEL": "tiny",
        "ANTHROPIC_SMALL_FAST_MODEL": "tiny",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "16",
    }
    (home / ".claude" / "settings.json").write_text(json.dumps({"env": env_block}), encoding="utf-8")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8", **env_block}
    runs = [
        ("claude_new", ["-p", "say hi"]),
        ("claude_continue", ["--continue", "-p", "and again"]),
        ("claude_other", ["-p", "list the files here"]),
    ]
    for label, args in runs[:count]:
        recording.label = label
        try:
            subprocess.run(
                [str(claude), *args, "--max-turns", "1"],
                cwd=project,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=300,
                check=False,
            )
        except subprocess.TimeoutExpired:
            print(f"  {label}: claude timed out after 300 s", file=sys.stderr)


def scrub(log: Path, replacements: dict[str, str]) -> None:
    """Replace machine-specific paths (line count unchanged)."""
    text = log.read_bytes().decode("utf-8", errors="replace")
    for old, new in replacements.items():
        text = text.replace(old, new)
    log.write_text(text, encoding="utf-8")


def swa_model(window: int) -> Path:
    """The sliding-window tiny model, made once beside the plain one."""
    model = CACHE / "models" / f"kvswitch-tiny-swa{window}-{CONTEXT}.gguf"
    if not model.is_file():
        subprocess.run([sys.executable, str(REPO / "scripts" / "make_tiny_model.py"), str(model),
                        "--context", str(CONTEXT), "--swa", str(window)], check=True, capture_output=True)
    return model


def capture(name: str, out: Path, binary: Path, model: Path, claude: Path | None) -> dict[str, Any]:
    flags, env = CONFIGS[name]
    if name in SWA:
        model = swa_model(SWA[name])
    with tempfile.TemporaryDirectory(prefix=f"capture-{name}-") as tmp:
        work = Path(tmp)
        log = work / "server.log"
        recording = Recording(log)
        with llama_server(binary, model, log, flags, env) as port:
            proxy = make_proxy(port, recording)
            try:
                runs, steps = SMALLER.get(name, (3, ()))
                if claude is not None:
                    claude_runs(claude, proxy.server_address[1], work, recording, runs)
                synthetic(proxy.server_address[1], recording, steps)
            finally:
                proxy.shutdown()
                proxy.server_close()
        scrub(log, {str(model): f"/models/{model.name}", str(work): "/tmp/capture", str(HOME): "/home/user"})
        target = out / f"llama_server_{name}.log"
        target.write_bytes(log.read_bytes())
    shown = " ".join([*(f"{k}={v}" for k, v in env.items()), "llama-server --metrics", *flags])
    truth = {"log": target.name, "server": "llama.cpp b11434", "flags": shown, "requests": recording.requests}
    if name in SWA:
        truth["model"] = f"tiny, sliding window of {SWA[name]} tokens (make_tiny_model.py --swa {SWA[name]})"
    target.with_suffix(".truth.json").write_text(json.dumps(truth, indent=1) + "\n", encoding="utf-8")
    return truth


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "tests" / "fixtures" / "llama.cpp-b11434")
    parser.add_argument("--only", nargs="*", choices=sorted(CONFIGS), help="configurations to capture")
    parser.add_argument("--skip-claude", action="store_true", help="synthetic requests only")
    args = parser.parse_args(argv)
    default_binary = CACHE / "llama-server" / "11434" / "llama-server"
    binary = Path(os.environ.get("KVSWITCH_LLAMA_SERVER") or default_binary)
    model = CACHE / "models" / f"kvswitch-tiny-{CONTEXT}.gguf"
    claude = None if args.skip_claude else Path(os.environ.get("KVSWITCH_CLAUDE_BIN") or CLAUDE)
    for needed in (binary, model, *([claude] if claude else [])):
        if not needed.is_file():
            print(f"capture_llama_logs: missing {needed} (see scripts/build_llama_server.sh, "
                  "scripts/make_tiny_model.py, scripts/install_claude_code.sh)", file=sys.stderr)
            return 2
    args.out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name in args.only or CONFIGS:
        started = time.monotonic()
        try:
            truth = capture(name, args.out, binary, model, claude)
        except (RuntimeError, OSError) as exc:
            print(f"{name}: FAILED: {exc}", file=sys.stderr)
            failed += 1
            continue
        size = (args.out / truth["log"]).stat().st_size
        took = time.monotonic() - started
        print(f"{name}: {len(truth['requests'])} requests, {size / 1024:.0f} KB, {took:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
