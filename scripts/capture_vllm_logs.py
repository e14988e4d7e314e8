#!/usr/bin/env python3
"""Capture a real vLLM's log output (stdout+stderr, default verbosity) with the server's own numbers.

Starts ``vllm serve`` from the venv of ``scripts/install_vllm.sh`` on the tiny model of
``scripts/make_tiny_model.py --hf``, sends a fixed sequence of requests (a cold prompt, the same prompt
again, a prompt whose first block changed, a Messages request), waits for the periodic engine line after
each, and writes into OUT_DIR:
- ``serve.log``: everything the server printed (the home directory replaced by ``~``);
- ``requests.json``: per request, the ``/metrics`` deltas (``vllm:prefix_cache_queries/hits``, external
  ones) and the answer's ``usage`` -- the truth the log tests compare the parser against.

With ``--metrics`` it writes only the raw ``/metrics`` pages instead (the live panel's metric-delta
tests read them): ``metrics/NN-<step>.prom`` scraped before the first request and after every step,
and ``metrics/steps.json`` (per step: the page after it, the answers' ``usage``, how many requests).
The steps are the four above plus ``two-at-once`` (two different prompts sent together, then one
scrape: the case where the counters cannot be split per request). The log goes to ``OUT_DIR/metrics.log``
and is not a fixture.

usage: capture_vllm_logs.py OUT_DIR [--python VENV_PYTHON] [--model DIR] [--stats-interval S] [--metrics]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("KVSWITCH_CACHE") or Path.home() / ".cache" / "kvswitch")
COUNTERS = (
    "vllm:prefix_cache_queries_total",
    "vllm:prefix_cache_hits_total",
    "vllm:external_prefix_cache_queries_total",
    "vllm:external_prefix_cache_hits_total",
    "vllm:prompt_tokens_total",
)
ENGINE_LINE = "Avg prompt throughput"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _http(url: str, body: dict[str, Any] | None = None, timeout: float = 300) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:  # noqa: S310 - loopback only
            raw = answer.read().decode()
            status = answer.status
    except urllib.error.HTTPError as exc:
        raw, status = exc.read().decode(), exc.code
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw


def _counters(url: str) -> dict[str, float]:
    _, text = _http(f"{url}/metrics")
    values = dict.fromkeys(COUNTERS, 0.0)
    for line in str(text).splitlines():
        name = re.split(r"[{ ]", line, maxsplit=1)[0]
        if name in values:
            values[name] += float(line.rsplit(" ", 1)[1])
    return values


def _prompt(opening: str, blocks: int = 40) -> str:
    words = " ".join(
        f"{opening} item {i} of the fixed capture text keeps the prefix long" for i in range(blocks)
    )
    return f"{words}\nReply with one word."


def _wait_for_engine_lines(log: Path, seen: int, timeout: float) -> int:
    """Until the log holds one more engine line than ``seen`` (the line comes every stats interval)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        count = log.read_text(errors="replace").count(ENGINE_LINE)
        if count > seen:
            return count
        time.sleep(0.5)
    return seen


def _page(url: str) -> str:
    return str(_http(f"{url}/metrics")[1]).replace(str(Path.home()), "~")


def _both_at_once(route: str, bodies: list[dict[str, Any]]) -> list[tuple[int, Any]]:
    """Send ``bodies`` together (threads), so they finish between the same two scrapes."""
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    with ThreadPoolExecutor(len(bodies)) as pool:
        return list(pool.map(lambda body: _http(route, body), bodies))


def capture_metrics(out: Path, url: str) -> None:
    """The raw pages after every step (``--metrics``)."""
    folder = out / "metrics"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "00-start.prom").write_text(_page(url), encoding="utf-8")
    chat = f"{url}/v1/chat/completions"

    def body(text: str) -> dict[str, Any]:
        return {"model": "tiny", "max_tokens": 4, "messages": [{"role": "user", "content": text}]}

    steps: list[tuple[str, str, list[str]]] = [
        ("cold", chat, [_prompt("alpha")]),
        ("repeat", chat, [_prompt("alpha")]),
        ("first-block-changed", chat, [_prompt("omega")]),
        ("messages", f"{url}/v1/messages", [_prompt("alpha")]),
        ("two-at-once", chat, [_prompt("alpha"), _prompt("gamma")]),
    ]
    records = []
    for number, (name, route, texts) in enumerate(steps, start=1):
        answers = _both_at_once(route, [body(text) for text in texts])
        page = f"{number:02d}-{name}.prom"
        (folder / page).write_text(_page(url), encoding="utf-8")
        records.append({
            "step": name, "route": route.removeprefix(url), "requests": len(texts), "page": page,
            "status": [status for status, _ in answers],
            "usage": [answer.get("usage") if isinstance(answer, dict) else None for _, answer in answers],
        })
    (folder / "steps.json").write_text(json.dumps(records, indent=2) + "\n", encoding="utf-8")


def capture(out: Path, python: Path, model: Path, interval: float, metrics_only: bool = False) -> int:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    out.mkdir(parents=True, exist_ok=True)
    log = out / ("metrics.log" if metrics_only else "serve.log")
    env = dict(
        os.environ,
        VLLM_TARGET_DEVICE="cpu",
        VLLM_CPU_KVCACHE_SPACE="1",
        VLLM_CPU_OMP_THREADS_BIND="nobind",
        OMP_NUM_THREADS="2",
        HF_HUB_OFFLINE="1",
        VLLM_NO_USAGE_STATS="1",
        DO_NOT_TRACK="1",
        VLLM_LOG_STATS_INTERVAL=str(interval),
        PYTHONUNBUFFERED="1",
    )
    argv = [
        str(python.parent / "vllm"),
        "serve",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--served-model-name",
        "tiny",
        "--load-format",
        "dummy",
        "--enforce-eager",
        "--max-model-len",
        "32768",
        "--block-size",
        "32",
        "--enable-prompt-tokens-details",
        "--enable-prefix-caching",
        "--override-generation-config",
        '{"max_new_tokens": 8}',
        "--enable-auto-tool-choice",
        "--tool-call-parser",
        "hermes",
    ]
    with log.open("wb") as sink:
        proc = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    records: list[dict[str, Any]] = []
    try:
        deadline = time.monotonic() + 600
        while _http_ok(f"{url}/health") is False:
            if proc.poll() is not None or time.monotonic() > deadline:
                print(f"capture_vllm_logs: vllm serve did not start; see {log}", file=sys.stderr)
                return 1
            time.sleep(1)
        if metrics_only:
            capture_metrics(out, url)
            return 0
        seen = 0
        chat = f"{url}/v1/chat/completions"
        steps = (
            ("cold", chat, _prompt("alpha")),
            ("repeat", chat, _prompt("alpha")),
            ("first-block-changed", chat, _prompt("omega")),
            ("messages", f"{url}/v1/messages", _prompt("alpha")),
        )
        for name, route, text in steps:
            before = _counters(url)
            body: dict[str, Any] = {
                "model": "tiny",
                "max_tokens": 4,
                "messages": [{"role": "user", "content": text}],
            }
            status, answer = _http(route, body)
            after = _counters(url)
            seen = _wait_for_engine_lines(log, seen, interval * 3 + 30)
            usage = answer.get("usage") if isinstance(answer, dict) else None
            records.append(
                {
                    "step": name,
                    "route": route.removeprefix(url),
                    "status": status,
                    "usage": usage,
                    "metrics_delta": {k: after[k] - before[k] for k in COUNTERS},
                }
            )
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    home = str(Path.home())
    log.write_text(log.read_text(errors="replace").replace(home, "~"), encoding="utf-8")
    (out / "requests.json").write_text(json.dumps(records, indent=2) + "\n", encoding="utf-8")
    print(out)
    return 0


def _http_ok(url: str) -> bool:
    try:
        return _http(url, timeout=2)[0] == 200
    except OSError:
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument(
        "--python",
        type=Path,
        default=Path(os.environ.get("KVSWITCH_VLLM_PYTHON") or CACHE / "vllm" / "0.32.0" / "bin" / "python"),
    )
    parser.add_argument("--model", type=Path, default=CACHE / "models" / "kvswitch-tiny-hf-32768")
    parser.add_argument(
        "--stats-interval", type=float, default=10.0, help="VLLM_LOG_STATS_INTERVAL (vLLM's default: 10 s)"
    )
    parser.add_argument("--metrics", action="store_true",
                        help="write only the raw /metrics pages after each step (OUT_DIR/metrics/)")
    args = parser.parse_args(argv)
    if not (args.python.parent / "vllm").is_file():
        print(
            f"capture_vllm_logs: no vLLM venv at {args.python} (run scripts/install_vllm.sh)", file=sys.stderr
        )
        return 3
    if not (args.model / "config.json").is_file():
        subprocess.run(
            [str(args.python), str(REPO / "scripts" / "make_tiny_model.py"), str(args.model), "--hf"],
            check=True,
        )
    return capture(args.out, args.python, args.model, args.stats_interval, args.metrics)


if __name__ == "__main__":
    sys.exit(main())
