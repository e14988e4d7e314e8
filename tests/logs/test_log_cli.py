"""``kvswitch log scan`` / ``kvswitch log tail`` as scripts use them: real process, real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from log_samples import ERA_D_TEXT

from kvswitch.cli import main

APP = Path(__file__).resolve().parents[2] / "app"
_HERE = Path(__file__).resolve()
DEFAULT_LOG = _HERE.parents[1] / "fixtures" / "llama.cpp-b11434" / "llama_server_np1_default.log"
CLI_KEYS = ("line", "task", "slot", "prompt_tokens", "cached_tokens", "new_tokens", "prompt_ms", "verdict")


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(APP)}
    return subprocess.run([sys.executable, "-m", "kvswitch", *args], capture_output=True, text=True,
                          env=env, timeout=60, check=False)


def test_scan_jsonl_is_one_object_per_request_then_a_summary() -> None:
    result = run_cli("log", "scan", str(DEFAULT_LOG), "--jsonl")
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    requests, summary = rows[:-1], rows[-1]
    truth = json.loads(DEFAULT_LOG.with_suffix(".truth.json").read_text())["requests"]  # type: ignore[union-attr]
    assert len(requests) == len(truth)
    for row, expected in zip(requests, truth, strict=True):
        assert set(CLI_KEYS) <= set(row)
        assert row["new_tokens"] == expected["new_tokens"]
        assert row["cached_tokens"] == expected["cached_tokens"]
        assert expected["after_line"] < row["line"] <= expected["until_line"]
    assert summary["summary"]["requests"] == len(truth)
    totals = summary["summary"]
    assert totals["hits"] + totals["partial"] + totals["misses"] == len(truth)
    assert totals["cached_tokens"] == sum(r["cached_tokens"] for r in requests)


def test_scan_table_for_people(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["log", "scan", str(DEFAULT_LOG)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:4] == ["line", "slot", "task", "prompt"]
    assert "13 requests: 7 hits, 0 partial, 6 misses" in out


def test_scan_prints_the_diagnosis_and_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    block = (
        "slot launch_slot_: id  0 | task {task} | processing task\n"
        "slot update_slots: id  0 | task {task} | new prompt, n_ctx_slot = 32768, n_keep = 0, "
        "task.n_tokens = {n}\n"
        "slot update_slots: id  0 | task {task} | n_tokens = 48, memory_seq_rm [48, end)\n"
        "slot print_timing: id  0 | task {task} | \n"
        "prompt eval time =    9000.00 ms / {new:5d} tokens (    0.66 ms per token,  1500.00 tokens per "
        "second)\n"
        "       eval time =     500.00 ms /    20 tokens (   25.00 ms per token,    40.00 tokens per "
        "second)\n"
        "      total time =    9500.00 ms / {total:5d} tokens\n"
        "slot      release: id  0 | task {task} | stop processing: n_tokens = {after}, truncated = 0\n"
    )
    text = "".join(block.format(task=t, n=n, new=n - 48, total=n - 28, after=n + 19)
                   for t, n in ((1, 13763), (40, 13810), (90, 13902)))
    path = tmp_path / "claude.log"
    path.write_text(text)
    assert main(["log", "scan", str(path), "--kind", "llama.cpp"]) == 0
    out = capsys.readouterr().out
    assert "Diagnosis:" in out
    assert "Fix: CLAUDE_CODE_ATTRIBUTION_HEADER=0" in out
    assert main(["log", "scan", str(path), "--jsonl"]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])["summary"]
    assert summary["diagnosis"]["fix_env"] == {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}


def test_scan_missing_file_is_a_clear_error() -> None:
    result = run_cli("log", "scan", "/nonexistent/server.log")
    assert result.returncode != 0
    assert result.stdout == ""
    assert "No such file" in result.stderr
    assert "Traceback" not in result.stderr


def test_scan_a_directory_is_a_clear_error(tmp_path: Path) -> None:
    result = run_cli("log", "scan", str(tmp_path))
    assert result.returncode != 0
    assert "directory" in result.stderr
    assert "Traceback" not in result.stderr


def test_tail_colours_and_verdicts(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    path.write_text(ERA_D_TEXT.text)
    result = run_cli("log", "tail", str(path), "--no-follow", "-n", "100", "--color", "always")
    assert result.returncode == 0, result.stderr
    assert "\x1b[" in result.stdout
    assert "HIT: 1536/1559 prompt tokens reused" in result.stdout
    assert "MISS: 0/5000" in result.stdout
    plain = run_cli("log", "tail", str(path), "--no-follow", "-n", "3")
    assert "\x1b[" not in plain.stdout  # not a tty: no colours unless asked
    assert len(plain.stdout.splitlines()) == 3  # the request began before these lines: no verdict


def test_tail_waits_and_reports_a_missing_file(tmp_path: Path) -> None:
    result = run_cli("log", "tail", str(tmp_path / "later.log"), "--no-follow")
    assert result.returncode == 1
    assert "waiting for file" in result.stderr


def test_fast_json_lines_equal_json_dumps() -> None:
    from log_samples import ALL_SAMPLES
    from test_log_accuracy import analyze_lines

    from kvswitch.commands.log import event_json_line

    events = [e for s in ALL_SAMPLES for e in analyze_lines(s.text.splitlines(), s.kind)]
    assert len(events) > 20
    for event in events:
        assert event_json_line(event) == json.dumps(event.to_json()) + "\n"
