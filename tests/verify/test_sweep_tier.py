"""``kvswitch sweep --tier-cmd``: a cache tier's flags in the grid (``lmcache.chunk-size=128,256``), which
command each goes to, the tier's ports refused when taken, and the tier columns of the table (no server
started here; the real LMCache + vLLM sweep is ``tests/realserver/test_real_lmcache_sweep.py``)."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest

from kvswitch.cli import main
from kvswitch.core.errors import UsageError
from kvswitch.core.models import Profile, ProfileKind
from kvswitch.verify import sweep, sweep_tier
from support.net import free_port

LMCACHE = ["/opt/venv/bin/lmcache", "server", "--host", "127.0.0.1", "--port", "6555", "--http-port", "6556",
           "--chunk-size", "256", "--l1-size-gb", "1"]
VLLM = ["vllm", "serve", "m", "--port", "8000", "--no-enable-prefix-caching"]


def test_a_tier_flag_is_the_tier_name_a_dot_and_the_flag_without_dashes() -> None:
    vary = sweep.parse_vary("lmcache.chunk-size=128,256")
    assert vary == sweep.Vary("--chunk-size", ("128", "256"), "lmcache")
    assert vary.key == "lmcache.chunk-size"
    assert sweep.parse_vary("lmcache.--l1-size-gb=0.05,1").key == "lmcache.l1-size-gb"
    assert sweep.parse_vary("lmcache.-x=1").flag == "-x"
    assert sweep.parse_vary("-np=1,4").owner is None  # the server's flags are as they were
    for bad in ("lmcache.=1", ".chunk-size=1", "lmcache chunk-size=1", "lmcache.chunk-size"):
        with pytest.raises(UsageError, match="FLAG=V1,V2"):
            sweep.parse_vary(bad)


def test_the_grid_crosses_the_tier_and_server_flags_and_each_command_gets_its_own() -> None:
    varies = [sweep.parse_vary(t) for t in ("lmcache.chunk-size=128,256", "lmcache.l1-size-gb=0.05,1")]
    settings = sweep.grid(varies)
    assert [sweep.label(s) for s in settings] == [
        "lmcache.chunk-size 128, lmcache.l1-size-gb 0.05", "lmcache.chunk-size 128, lmcache.l1-size-gb 1",
        "lmcache.chunk-size 256, lmcache.l1-size-gb 0.05", "lmcache.chunk-size 256, lmcache.l1-size-gb 1"]
    first = settings[0]
    assert sweep.setting_argv(LMCACHE, first, "lmcache") == [
        *LMCACHE[:6], "--http-port", "6556", "--chunk-size", "128", "--l1-size-gb", "0.05"]
    assert sweep.setting_argv(VLLM, first) == VLLM  # the server's command is not touched
    mixed = sweep.grid([sweep.parse_vary("lmcache.chunk-size=128"), sweep.parse_vary("--max-num-seqs=2")])[0]
    assert sweep.setting_argv(VLLM, mixed) == [*VLLM, "--max-num-seqs", "2"]
    assert sweep.setting_argv(LMCACHE, mixed, "lmcache")[-2:] == ["--chunk-size", "128"]
    with pytest.raises(UsageError, match="twice"):
        sweep.grid([sweep.parse_vary("lmcache.chunk-size=1"), sweep.parse_vary("lmcache.--chunk-size=2")])


def test_the_tier_is_known_by_its_program_and_subcommand() -> None:
    command = sweep_tier.tier_command(LMCACHE)
    assert command.tier.name == "lmcache"
    # a console script run by its venv's python, as the kernel starts it
    assert sweep_tier.tier_command(["/v/bin/python3", "/v/bin/lmcache", "server"]).tier is command.tier
    for other in (["lmcache", "controller"], ["redis-server"], ["vllm", "serve"]):
        with pytest.raises(UsageError, match="not a cache tier's server command.*lmcache server"):
            sweep_tier.tier_command(other)


def test_a_tier_flag_needs_the_tier_command_and_its_name() -> None:
    with pytest.raises(UsageError, match="--tier-cmd"):
        sweep_tier.check_owners(None, {"lmcache"})
    with pytest.raises(UsageError, match="write its flags as lmcache.FLAG"):
        sweep_tier.check_owners(sweep_tier.tier_command(LMCACHE), {"redis"})
    sweep_tier.check_owners(sweep_tier.tier_command(LMCACHE), {"lmcache"})
    sweep_tier.check_owners(None, set())


def test_every_port_the_tier_listens_on_is_known_and_its_readiness_is_its_own_metrics() -> None:
    command = sweep_tier.tier_command(LMCACHE)
    assert sweep_tier.ports(command, LMCACHE, "127.0.0.1") == [("127.0.0.1", 6555), ("127.0.0.1", 6556)]
    assert sweep_tier.ready_url(command, LMCACHE, "127.0.0.1") == "http://127.0.0.1:6556/metrics"
    bare = ["lmcache", "server", "--port=7000", "--host", "0.0.0.0"]
    # no --http-port: the tier's default metrics port; bound to every address: the server's host
    assert sweep_tier.ports(command, bare, "127.0.0.1") == [("127.0.0.1", 7000), ("127.0.0.1", 8080)]


def test_the_tier_columns_come_from_verifys_account_of_the_warm_request() -> None:
    tiers = {"vllm_prefix_cache": 0, "lmcache_l1": 2304, "lmcache_l2": 256, "computed": 187,
             "lmcache_l2_adapters": {"fs": 256}, "chunk_size": 256}
    assert sweep_tier.tier_columns(tiers) == sweep_tier.TierColumns(
        l1_hit_tokens=2304, l2_hit_tokens=256, server_cache_tokens=0, computed_tokens=187, chunk_size=256)
    assert sweep_tier.tier_columns(None) == sweep_tier.TierColumns()
    assert sweep_tier.tier_columns({"chunk_size": None, "lmcache_l1": True}) == sweep_tier.TierColumns()


def _row(setting: str, **numbers: object) -> sweep.SweepRow:
    return sweep.SweepRow(setting=setting, values={}, command="vllm serve", status=sweep.MEASURED,
                          verdict="HIT", **numbers)  # type: ignore[arg-type]


def test_the_table_csv_and_json_add_the_tier_columns_only_when_a_tier_ran() -> None:
    row = _row("lmcache.chunk-size 128", reuse_ratio=0.95, cached_tokens=2432, prompt_tokens=2560,
               reprocessed_tokens=128, ttft_cold_ms=900.0, ttft_warm_ms=120.0, start_s=80.0,
               l1_hit_tokens=2432, l2_hit_tokens=0, computed_tokens=128, chunk_size=128)
    tiered = sweep.SweepReport("lm", "vllm serve", "synthetic probe", [row], "lmcache server --port 1")
    table = tiered.describe().splitlines()
    assert table[1].strip() == "cache tier command lmcache server --port 1"
    assert table[2].endswith(f"{'L1 hit':>9} {'L2 hit':>9} {'computed':>9}")
    assert table[3].endswith(f"{'2,432':>9} {'0':>9} {'128':>9}")
    header, values = tiered.to_csv().splitlines()
    assert header.endswith("l1_hit_tokens,l2_hit_tokens,server_cache_tokens,computed_tokens,chunk_size")
    assert values.endswith("2432,0,,128,128")
    assert json.loads(json.dumps(tiered.to_json()))["rows"][0]["l1_hit_tokens"] == 2432
    plain = sweep.SweepReport("lm", "vllm serve", "synthetic probe", [_row("-np 1")])
    assert "L1 hit" not in plain.describe()
    assert plain.to_csv().splitlines()[0].endswith("start_s,reason")


def _profile(port: int) -> Profile:
    return Profile(name="local", kind=ProfileKind.VLLM, base_url=f"http://127.0.0.1:{port}", model="tiny",
                   targets=["bash"])


def _never(*_args: object) -> sweep.Measurement:
    raise AssertionError("nothing may be measured")


def test_a_tier_port_someone_else_uses_is_refused_before_anything_starts(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        taken = listener.getsockname()[1]
        tier = ["lmcache", "server", "--port", str(free_port()), "--http-port", str(taken)]
        server = [sys.executable, "-c", f"open({str(marker)!r}, 'w')"]
        with pytest.raises(UsageError, match=f"already listening on 127.0.0.1:{taken}, a port of the cache "
                           "tier's command.*never restarts"):
            sweep.run_sweep(_profile(free_port()), server, [sweep.parse_vary("lmcache.chunk-size=128")],
                            _never, probe="synthetic probe", timeout=5, start_timeout=5, tier_command=tier)
    assert not marker.exists()


def test_cli_tier_flags_without_the_tier_command_or_with_a_busy_tier_port_exit_2(
    fake_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    port = free_port()
    assert main(["profile", "add", "lm", "--kind", "vllm", "--base-url", f"http://127.0.0.1:{port}",
                 "--model", "tiny", "--target", "bash"]) == 0
    capsys.readouterr()
    code = main(["sweep", "lm", "--server-cmd", f"vllm serve m --port {port}",
                 "--vary", "lmcache.chunk-size=128,256"])
    assert code == 2
    assert "give the tier's command with --tier-cmd" in capsys.readouterr().err
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        taken = listener.getsockname()[1]
        code = main(["sweep", "lm", "--server-cmd", f"vllm serve m --port {port}",
                     "--tier-cmd", f"lmcache server --port {taken}", "--vary", "lmcache.chunk-size=128,256",
                     "--vary", "lmcache.l1-size-gb=0.05,1"])
    assert code == 2
    assert f"127.0.0.1:{taken}" in capsys.readouterr().err


def test_verify_reads_the_tier_the_sweep_started_not_another_one_on_the_machine() -> None:
    """Several tier processes may run here; inside the sweep's measurement its own tier is the one read."""
    from kvswitch.servers.tier_sources import pinned_tier, tier_metrics_url  # noqa: PLC0415

    tier = sweep_tier.tier_command(LMCACHE).tier
    other = [["/v/bin/lmcache", "server", "--http-port", "7001"]]
    with pinned_tier(tier.name, "http://127.0.0.1:6556/metrics"):
        assert tier_metrics_url(tier, "127.0.0.1") == "http://127.0.0.1:6556/metrics"
        assert tier_metrics_url(tier, "127.0.0.1", other) == "http://127.0.0.1:7001/metrics"  # asked for
    assert tier_metrics_url(tier, "127.0.0.1", other) == "http://127.0.0.1:7001/metrics"


def test_rounds_are_two_to_five_and_only_for_the_probe(
    fake_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    port = free_port()
    assert main(["profile", "add", "lm", "--kind", "vllm", "--base-url", f"http://127.0.0.1:{port}",
                 "--model", "tiny", "--target", "bash"]) == 0
    capsys.readouterr()
    for rounds in ("1", "6"):
        assert main(["sweep", "lm", "--server-cmd", "vllm serve m", "--vary=--x=1", "--rounds", rounds]) == 2
        assert "give 2 to 5" in capsys.readouterr().err
    assert main(["sweep", "lm", "--server-cmd", "vllm serve m", "--vary=--x=1", "--rounds", "3", "--client",
                 "codex"]) == 2
    assert "--rounds are for the synthetic probe" in capsys.readouterr().err
    from kvswitch.verify import sweep_measure  # noqa: PLC0415

    with pytest.raises(ValueError, match="2 to 5"):
        sweep_measure.synthetic(rounds=6)
