"""The throw-away demo data the screenshots show: a llama-server log, profiles, verdicts, usage.

The log is a real capture (``tests/ui/data/llama_server_demo.log``), re-stamped as a server that keeps
running; the profiles are the kinds people keep (a local server, vendors, a team gateway); the verify
verdicts and gateway usage rows are written through the app's own stores, as ``kvswitch verify`` and the
gateway record them.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEMO_LOG = REPO / "tests" / "ui" / "data" / "llama_server_demo.log"

HEADER = [
    "0.00.002.197 I srv  llama_server: initializing ...",
    "0.00.008.791 I srv    load_model: loading model '/models/qwen3-coder-30b-a3b-q4_k_m.gguf'",
    "0.00.021.840 I srv    load_model: initializing, n_slots = 1, n_ctx_slot = 65536, kv_unified = 'false'",
    "0.00.025.413 I srv  llama_server: model loaded",
    "0.00.025.481 I srv  llama_server: listening on http://127.0.0.1:8080",
]
SAFE_ENV = {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CODE_ENABLE_TELEMETRY": "0"}
LOCAL, STOCK, LM_STUDIO, DEAD, WRONG_PATH = ("Local llama.cpp", "llama.cpp, stock Claude env", "LM Studio",
                                             "Old llama.cpp box", "llama.cpp, wrong path")


def demo_blocks() -> tuple[list[str], list[str], list[str]]:
    """(cold miss, hit, miss) request blocks in llama-server's own format."""
    if DEMO_LOG.is_file():
        lines = DEMO_LOG.read_text().splitlines()
        return lines[8:15], lines[15:22], lines[22:29]
    similar = "LCP similarity, f_sim_best = 0.985 (> 0.100 thold), f_keep = 0.995"
    return (_generated("LRU, t_last = -1", 1536, 79.11), _generated(similar, 23, 23.3),
            _generated("LRU, t_last = 2656294876", 1515, 79.89))


def _generated(selected: str, tokens: int, ms: float) -> list[str]:
    return [
        f"0.00.250.178 I slot get_availabl: id  0 | task -1 | selected slot by {selected}",
        "0.00.250.284 I slot launch_slot_: id  0 | task 0 | processing task, is_child = 0",
        f"0.00.339.940 I slot print_timing: id  0 | task 0 | prompt eval time =  {ms:9.2f} ms / "
        f"{tokens:5d} tokens (    0.05 ms per token, 19416.98 tokens per second)",
        "0.00.340.017 I slot print_timing: id  0 | task 0 |        eval time =      10.50 ms /     8 tokens "
        "(    1.50 ms per token,   666.60 tokens per second)",
        "0.00.340.042 I slot print_timing: id  0 | task 0 |       total time =      89.61 ms /  1544 tokens",
        "0.00.340.067 I slot print_timing: id  0 | task 0 |    graphs reused =          7",
        "0.00.340.217 I slot      release: id  0 | task 0 | stop processing: n_tokens = 1543, truncated = 0",
    ]


class Session:
    """Writes request blocks with increasing task ids and clock, like a server that keeps running."""

    def __init__(self, path: Path):
        self.path = path
        self.task = 0
        self.clock_ms = 30_000

    def write(self, lines: list[str]) -> None:
        with self.path.open("a") as handle:
            handle.write("\n".join(lines) + "\n")

    def request(self, block: list[str]) -> None:
        self.task += 3
        out = []
        for line in block:
            self.clock_ms += 7
            ms = self.clock_ms
            stamp = f"0.{ms // 60000:02d}.{ms // 1000 % 60:03d}.{ms % 1000:03d}"
            line = re.sub(r"^\d+\.\d+\.\d+\.\d+", stamp, line)
            out.append(re.sub(r"\| task (\d+) \|", f"| task {self.task} |", line))
        self.write(out)


def add_profiles(store: Any, llama_url: str | None, server_log: Path, dead_url: str) -> None:
    from kvswitch.core.models import Profile  # noqa: PLC0415
    from kvswitch.servers.preset_data import preset_profile_data  # noqa: PLC0415

    local = llama_url or "http://127.0.0.1:8080"
    store.add(Profile(name=LOCAL, kind="llama.cpp", base_url=local, model="qwen3-coder", env=SAFE_ENV,
                      targets=["claude", "codex", "bash"], log={"kind": "file", "path": str(server_log)}))
    store.add(Profile(name="Anthropic", kind="anthropic", base_url="https://api.anthropic.com",
                      api_key="sk-ant-api03-demo-0000000000000000000000"))
    store.add(Profile(name=LM_STUDIO, kind="lm-studio", base_url="http://127.0.0.1:1234",
                      model="qwen3-coder-30b", env={"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}))
    deepseek = preset_profile_data("DeepSeek", "deepseek", None, False, False)
    store.add(Profile.model_validate({**deepseek, "api_key": "sk-demo-2222222222222222"}))
    store.add(Profile(name="Team gateway", kind="openai-compatible", base_url="https://llm.example.com/v1",
                      api_key="sk-team-demo-1111111111111111", model="gpt-5-codex", targets=["codex"]))
    store.add(Profile(name=STOCK, kind="llama.cpp", base_url=local, model="qwen3-coder", targets=["claude"]))
    store.add(Profile(name=DEAD, kind="llama.cpp", base_url=dead_url, model="qwen3-coder", env=SAFE_ENV,
                      targets=["claude"]))
    store.add(Profile(name=WRONG_PATH, kind="openai-compatible", base_url=local + "/no/such/path",
                      model="qwen3-coder", env=SAFE_ENV, targets=["claude"]))


def remember_verdicts(paths: Any) -> None:
    """Verdicts for two demo profiles' cards, as ``kvswitch verify`` records them."""
    from kvswitch.verify.history import HistoryEntry, VerifyHistory  # noqa: PLC0415

    history = VerifyHistory(paths.data_dir / "verify-history")
    now = dt.datetime.now(dt.UTC)
    for hours, profile, verdict, reuse in ((50, LOCAL, "MISS", 0.02), (26, LOCAL, "PARTIAL", 0.61),
                                           (0.2, LOCAL, "HIT", 0.99), (26, STOCK, "MISS", 0.0)):
        when = (now - dt.timedelta(hours=hours)).isoformat(timespec="seconds")
        history.append(HistoryEntry(time=when, profile=profile, check="synthetic", verdict=verdict,
                                    reuse_ratio=reuse))


def _attribution_opening(earlier: str, prompt: int, cached: int, reusable: int) -> dict[str, Any]:
    """The evidence the gateway records for a new conversation whose attribution block differs."""
    return {"prompt": prompt, "cached": cached, "reusable": reusable,
            "reference": {"session": earlier, "agent": None, "same_session": False, "age_s": 3.9,
                          "prompt": 15_173, "cached": 14_944},
            "part": "system[0]", "kind": "system", "offset": 0, "offset_in_part": 0, "precision": 256,
            "looks_like": "attribution_block",
            "attribution": {"now": "cc_version=2.1.332.6c6; cc_entrypoint=sdk-cli;",
                            "before": "cc_version=2.1.332.0b8; cc_entrypoint=sdk-cli;", "differs_at": 19,
                            "fingerprint": {"now": "6c6", "before": "0b8"}},
            "fix": {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"},
            "excerpt": "x-anthropic-billing-header: cc_version=2.1.332.6"}


def record_usage(paths: Any) -> None:
    """A week of gateway traffic over two profiles, as the gateway records each request."""
    import time  # noqa: PLC0415

    from kvswitch.gateway.control import usage_db  # noqa: PLC0415
    from kvswitch.usage.schema import UsageRow  # noqa: PLC0415
    from kvswitch.usage.store import UsageStore  # noqa: PLC0415

    store = UsageStore(usage_db(paths))
    now = time.time()
    try:
        for day in range(7):
            session = f"c0ffee{day:02d}-4b1d-9a3e"
            for n in range(6 + day % 3 * 4):
                # one conversation a day; day 2's opens on a profile with Claude Code's attribution block on:
                # its first request shares the system prompt and tools with the day before, yet the block
                # differs (as the gateway recorded it for 2.1.332 on b11434, tests/e2e/test_e2e_live_cache.py)
                broken = day == 2 and n == 0
                cold = n == 0 and not broken
                cached = 48 if broken else 0 if cold else 14_000 + 37 * n
                reusable = 9_222 if broken else 0 if cold else 14_000 + 37 * n
                verdict = "MISS" if broken else "COLD" if cold else "HIT"
                opening = _attribution_opening(f"c0ffee{day + 1:02d}-4b1d", 14_200, cached, reusable)
                detail = json.dumps(opening) if broken else None
                store.add(UsageRow(time=now - day * 86400 - n * 300, client="claude", profile=LOCAL,
                                   upstream="http://127.0.0.1:8080", model="qwen3-coder", status=200,
                                   input_tokens=14_200 + 40 * n, cached_tokens=cached, output_tokens=180 + n,
                                   ttft_ms=900.0 if n == 0 else 140.0, duration_ms=2400.0,
                                   client_name="claude-code", client_version="2.1.332", session=session,
                                   session_source="header", reusable_tokens=reusable, verdict=verdict,
                                   reason="prefix_changed" if broken else "cold" if cold else None,
                                   reason_detail=detail))
            store.add(UsageRow(time=now - day * 86400 - 7200, client="codex", profile="DeepSeek",
                               upstream="https://api.deepseek.com/anthropic", model="deepseek-chat",
                               status=200,
                               input_tokens=9_800, cached_tokens=8_960, output_tokens=420, ttft_ms=610.0,
                               duration_ms=3100.0, cost=0.0031, client_name="codex", session=f"codex-{day}",
                               session_source="header", reusable_tokens=9_000, verdict="PARTIAL",
                               reason="unknown"))
    finally:
        store.close()
