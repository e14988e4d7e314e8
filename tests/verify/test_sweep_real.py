"""``kvswitch sweep`` against the real llama-server b11434 (tiny model): one start per setting, each row in
the server's own numbers, a bad flag a row with the server's own complaint.

The grid is the guide's question "is ``--parallel 1`` needed, and does the RAM cache save it?":
``-np 1|4`` × ``--cache-ram 0|default`` with another conversation between the cold and the warm request.
On one slot with no RAM cache the other conversation evicts the first (MISS); with the RAM cache b11434
restores it, and with four slots it keeps its own slot (HIT). Each row's numbers are checked against the
server's ``/metrics`` counters, scraped by this test around each measurement (their deltas equal the sums
of the three requests' processed and cached tokens).

vLLM: ``GRIDS`` is the hook for the same test on another server (a command builder and its expectations);
the vLLM tier adds its grid there.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from kvswitch.cli import main
from kvswitch.core.models import Profile, ProfileKind
from kvswitch.core.paths import AppPaths
from kvswitch.verify import sweep, sweep_measure
from kvswitch.verify.history import VerifyHistory
from support.llama import CONTEXT, llama_server_binary, tiny_model
from support.net import free_port

pytestmark = [pytest.mark.real_server, pytest.mark.timeout(1200)]


def llama_command(port: int) -> list[str]:
    return [str(llama_server_binary()), "-m", str(tiny_model()), "-a", "tiny", "--host", "127.0.0.1",
            "--port", str(port), "-c", str(CONTEXT), "--metrics"]


#: server -> (its command for a port, the profile kind, the grid, the expected verdict per setting)
GRIDS: dict[str, tuple[Callable[[int], list[str]], ProfileKind, list[str], dict[str, str]]] = {
    "llama.cpp": (llama_command, ProfileKind.LLAMA_CPP, ["-np=1,4", "--cache-ram=0,default"], {
        "-np 1, --cache-ram 0": "MISS", "-np 1, --cache-ram default": "HIT",
        "-np 4, --cache-ram 0": "HIT", "-np 4, --cache-ram default": "HIT"}),
}


def _counters(url: str) -> dict[str, float]:
    text = httpx.get(f"{url}/metrics", timeout=10).text
    found = re.findall(r"^(llamacpp:prompt_tokens(?:_cached)?_total) (\S+)$", text, re.M)
    return {name: float(value) for name, value in found}


@pytest.mark.parametrize("server", sorted(GRIDS))
def test_the_settings_table_has_the_servers_own_numbers_per_setting(server: str, tmp_path: Path) -> None:
    command_for, kind, grid, expected = GRIDS[server]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    profile = Profile(name="local", kind=kind, base_url=url, model="tiny", targets=["bash"])
    inner = sweep_measure.synthetic(interleave=True)
    deltas: list[dict[str, float]] = []

    def measured_with_counters(
        p: Profile, timeout: float, cancel: threading.Event | None
    ) -> sweep.Measurement:
        before = _counters(url)
        measurement = inner(p, timeout, cancel)
        after = _counters(url)
        deltas.append({name: after[name] - before[name] for name in after})
        return measurement

    kept: list[list[dict]] = []
    report = sweep.run_sweep(profile, command_for(port), [sweep.parse_vary(v) for v in grid],
                             measured_with_counters, probe="interleaved probe", timeout=300,
                             start_timeout=120, log_dir=tmp_path / "logs",
                             on_row=lambda _row, measured: kept.append(measured.requests if measured else []))
    assert [row.status for row in report.rows] == [sweep.MEASURED] * len(expected), report.describe()
    assert {row.setting: row.verdict for row in report.rows} == expected, report.describe()
    for row in report.rows:
        assert row.prompt_tokens is not None
        assert row.cached_tokens is not None
        assert row.prompt_tokens > 2000  # verify's long prefix (shrunk to fit a slot of -np 4)
        assert row.reprocessed_tokens == row.prompt_tokens - row.cached_tokens
    # every request's numbers, summed, are exactly what the server's counters moved by
    for requests, delta in zip(kept, deltas, strict=True):
        assert [r["request"] for r in requests] == ["cold", "between", "warm"]
        processed = sum(r["prompt_tokens"] - r["cached_tokens"] for r in requests)
        cached = sum(r["cached_tokens"] for r in requests)
        assert delta["llamacpp:prompt_tokens_total"] == processed, requests
        assert delta["llamacpp:prompt_tokens_cached_total"] == cached, requests
    miss = next(row for row in report.rows if row.verdict == "MISS")
    hit = next(row for row in report.rows if row.verdict == "HIT")
    assert miss.reprocessed_tokens is not None
    assert hit.reprocessed_tokens is not None
    assert miss.reprocessed_tokens > 20 * hit.reprocessed_tokens
    # the server's output was followed for each start, from its first line to its exit
    assert len(list((tmp_path / "logs").glob("setting-*.log"))) == len(expected)
    log = (tmp_path / "logs" / "setting-01.log").read_text()
    assert "llama_server: initializing" in log
    assert "cleaning up before exit" in log


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
