"""``kvswitch sweep``'s grid, its command lines and its refusals (no server started here; the real
llama-server grid is in ``test_sweep_real.py``)."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest

from kvswitch.cli import main
from kvswitch.core.errors import UsageError
from kvswitch.core.models import Profile, ProfileKind
from kvswitch.verify import sweep
from support.net import free_port


def test_a_vary_is_a_flag_and_its_values() -> None:
    assert sweep.parse_vary("-np=1,4") == sweep.Vary("-np", ("1", "4"))
    assert sweep.parse_vary("--cache-ram=0,default") == sweep.Vary("--cache-ram", ("0", "default"))
    assert sweep.parse_vary("--swa-full=set,default").values == ("set", "default")


@pytest.mark.parametrize(("text", "says"), [
    ("np=1,4", "FLAG=V1,V2"), ("-np", "FLAG=V1,V2"), ("-np=1,,4", "empty value"), ("-np=1,1", "twice"),
    ("--=1", "FLAG=V1,V2"),
])
def test_a_bad_vary_is_a_usage_error_naming_it(text: str, says: str) -> None:
    with pytest.raises(UsageError, match=says):
        sweep.parse_vary(text)


def test_the_grid_is_the_cartesian_product_first_vary_slowest() -> None:
    settings = sweep.grid([sweep.parse_vary("-np=1,4"), sweep.parse_vary("--cache-ram=0,default")])
    assert [sweep.label(s) for s in settings] == ["-np 1, --cache-ram 0", "-np 1, --cache-ram default",
                                                  "-np 4, --cache-ram 0", "-np 4, --cache-ram default"]
    with pytest.raises(UsageError, match="twice"):
        sweep.grid([sweep.parse_vary("-np=1"), sweep.parse_vary("-np=4")])


def test_a_setting_replaces_the_flag_in_the_command_or_leaves_it_out() -> None:
    base = ["llama-server", "-m", "m.gguf", "-np", "2", "--cache-ram=512", "--swa-full", "-c", "4096"]
    assert sweep.setting_argv(base, (("-np", "4"), ("--cache-ram", "0"))) == [
        "llama-server", "-m", "m.gguf", "--swa-full", "-c", "4096", "-np", "4", "--cache-ram", "0"]
    assert sweep.setting_argv(base, (("--cache-ram", "default"),)) == [
        "llama-server", "-m", "m.gguf", "-np", "2", "--swa-full", "-c", "4096"]
    # a switch is removed alone (the next word is a flag), and set passes it without a value
    assert sweep.setting_argv(base, (("--swa-full", "default"),))[-2:] == ["-c", "4096"]
    assert sweep.setting_argv(["s", "--cache-ram", "-1"], (("--swa-full", "set"), ("--cache-ram", "0"))) == [
        "s", "--swa-full", "--cache-ram", "0"]


def test_the_shown_command_masks_credentials() -> None:
    shown = sweep.shown_command(["vllm", "serve", "m", "--api-key", "s3cret-value", "--port", "8000"],
                                ("s3cret-value",))
    assert "s3cret" not in shown
    assert "--port 8000" in shown


def _profile(url: str) -> Profile:
    return Profile(name="local", kind=ProfileKind.LLAMA_CPP, base_url=url, model="tiny", targets=["bash"])


def _never(*_args: object) -> sweep.Measurement:
    raise AssertionError("nothing may be measured")


def test_a_server_the_user_runs_on_the_port_is_never_restarted(tmp_path: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        marker = tmp_path / "started"
        command = [sys.executable, "-c", f"open({str(marker)!r}, 'w')"]
        with pytest.raises(UsageError, match=f"already listening on 127.0.0.1:{port}.*never restarts"):
            sweep.run_sweep(_profile(f"http://127.0.0.1:{port}"), command, [sweep.parse_vary("-np=1,4")],
                            _never, probe="synthetic probe", timeout=5, start_timeout=5)
    assert not marker.exists()


def test_a_remote_profile_is_refused() -> None:
    with pytest.raises(UsageError, match="must point at this machine"):
        sweep.run_sweep(_profile("http://10.1.2.3:8080"), ["llama-server"], [sweep.parse_vary("-np=1")],
                        _never, probe="synthetic probe", timeout=5, start_timeout=5)


def test_a_command_that_cannot_start_is_a_row_with_its_reason(tmp_path: Path) -> None:
    port = free_port()
    report = sweep.run_sweep(_profile(f"http://127.0.0.1:{port}"), [str(tmp_path / "no-such-server")],
                             [sweep.parse_vary("-np=1,4")], _never, probe="synthetic probe", timeout=5,
                             start_timeout=5)
    assert [row.status for row in report.rows] == [sweep.FAILED_TO_START] * 2
    assert all("command not found" in (row.reason or "") for row in report.rows)
    assert report.exit_code == 1


def test_a_server_that_exits_at_start_is_a_row_with_its_last_lines(tmp_path: Path) -> None:
    """A real process that prints its complaint and exits 1 (as a server given a bad flag does)."""
    port = free_port()
    script = "import sys; print('error: invalid argument: ' + sys.argv[-1], file=sys.stderr); sys.exit(1)"
    report = sweep.run_sweep(_profile(f"http://127.0.0.1:{port}"), [sys.executable, "-c", script, "--port",
                             str(port)], [sweep.parse_vary("--bogus=1")], _never, probe="synthetic probe",
                             timeout=5, start_timeout=30, log_dir=tmp_path / "logs")
    [row] = report.rows
    assert row.status == sweep.FAILED_TO_START
    assert "exited before it was ready" in (row.reason or "")
    assert "code 1" in (row.reason or "")
    assert row.last_lines == ["error: invalid argument: 1"]
    assert (tmp_path / "logs" / "setting-01.log").read_text() == "error: invalid argument: 1\n"
    assert "FAILED TO START" in report.describe()
    assert json.loads(json.dumps(report.to_json()))["rows"][0]["last_lines"] == row.last_lines
    assert report.to_csv().splitlines()[0].startswith("setting,status,verdict,reuse_ratio")


def test_cli_refuses_a_busy_port_with_exit_2(fake_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        assert main(["profile", "add", "local", "--kind", "llama.cpp", "--base-url", f"http://127.0.0.1:{port}",
                     "--model", "tiny", "--target", "bash"]) == 0
        capsys.readouterr()
        code = main(["sweep", "local", "--server-cmd", f"llama-server --port {port}", "--vary=-np=1,4"])
    assert code == 2
    assert "never restarts a server it did not start" in capsys.readouterr().err


def test_the_command_after_dashes_or_in_server_cmd_but_not_both(fake_home: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    assert main(["profile", "add", "local", "--kind", "llama.cpp", "--base-url", f"http://127.0.0.1:{port}",
                 "--model", "tiny", "--target", "bash"]) == 0
    capsys.readouterr()
    assert main(["sweep", "--vary=-np=1", "--server-cmd", "a b", "local", "--", "c"]) == 2
    assert "give the server's command once" in capsys.readouterr().err
    assert main(["sweep", "--vary=-np=1", "local"]) == 2
    assert "give the server's command once" in capsys.readouterr().err
    # after --: the words go to the server as they are (here a program that does not exist: a row)
    code = main(["sweep", "--vary=-np=1", "--json", "local", "--", str(fake_home / "no-server"), "-m", "x"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1
    assert data["rows"][0]["command"] == f"{fake_home / 'no-server'} -m x -np 1"
    assert "command not found" in data["rows"][0]["reason"]


def test_a_row_goes_into_the_verify_history_beside_verifys_runs(tmp_path: Path) -> None:
    from kvswitch.verify.history import VerifyHistory, describe  # noqa: PLC0415

    row = sweep.SweepRow(setting="-np 1, --cache-ram 0", values={"-np": "1", "--cache-ram": "0"},
                         command="llama-server -np 1 --cache-ram 0", status=sweep.MEASURED, verdict="MISS",
                         reuse_ratio=0.002, cached_tokens=20, prompt_tokens=11871, reprocessed_tokens=11851,
                         ttft_cold_ms=17522.0, ttft_warm_ms=18328.0)
    measured = sweep.Measurement(verdict="MISS", requests=[{"request": "warm", "cached_tokens": 20}])
    store = VerifyHistory(tmp_path)
    store.append(sweep.history_entry(_profile("http://127.0.0.1:8080"), row, measured))
    [entry] = store.load("local")
    assert (entry.check, entry.setting, entry.verdict, entry.prompt_tokens) == (
        "sweep", "-np 1, --cache-ram 0", "MISS", 11871)
    assert entry.server["values"] == {"-np": "1", "--cache-ram": "0"}
    assert entry.requests == [{"request": "warm", "cached_tokens": 20}]
    assert "setting: -np 1, --cache-ram 0" in describe([entry])


CRASHING_SERVER = """
import http.server, os, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/health":
            self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers()
            self.wfile.write(b"ok")
            return
        print("GGML_ASSERT(n_tokens > 0) failed", flush=True)
        os._exit(134)
    do_POST = do_GET
    def log_message(self, *args):
        pass
print("listening", flush=True)
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""


def test_a_server_that_dies_during_the_measurement_is_a_crashed_row(tmp_path: Path) -> None:
    """A real process that serves /health, then dies on the probe's first request (a crash no real
    server gives on demand), with its last words in the row."""
    from kvswitch.verify import sweep_measure  # noqa: PLC0415

    port = free_port()
    report = sweep.run_sweep(_profile(f"http://127.0.0.1:{port}"),
                             [sys.executable, "-c", CRASHING_SERVER, str(port)],
                             [sweep.parse_vary("--x=set")],
                             sweep_measure.synthetic(), probe="synthetic probe", timeout=20, start_timeout=30)
    [row] = report.rows
    assert row.status == sweep.CRASHED, row
    assert "stopped during the measurement" in (row.reason or "")
    assert "code 134" in (row.reason or "")
    assert row.last_lines[-1] == "GGML_ASSERT(n_tokens > 0) failed"
    assert report.exit_code == 1


MODELS_ONLY_SERVER = """
import http.server, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b'{"data": []}' if self.path == "/v1/models" else b"no such route"
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
        print("GET", self.path, flush=True)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""


def test_a_server_without_health_is_ready_when_its_model_list_answers() -> None:
    from kvswitch.verify.server_run import ServerRun  # noqa: PLC0415

    port = free_port()
    with ServerRun([sys.executable, "-c", MODELS_ONLY_SERVER, str(port)]) as server:
        assert server.wait_ready(f"http://127.0.0.1:{port}/v1", timeout=30) is None
        assert server.alive
    assert server.last_lines()[-2:] == ["GET /health", "GET /v1/models"]
    assert not server.alive
