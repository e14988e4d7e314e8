"""vLLM 0.32.0's real log (``tests/fixtures/vllm-0.32.0``, made by ``scripts/capture_vllm_logs.py``).

The truth is ``requests.json``: vLLM's own ``/metrics`` deltas and ``usage`` per request of the capture.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from kvswitch.logs.model import LineKind
from kvswitch.logs.parsers import parsers_for, periodic_summaries
from kvswitch.logs.parsers.vllm import engine_stats, parse
from kvswitch.logs.scan import scan_file

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "vllm-0.32.0"
REPO = Path(__file__).resolve().parents[2]


def _lines() -> list[str]:
    return (FIXTURE / "serve.log").read_text(encoding="utf-8").splitlines()


def _truth() -> list[dict[str, Any]]:
    return list(json.loads((FIXTURE / "requests.json").read_text(encoding="utf-8")))


def test_every_engine_line_is_read_and_the_last_rate_is_vllms_own_ratio() -> None:
    stats = [s for line in _lines() if (s := engine_stats(line)) is not None]
    assert len(stats) >= len(_truth())
    hits = sum(float(r["metrics_delta"]["vllm:prefix_cache_hits_total"]) for r in _truth())
    queries = sum(float(r["metrics_delta"]["vllm:prefix_cache_queries_total"]) for r in _truth())
    last = next(s.prefix_hit_rate for s in reversed(stats) if s.prefix_hit_rate is not None)
    # the engine line's rate is hits / queries over the recent requests: here, every request captured
    assert abs(last - 100 * hits / queries) < 0.06, (last, hits, queries)


def test_the_truth_is_consistent_with_the_answers() -> None:
    truth = {r["step"]: r for r in _truth()}
    repeat = truth["repeat"]
    cached = repeat["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert cached == repeat["metrics_delta"]["vllm:prefix_cache_hits_total"] > 0
    changed = truth["first-block-changed"]["metrics_delta"]
    assert changed["vllm:prefix_cache_hits_total"] == 0


def test_engine_lines_are_coloured_by_rate_and_access_lines_by_status() -> None:
    engine = [line for line in _lines() if "Avg prompt throughput" in line]
    for line in engine:
        parsed = parse(line)
        assert parsed is not None
        assert parsed.kind == LineKind.TIMING
        assert not parsed.facts  # a rate over recent requests is never a per-request event
    access = next(line for line in _lines() if '"POST /v1/chat/completions HTTP/1.1" 200' in line)
    assert parse(access) is not None
    warning = next(line for line in _lines() if ") WARNING " in line)
    parsed = parse(warning)
    assert parsed is not None
    assert parsed.kind == LineKind.WARNING


def test_scan_finds_no_request_and_says_what_the_engine_lines_tell() -> None:
    assert list(scan_file(str(FIXTURE / "serve.log"), "vllm")) == []
    notes = periodic_summaries(_lines(), "vllm")
    assert len(notes) == 1
    assert "no per-request cache line" in notes[0]
    assert len(parsers_for("vllm")) == 2
    result = subprocess.run([sys.executable, "-m", "kvswitch", "log", "scan", str(FIXTURE / "serve.log")],
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(REPO / "app")})
    assert result.returncode == 0, result.stderr
    assert "No completed request was found" in result.stdout
    assert "engine stats lines" in result.stdout
