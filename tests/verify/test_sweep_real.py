"""``kvswitch sweep`` against real servers (tiny models): one start per setting, each row in the server's
own numbers, a bad flag a row with the server's own complaint.

llama.cpp b11434: the grid is the guide's question "is ``--parallel 1`` needed, and does the RAM cache
save it?": ``-np 1|4`` × ``--cache-ram 0|default`` with another conversation between the cold and the
warm request. On one slot with no RAM cache the other conversation evicts the first (MISS); with the RAM
cache b11434 restores it, and with four slots it keeps its own slot (HIT).

vLLM 0.32.0 (CPU build): ``--no-enable-prefix-caching set|default`` (its default is prefix caching on),
the same interleaved probe: without the prefix cache every request is processed whole (MISS), with it the
warm request finds its blocks (HIT) although another conversation went in between.

Each row's numbers are checked against the server's ``/metrics`` counters, scraped by this test around
each measurement: their deltas equal the sums of the three requests' own numbers (a ``ServerGrid``'s
``counters`` say which counter holds which sum on each server).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from kvswitch.cli import main
from kvswitch.core.models import Profile, ProfileKind
from kvswitch.core.paths import AppPaths
from kvswitch.verify import sweep, sweep_measure
from kvswitch.verify.history import VerifyHistory
from support.llama import CONTEXT, llama_server_binary, tiny_model
from support.net import free_port
from support.vllm import metric_sum, metric_values, tiny_hf_model, vllm_argv, vllm_env

pytestmark = [pytest.mark.real_server, pytest.mark.timeout(1200)]


def llama_command(port: int) -> list[str]:
    return [str(llama_server_binary()), "-m", str(tiny_model()), "-a", "tiny", "--host", "127.0.0.1",
            "--port", str(port), "-c", str(CONTEXT), "--metrics"]


def vllm_command(port: int) -> list[str]:
    """The vLLM tier's command without its own cache flag: the grid decides whether the prefix cache is on."""
    return sweep.without_flag(vllm_argv(tiny_hf_model(), port, tool_choice=False), "--enable-prefix-caching")


#: what a request's own numbers sum to: ``prompt`` (all its prompt tokens), ``cached`` (those from the
#: cache) and ``processed`` (the rest)
RequestSum = Callable[[list[dict]], dict[str, int]]


@dataclass(frozen=True)
class ServerGrid:
    """One server's sweep: its command for a port, the grid, the verdict expected per setting, which of its
    ``/metrics`` counters equals which sum of the requests' numbers, and the lines its log starts and ends
    with (the sweep followed the server from its first line to its exit)."""

    command_for: Callable[[int], list[str]]
    kind: ProfileKind
    grid: list[str]
    expected: dict[str, str]
    counters: dict[str, str]
    start_timeout: float
    first_words: str
    last_words: str
    environment: Callable[[], dict[str, str]] | None = None
    #: counters whose meaning depends on the setting: setting -> {counter: sum}
    counters_per_setting: dict[str, dict[str, str]] | None = None

    def counters_of(self, setting: str) -> dict[str, str]:
        return {**self.counters, **(self.counters_per_setting or {}).get(setting, {})}

    def all_counters(self) -> set[str]:
        return {name for setting in self.expected for name in self.counters_of(setting)}


GRIDS: dict[str, ServerGrid] = {
    "llama.cpp": ServerGrid(
        llama_command, ProfileKind.LLAMA_CPP, ["-np=1,4", "--cache-ram=0,default"],
        {"-np 1, --cache-ram 0": "MISS", "-np 1, --cache-ram default": "HIT",
         "-np 4, --cache-ram 0": "HIT", "-np 4, --cache-ram default": "HIT"},
        # llama.cpp counts the tokens it processed apart from the ones it took from its cache
        {"llamacpp:prompt_tokens_total": "processed", "llamacpp:prompt_tokens_cached_total": "cached"},
        start_timeout=120, first_words="llama_server: initializing", last_words="cleaning up before exit"),
    "vllm": ServerGrid(
        vllm_command, ProfileKind.VLLM, ["--no-enable-prefix-caching=set,default"],
        {"--no-enable-prefix-caching set": "MISS", "--no-enable-prefix-caching default": "HIT"},
        # vLLM counts every prompt token, and the prefix-cache hits among them (the answers'
        # usage.prompt_tokens_details.cached_tokens)
        {"vllm:prompt_tokens_total": "prompt", "vllm:prefix_cache_hits_total": "cached"},
        start_timeout=900, first_words="version 0.32.0", last_words="Shutting down",
        environment=vllm_env,
        # a cache lookup counts the request's prompt tokens; without the prefix cache there is no lookup
        counters_per_setting={
            "--no-enable-prefix-caching set": {"vllm:prefix_cache_queries_total": "nothing"},
            "--no-enable-prefix-caching default": {"vllm:prefix_cache_queries_total": "prompt"}}),
}


def _sums(requests: list[dict]) -> dict[str, int]:
    prompt = sum(r["prompt_tokens"] for r in requests)
    cached = sum(r["cached_tokens"] for r in requests)
    return {"prompt": prompt, "cached": cached, "processed": prompt - cached, "nothing": 0}


def _counters(url: str, names: set[str]) -> dict[str, float]:
    values = metric_values(f"{url}/metrics")
    return {name: metric_sum(values, name) for name in names}


@pytest.mark.parametrize("server", [
    "llama.cpp",
    pytest.param("vllm", marks=pytest.mark.timeout(3000)),  # two vLLM starts, 2-5 minutes each on 2 cores
])
def test_the_settings_table_has_the_servers_own_numbers_per_setting(
    server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = GRIDS[server]
    if spec.environment is not None:
        # the sweep's server inherits this process's environment, as it inherits the user's from the CLI
        for name, value in spec.environment().items():
            if os.environ.get(name) != value:
                monkeypatch.setenv(name, value)
    command = spec.command_for(port := free_port())
    url = f"http://127.0.0.1:{port}"
    profile = Profile(name="local", kind=spec.kind, base_url=url, model="tiny", targets=["bash"])
    inner = sweep_measure.synthetic(interleave=True)
    deltas: list[dict[str, float]] = []

    def measured_with_counters(
        p: Profile, timeout: float, cancel: threading.Event | None
    ) -> sweep.Measurement:
        before = _counters(url, spec.all_counters())
        measurement = inner(p, timeout, cancel)
        after = _counters(url, spec.all_counters())
        deltas.append({name: after[name] - before[name] for name in after})
        return measurement

    kept: list[list[dict]] = []
    report = sweep.run_sweep(profile, command, [sweep.parse_vary(v) for v in spec.grid],
                             measured_with_counters, probe="interleaved probe", timeout=300,
                             start_timeout=spec.start_timeout, log_dir=tmp_path / "logs",
                             on_row=lambda _row, measured: kept.append(measured.requests if measured else []))
    assert [row.status for row in report.rows] == [sweep.MEASURED] * len(spec.expected), report.describe()
    assert {row.setting: row.verdict for row in report.rows} == spec.expected, report.describe()
    for row in report.rows:
        assert row.prompt_tokens is not None
        assert row.cached_tokens is not None
        assert row.prompt_tokens > 2000  # verify's long prefix (shrunk to fit a slot of -np 4)
        assert row.reprocessed_tokens == row.prompt_tokens - row.cached_tokens
    # every request's numbers, summed, are exactly what the server's counters moved by
    for row, requests, delta in zip(report.rows, kept, deltas, strict=True):
        assert [r["request"] for r in requests] == ["cold", "between", "warm"]
        sums = _sums(requests)
        counted = spec.counters_of(row.setting)
        should_move = {name: sums[which] for name, which in counted.items()}
        assert {name: delta[name] for name in counted} == should_move, (row.setting, requests)
    miss = next(row for row in report.rows if row.verdict == "MISS")
    hit = next(row for row in report.rows if row.verdict == "HIT")
    assert miss.reprocessed_tokens is not None
    assert hit.reprocessed_tokens is not None
    assert miss.reprocessed_tokens > 20 * hit.reprocessed_tokens
    # the server's output was followed for each start, from its first line to its exit
    assert len(list((tmp_path / "logs").glob("setting-*.log"))) == len(spec.expected)
    log = (tmp_path / "logs" / "setting-01.log").read_text()
    assert spec.first_words in log
    assert spec.last_words in log
    (tmp_path / "table.txt").write_text(report.describe())  # the measured table docs/verify.md quotes


def test_a_bad_flag_is_a_row_with_the_servers_complaint_and_the_rest_is_measured(
    fake_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Through the CLI: ``--no-such-flag`` set makes llama-server refuse to start; left out, it runs."""
    port = free_port()
    assert main(["profile", "add", "local", "--kind", "llama.cpp", "--base-url", f"http://127.0.0.1:{port}",
                 "--model", "tiny", "--target", "bash"]) == 0
    capsys.readouterr()
    code = main(["sweep", "local", "--server-cmd", " ".join(llama_command(port)),
                 "--vary=--no-such-flag=set,default", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1, data
    bad, good = data["rows"]
    assert bad["status"] == "failed to start"
    assert "exited before it was ready" in bad["reason"]
    assert "error: invalid argument: --no-such-flag" in bad["last_lines"]
    assert good["status"] == "measured"
    assert good["verdict"] == "HIT"
    assert good["reuse_ratio"] > 0.9
    stored = VerifyHistory(AppPaths.default().data_dir / "verify-history").load("local")
    assert [(e.check, e.setting, e.verdict) for e in stored] == [
        ("sweep", "--no-such-flag set", "FAILED TO START"), ("sweep", "--no-such-flag default", "HIT")]


def test_a_client_sweep_runs_the_real_codex_session_per_setting(
    fake_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--client codex``: the real Codex session against the setting's server, its continued turns in
    the server's own numbers (Codex 0.169.0 sends its whole history, so they reuse >= 99 %)."""
    from support.claude import eos_token_id  # noqa: PLC0415
    from support.clients import codex_binary  # noqa: PLC0415

    codex = codex_binary()
    port = free_port()
    assert main(["profile", "add", "local", "--kind", "llama.cpp", "--base-url", f"http://127.0.0.1:{port}",
                 "--model", "tiny", "--target", "codex", "--context-window", str(CONTEXT)]) == 0
    capsys.readouterr()
    command = [*llama_command(port), "-l", f"{eos_token_id()}+100"]
    code = main(["sweep", "--vary=--cache-ram=0", "--client", "codex", "--codex-bin", str(codex), "--json",
                 "local", "--", *command])
    data = json.loads(capsys.readouterr().out)
    assert code == 0, data
    [row] = data["rows"]
    assert row["status"] == "measured"
    assert row["verdict"] == "HIT"
    assert row["reuse_ratio"] >= 0.99
    assert row["prompt_tokens"] > 20_000  # Codex's turns 2 and 3 of conversation 1, ~16k tokens each
    assert row["reprocessed_tokens"] == row["prompt_tokens"] - row["cached_tokens"]
    assert data["probe"] == "codex session"
    [entry] = VerifyHistory(AppPaths.default().data_dir / "verify-history").load("local")
    assert (entry.check, entry.client, entry.setting) == ("sweep", "codex", "--cache-ram 0")
