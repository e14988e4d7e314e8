"""``kvswitch sweep --tier-cmd``: LMCache 0.5.6's own settings in the settings table, behind vLLM 0.32.0.

The sweep starts ``lmcache server`` (multi-process mode) and then ``vllm serve`` with the LMCache MP
connector and its own prefix cache off, once per setting of ``lmcache.chunk-size=128,256``, runs three
rounds (a long fixed system prompt, a cold user question, then two more with other questions) and stops
both. Each row's LMCache figures are checked against LMCache's own ``/metrics``, scraped by this test
on the HTTP port the test gave the tier command, around the row's measurement: the cold request's prompt
starts with a new nonce, so every hit token LMCache counts there is the warm request's.

CI time: two settings, each one LMCache start (~10 s) and one vLLM start (1-3 min on 2 shared cores). The
four-row table of the issue (× two L1 sizes) is in docs/verify.md, measured by hand with the same command.
A tier that cannot start is a row with LMCache's own complaint, and vLLM is never started for it (one
LMCache start, no vLLM); one that dies during the measurement is a crashed row naming it (one LMCache start).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
import threading
from pathlib import Path

import psutil
import pytest

from kvswitch.cli import main
from kvswitch.core.models import Profile, ProfileKind
from kvswitch.core.paths import AppPaths
from kvswitch.verify import sweep, sweep_measure
from kvswitch.verify.history import VerifyHistory
from kvswitch.verify.server_run import port_in_use
from kvswitch.verify.sweep_history import latest_sweep
from support.net import free_port
from support.vllm import (
    RunningLmcache,
    lmcache_argv,
    metric_sum,
    metric_values,
    tiny_hf_model,
    vllm_argv,
    vllm_env,
)

pytestmark = [pytest.mark.real_server, pytest.mark.timeout(1500)]

LM_HITS = "lmcache_mp_lookup_hit_tokens_total"
L1_HITS, L2_HITS = "lmcache_mp_lookup_hit_l1_tokens_total", "lmcache_mp_lookup_hit_l2_tokens_total"
CHUNKS = (128, 256)


def _commands(tmp_path: Path) -> tuple[int, int, list[str], list[str]]:
    """vLLM's command (its connector pointed at LMCache's port) and LMCache's, on free ports."""
    port, lm_port, http_port = free_port(), free_port(), free_port()
    tier = lmcache_argv(lm_port, http_port, chunk_size=256, l1_size_gb=1.0)
    server = vllm_argv(tiny_hf_model(), port, lmcache=RunningLmcache(lm_port, http_port, 0, tmp_path),
                       tool_choice=False)
    return port, http_port, server, tier


@pytest.fixture
def vllm_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sweep's servers inherit this process's environment, as they inherit the user's from the CLI."""
    for name, value in vllm_env(threads=2).items():
        if os.environ.get(name) != value:
            monkeypatch.setenv(name, value)


def _add_profile(port: int, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profile", "add", "lm", "--kind", "vllm", "--base-url", f"http://127.0.0.1:{port}",
                 "--model", "tiny", "--target", "bash"]) == 0
    capsys.readouterr()


def test_lmcache_chunk_size_rows_match_lmcaches_own_counters(
    fake_home: Path, vllm_environment: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    port, http_port, server, tier = _commands(tmp_path)
    _add_profile(port, capsys)
    lm_metrics = f"http://127.0.0.1:{http_port}/metrics"
    deltas: list[dict[str, float]] = []
    synthetic = sweep_measure.synthetic

    def counted(*, interleave: bool = False, rounds: int = 2) -> sweep.Measure:
        """verify's own measurement, with LMCache's counters read around it by this test."""
        inner = synthetic(interleave=interleave, rounds=rounds)

        def run(profile: Profile, timeout: float, cancel: threading.Event | None) -> sweep.Measurement:
            before = metric_values(lm_metrics)
            measured = inner(profile, timeout, cancel)
            after = metric_values(lm_metrics)
            names = {key.partition("{")[0] for key in after}
            deltas.append({name: metric_sum(after, name) - metric_sum(before, name) for name in names})
            return measured

        return run

    monkeypatch.setattr(sweep_measure, "synthetic", counted)
    code = main(["sweep", "--json", "--tier-cmd", shlex.join(tier), "--vary", "lmcache.chunk-size=128,256",
                 "--rounds", "3", "--timeout", "300", "--start-timeout", "600", "lm", "--", *server])
    data = json.loads(capsys.readouterr().out)
    assert code == 0, json.dumps(data, indent=1)[:4000]
    rows = data["rows"]
    assert data["probe"] == "synthetic probe, 3 rounds"
    assert [row["setting"] for row in rows] == [f"lmcache.chunk-size {c}" for c in CHUNKS]
    assert len(deltas) == len(CHUNKS)
    history = VerifyHistory(AppPaths.default().data_dir / "verify-history")
    stored = history.load("lm")
    assert [(e.check, e.setting) for e in stored] == [("sweep", f"lmcache.chunk-size {c}") for c in CHUNKS]
    hits_by_chunk = {}
    for chunk, row, delta, entry in zip(CHUNKS, rows, deltas, stored, strict=True):
        assert row["status"] == "measured", row
        assert f"--chunk-size {chunk}" in row["tier_command"]
        # the rounds: the same system prompt, a new user question each; the row is the last one's
        assert [r["request"] for r in entry.requests] == ["cold", "round 2", "warm"]
        second = entry.requests[1]["tiers"]
        assert entry.requests[2]["tiers"]["lmcache_l1"] == row["l1_hit_tokens"]
        lm_hits = row["l1_hit_tokens"] + row["l2_hit_tokens"]
        # LMCache's own counts, read here: the cold request's prompt starts with this run's nonce, so
        # LMCache finds nothing for it, and every hit token is round 2's or the warm request's
        assert second["lmcache_l1"] + row["l1_hit_tokens"] == delta[L1_HITS], (entry.requests, row, delta)
        assert second["lmcache_l2"] + row["l2_hit_tokens"] == delta[L2_HITS] == 0  # no L2 adapter
        assert second["lmcache_l1"] + second["lmcache_l2"] + lm_hits == delta[LM_HITS]
        assert second["lmcache_l1"] % chunk == 0
        assert second["lmcache_l1"] > 1000
        assert lm_hits > 1000
        assert lm_hits % chunk == 0  # LMCache reuses whole chunks
        assert row["chunk_size"] == chunk  # read from the running LMCache, not from the command
        assert row["server_cache_tokens"] == 0  # vLLM's own prefix cache is off
        assert row["computed_tokens"] == row["prompt_tokens"] - lm_hits
        assert row["cached_tokens"] == lm_hits
        assert row["reuse_ratio"] == pytest.approx(lm_hits / row["prompt_tokens"])
        assert row["ttft_cold_ms"] > 0
        assert row["ttft_warm_ms"] > 0
        assert row["start_s"] > 0
        assert Path(row["tier_log_file"]).is_file()
        hits_by_chunk[chunk] = lm_hits
    # the same shared prefix, cut at a finer boundary, loses fewer tokens
    assert hits_by_chunk[128] >= hits_by_chunk[256]
    assert hits_by_chunk[128] - hits_by_chunk[256] < 256
    # the window's sweep chart reads the same rows back, with their tier numbers
    from kvswitch.ui.verify.sweep_chart import tier_numbers  # noqa: PLC0415 - Qt only for this check

    run = latest_sweep(history, "lm")
    assert run is not None
    assert [tier_numbers(e) for e in run.entries] == [
        (row["l1_hit_tokens"], row["l2_hit_tokens"], row["computed_tokens"]) for row in rows]
    # the table the docs quote, from the same report
    report = sweep.SweepReport("lm", data["command"], data["probe"],
                               [sweep.SweepRow(**row) for row in rows], data["tier_command"])
    (tmp_path / "table.txt").write_text(report.describe())
    assert "L1 hit" in report.describe()


def test_an_lmcache_that_cannot_start_is_a_row_with_its_own_words_and_vllm_is_not_started(
    fake_home: Path, vllm_environment: None, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    port, _http_port, server, tier = _commands(tmp_path)
    _add_profile(port, capsys)
    code = main(["sweep", "--json", "--tier-cmd", shlex.join(tier), "--vary", "lmcache.chunk-size=many",
                 "--start-timeout", "600", "lm", "--", *server])
    data = json.loads(capsys.readouterr().out)
    assert code == 1, data
    [row] = data["rows"]
    assert row["status"] == "failed to start"
    assert row["reason"].startswith("LMCache: the server exited before it was ready"), row
    assert any("--chunk-size" in line and "many" in line for line in row["last_lines"]), row
    assert not Path(row["log_file"]).exists()  # vLLM never started
    assert "many" in Path(row["tier_log_file"]).read_text()


HEALTH_ONLY_SERVER = """
import http.server, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""


def test_an_lmcache_that_dies_during_the_measurement_is_a_crashed_row_naming_it(tmp_path: Path) -> None:
    """The real LMCache, killed (SIGKILL, as the kernel's OOM killer would) while the setting is measured;
    the server beside it is a stand-in that answers ready (vLLM's start is not what this is about)."""
    port, lm_port, http_port = free_port(), free_port(), free_port()
    tier = lmcache_argv(lm_port, http_port, chunk_size=256, l1_size_gb=0.05)
    profile = Profile(name="lm", kind=ProfileKind.VLLM, base_url=f"http://127.0.0.1:{port}", model="tiny",
                      targets=["bash"])

    def kill_the_tier(_p: Profile, _timeout: float, _cancel: threading.Event | None) -> sweep.Measurement:
        [lmcache] = [p for p in psutil.process_iter(["cmdline"])
                     if "--http-port" in (p.info["cmdline"] or []) and str(http_port) in p.info["cmdline"]]
        lmcache.send_signal(signal.SIGKILL)
        lmcache.wait(30)
        return sweep.Measurement(verdict="HIT")

    report = sweep.run_sweep(profile, [sys.executable, "-c", HEALTH_ONLY_SERVER, str(port)],
                             [sweep.parse_vary("lmcache.chunk-size=128")], kill_the_tier,
                             probe="synthetic probe", timeout=30, start_timeout=300,
                             log_dir=tmp_path / "logs", tier_command=tier)
    [row] = report.rows
    assert row.status == sweep.CRASHED, row
    assert row.reason is not None
    assert row.reason.startswith("LMCache: the server stopped during the measurement"), row.reason
    assert row.last_lines  # LMCache's own last words
    assert "LMCache" in (tmp_path / "logs" / "setting-01-tier.log").read_text()
    assert not port_in_use("127.0.0.1", port)  # the server beside it was stopped too
