"""A real llama-server, started by ``ProcessSource``: what its log says must equal what its HTTP says.

The server runs a tiny generated model (``scripts/make_tiny_model.py``). Its merged stdout+stderr are
read live through the same reader and analyzer the window uses, in several log styles (default
timestamps and level letters, plain, colours, JSONL, ``-lv 4``), and every request's cached and new
token counts are compared with the server's own ``timings.cache_n`` / ``timings.prompt_n``.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from kvswitch.logs import CacheEvent, LogAnalyzer
from kvswitch.logs.process import ProcessSource
from support.llama import llama_server_binary, tiny_model
from support.net import free_port

pytestmark = pytest.mark.real_server


PROMPT = "ts=2026-11-29T08:00:00Z " + " ".join(f"the item {i} is on the shelf." for i in range(60))


def _requests(url: str) -> list[tuple[int, int]]:
    """first, hit (longer), miss (changed start), identical again, cache_prompt false: (new, cached)."""
    bodies = [
        {"prompt": PROMPT, "n_predict": 4},
        {"prompt": PROMPT + " And what is next?", "n_predict": 1},
        {"prompt": PROMPT.replace("08:00", "09:30"), "n_predict": 4},
        {"prompt": PROMPT.replace("08:00", "09:30"), "n_predict": 4},
        {"prompt": PROMPT.replace("08:00", "09:30"), "n_predict": 1, "cache_prompt": False},
    ]
    answers = []
    with httpx.Client(base_url=url, timeout=60) as client:
        for body in bodies:
            timings = client.post("/completion", json={**body, "temperature": 0}).json()["timings"]
            answers.append((timings["prompt_n"], timings["cache_n"]))
    return answers


@pytest.mark.parametrize(
    "flags",
    [
        [],
        ["--no-log-prefix", "--no-log-timestamps"],
        ["--log-colors", "on"],
        ["--log-jsonl"],
        ["-lv", "4"],
    ],
    ids=["default", "plain", "colours", "jsonl", "trace"],
)
def test_live_log_matches_the_server_answers(flags: list[str], tmp_path: Path) -> None:
    binary = llama_server_binary()
    model = tiny_model(4096)
    port = free_port()
    source = ProcessSource([str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port),
                            "-c", "4096", "-np", "1", *flags], cwd=str(tmp_path))
    analyzer = LogAnalyzer("llama.cpp")
    events: list[CacheEvent] = []
    line_no = 0

    def pump() -> None:
        nonlocal line_no
        for line in source.read_lines():
            line_no += 1
            events.extend(analyzer.feed(line, line_no).events)

    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            pump()
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert source.running, source.status
            assert time.monotonic() < deadline, "llama-server did not become healthy"
            time.sleep(0.1)
        answers = _requests(url)
        deadline = time.monotonic() + 10
        while len(events) < len(answers) and time.monotonic() < deadline:
            pump()
            time.sleep(0.05)
    finally:
        source.stop()
    pump()
    events.extend(analyzer.flush())
    assert [(e.new_tokens, e.cached_tokens) for e in events] == answers
    assert events[1].verdict == "hit"
    assert events[4].verdict == "miss"  # the slot held the prompt, but caching was off for it
    assert not source.running
