"""Accuracy against the truth: every captured real log, and realistic lines of the other eras/servers.

The truth files come from the server's own HTTP answers (timings.prompt_n / cache_n), never from the
log, so these tests prove the log alone recovers the real numbers request by request.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
from log_samples import ALL_SAMPLES, Sample

from kvswitch.cli import main
from kvswitch.logs import CacheEvent, LogAnalyzer, fastscan
from kvswitch.logs.scan import scan_file

_HERE = Path(__file__).resolve()
FIXTURES = _HERE.parents[1] / "fixtures"
FIXTURE_LOGS = sorted(FIXTURES.glob("*/*.log"))
CLI_KEYS = ("line", "task", "slot", "prompt_tokens", "cached_tokens", "new_tokens", "prompt_ms", "verdict")
TRUTH_LOGS = [log for log in FIXTURE_LOGS if log.with_suffix(".truth.json").is_file()]
#: every way the engine reads a log: the live path (with and without a kind), the whole-file scan with the
#: native scanner and without it (what KVSWITCH_NATIVE_SCAN=0 gives), and ``kvswitch log scan --jsonl``
PATHS = ("live", "live_llama", "scan", "scan_llama", "scan_python", "jsonl_native", "jsonl_python")


def analyze_lines(lines: list[str], kind: str | None = None) -> list[CacheEvent]:
    analyzer = LogAnalyzer(kind)
    events: list[CacheEvent] = []
    for number, line in enumerate(lines, 1):
        events.extend(analyzer.feed(line, number).events)
    events.extend(analyzer.flush())
    return events


def _check_against_truth(events: list[CacheEvent], truth: dict) -> None:
    requests = truth["requests"]
    assert len(events) == len(requests), [e.to_json() for e in events]
    for event, expected in zip(events, requests, strict=True):
        where = f"{truth['log']} {expected['name']}"
        wanted = (expected["new_tokens"], expected["cached_tokens"])
        assert (event.new_tokens, event.cached_tokens) == wanted, where
        assert expected["after_line"] < event.last_line <= expected["until_line"], where
        assert event.first_line <= event.last_line
        assert event.prompt_tokens == event.new_tokens + event.cached_tokens


@pytest.mark.parametrize("log", TRUTH_LOGS, ids=[log.stem for log in TRUTH_LOGS])
def test_live_path_matches_truth(log: Path) -> None:
    truth = json.loads(log.with_suffix(".truth.json").read_text(encoding="utf-8"))
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    _check_against_truth(analyze_lines(lines), truth)
    _check_against_truth(analyze_lines(lines, "llama.cpp"), truth)


@pytest.mark.parametrize("log", TRUTH_LOGS, ids=[log.stem for log in TRUTH_LOGS])
def test_fast_scan_matches_truth(log: Path) -> None:
    truth = json.loads(log.with_suffix(".truth.json").read_text(encoding="utf-8"))
    _check_against_truth(list(scan_file(log)), truth)
    _check_against_truth(list(scan_file(log, "llama.cpp")), truth)


def test_similarity_is_not_taken_for_a_hit() -> None:
    """``cache_prompt: false`` shows f_sim_best = 1.000 yet re-processes everything: it must be a miss."""
    log = FIXTURES / "llama.cpp-b11434" / "llama_server_np1_default.log"  # type: ignore[operator]
    events = {e.task: e for e in scan_file(log)}
    nocache = events[22]
    assert nocache.verdict == "miss"
    assert nocache.cached_tokens == 0
    assert "cache_prompt" in (nocache.reason or "")
    restored = events[20]  # chosen by LRU, restored from the host-RAM prompt cache
    assert restored.verdict == "hit"
    assert "prompt cache" in (restored.reason or "")


@pytest.mark.parametrize("sample", ALL_SAMPLES, ids=[s.name for s in ALL_SAMPLES])
def test_other_eras_and_servers(sample: Sample) -> None:
    events = analyze_lines(sample.text.splitlines(), sample.kind)
    assert [(e.new_tokens, e.cached_tokens) for e in events] == sample.expected


@pytest.mark.parametrize("sample", ALL_SAMPLES, ids=[s.name for s in ALL_SAMPLES])
def test_scan_file_agrees_with_live_path(sample: Sample, tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    path.write_text(sample.text, encoding="utf-8")
    live = analyze_lines(sample.text.splitlines(), sample.kind)
    scanned = list(scan_file(path, sample.kind))
    assert [e.to_json() for e in scanned] == [e.to_json() for e in live]


@pytest.mark.parametrize("log", FIXTURE_LOGS, ids=[log.stem for log in FIXTURE_LOGS])
def test_fast_and_live_paths_agree_on_real_logs(log: Path) -> None:
    live = analyze_lines(log.read_text(encoding="utf-8", errors="replace").splitlines())
    fast = list(scan_file(log))

    def numbers(event: CacheEvent) -> dict:
        data = event.to_json()
        data.pop("reason")  # -lv 4 srv-level lines name a reason only the live path reads
        return data

    assert [numbers(e) for e in fast] == [numbers(e) for e in live]


def test_event_fields_and_verdicts() -> None:
    events = analyze_lines(ALL_SAMPLES[0].text.splitlines())
    hit, miss = events
    assert hit.verdict == "hit"
    assert hit.reuse_ratio == pytest.approx(1536 / 1559)
    assert hit.slot == 0
    assert hit.task == 12
    assert hit.prompt_ms == pytest.approx(80.0)
    assert miss.verdict == "miss"
    assert "re-processing forced" in (miss.reason or "")
    data = hit.to_json()
    assert set(CLI_KEYS) <= set(data)
    assert json.loads(json.dumps(data)) == data


def test_partial_verdict_and_wall_clock() -> None:
    lmstudio = next(s for s in ALL_SAMPLES if s.name == "lmstudio_0_4_wrapped")
    events = analyze_lines(lmstudio.text.splitlines(), lmstudio.kind)
    assert events[0].verdict == "partial"  # 1474 of 1674 is 88%
    assert events[0].server == "lm-studio"
    assert events[0].timestamp == "2026-06-03T11:02:49"
    assert events[2].server == "lm-studio (mlx)"
    sglang = next(s for s in ALL_SAMPLES if s.name == "sglang_three_eras")
    sg_events = analyze_lines(sglang.text.splitlines())
    assert [e.verdict for e in sg_events] == ["miss", "hit", "partial"]
    assert sg_events[2].timestamp == "2026-01-10T10:00:00"


def _truth(log: Path) -> dict:
    return json.loads(log.with_suffix(".truth.json").read_text(encoding="utf-8"))


def _jsonl_rows(log: Path) -> list[tuple[int, int, int]]:
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    with contextlib.redirect_stdout(out):
        assert main(["log", "scan", str(log), "--jsonl"]) == 0
    out.flush()
    rows = [json.loads(line) for line in out.buffer.getvalue().decode().splitlines()]  # type: ignore[attr-defined]
    assert "summary" in rows[-1]
    return [(row["line"], row["new_tokens"], row["cached_tokens"]) for row in rows[:-1]]


@functools.cache
def _read(path: str, log: Path) -> tuple[tuple[int, int, int], ...]:
    """(last line, new tokens, cached tokens) of every event one reader finds in one log."""
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    python_only = mock.patch.object(fastscan, "native_scan", None)
    if path in ("live", "live_llama"):
        events = analyze_lines(lines, "llama.cpp" if path == "live_llama" else None)
    elif path in ("scan", "scan_llama"):
        events = list(scan_file(log, "llama.cpp" if path == "scan_llama" else None))
    elif path == "scan_python":
        with python_only:
            events = list(scan_file(log))
    else:
        with python_only if path == "jsonl_python" else contextlib.nullcontext():
            return tuple(_jsonl_rows(log))
    return tuple((e.last_line, e.new_tokens, e.cached_tokens) for e in events)


REQUEST_CASES = [
    pytest.param(path, log, index, id=f"{path}-{log.stem}-{request['name']}")
    for log in TRUTH_LOGS
    for index, request in enumerate(_truth(log)["requests"])
    for path in PATHS
]


@pytest.mark.parametrize(("path", "log"), [(p, log) for log in TRUTH_LOGS for p in PATHS],
                         ids=[f"{p}-{log.stem}" for log in TRUTH_LOGS for p in PATHS])
def test_every_reader_finds_one_event_per_request(path: str, log: Path) -> None:
    assert len(_read(path, log)) == len(_truth(log)["requests"]), _read(path, log)


@pytest.mark.parametrize(("path", "log", "index"), REQUEST_CASES)
def test_every_reader_matches_the_server_request_by_request(path: str, log: Path, index: int) -> None:
    expected = _truth(log)["requests"][index]
    events = _read(path, log)
    assert index < len(events), f"{path} found only {len(events)} events"
    line, new, cached = events[index]
    assert (new, cached) == (expected["new_tokens"], expected["cached_tokens"])
    assert expected["after_line"] < line <= expected["until_line"]


def test_native_scan_can_be_turned_off_in_a_real_process() -> None:
    """``KVSWITCH_NATIVE_SCAN=0`` in a real ``kvswitch log scan --jsonl`` gives the server's numbers too."""
    log = FIXTURES / "llama.cpp-b11434" / "llama_server_cc_lv4.log"
    app = _HERE.parents[2] / "app"
    env = {**os.environ, "PYTHONPATH": str(app), "KVSWITCH_NATIVE_SCAN": "0"}
    result = subprocess.run([sys.executable, "-m", "kvswitch", "log", "scan", str(log), "--jsonl"],
                            capture_output=True, text=True, env=env, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()][:-1]
    truth = _truth(log)["requests"]
    assert [(r["new_tokens"], r["cached_tokens"]) for r in rows] == [
        (t["new_tokens"], t["cached_tokens"]) for t in truth]


def test_a_cold_prompt_of_many_batches_caches_nothing() -> None:
    """At ``-lv 4`` b11434 restates ``cached n_tokens = K, memory_seq_rm [K, end)`` after every 2048-token
    batch; only the first statement is the cache decision (Claude Code's cold ~14k-token prompt)."""
    log = FIXTURES / "llama.cpp-b11434" / "llama_server_cc_lv4.log"
    text = log.read_text(encoding="utf-8")
    assert "cached n_tokens = 12288, memory_seq_rm [12288, end)" in text
    first = analyze_lines(text.splitlines())[0]
    assert (first.cached_tokens, first.verdict) == (0, "miss")
    assert first.new_tokens > 10000


def test_a_cache_cut_back_mid_request_counts_the_lower_statement() -> None:
    lines = [
        "slot update_slots: id  0 | task 5 | n_tokens = 1560, memory_seq_rm [1560, end)",
        "slot update_slots: id  0 | task 5 | failed to truncate tokens with position >= 1560 - clearing",
        "slot update_slots: id  0 | task 5 | n_tokens = 0, memory_seq_rm [0, end)",
        "slot print_timing: id  0 | task 5 | prompt eval time =     90.00 ms /  1700 tokens",
        "slot print_timing: id  0 | task 5 |        eval time =     10.00 ms /    10 tokens",
        "slot      release: id  0 | task 5 | stop processing: n_tokens = 1709, truncated = 0",
    ]
    (event,) = analyze_lines(lines)
    assert (event.new_tokens, event.cached_tokens) == (1700, 0)


def test_the_capture_script_takes_truth_from_the_servers_answers() -> None:
    """``scripts/capture_llama_logs.py`` reads the truth from real b11434 answers, streams included."""
    import importlib.util  # noqa: PLC0415 - the script is not a package module

    script = _HERE.parents[2] / "scripts" / "capture_llama_logs.py"
    spec = importlib.util.spec_from_file_location("capture_llama_logs", script)
    assert spec is not None
    assert spec.loader is not None
    capture = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(capture)
    responses = FIXTURES / "llama.cpp-b11434" / "responses"
    completion = json.loads((responses / "resp_completion_first.json").read_text(encoding="utf-8"))
    wanted = (completion["timings"]["prompt_n"], completion["timings"]["cache_n"], "timings")
    assert capture.truth_from_answer((responses / "resp_completion_first.json").read_bytes()) == wanted
    stream = (responses / "resp_anthropic_stream.json").read_bytes()
    assert capture.truth_from_answer(stream) == (1, 1563, "usage")  # message_start's usage
    assert capture.truth_from_answer(b"event: ping\ndata: {}\n\n") is None
