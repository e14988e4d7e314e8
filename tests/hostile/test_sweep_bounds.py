"""``kvswitch sweep`` against server commands that misbehave around their own processes and output.

Each server here is a real process tree (bash and Python scripts that fork, ``setsid``, ignore SIGTERM,
daemonise onto the port, or print without end): no real server does these on demand, and every one of
them is something a wrapper script or a crashing server really does. Every test is bounded in seconds,
and every process a script starts writes its pid to a file so the test can prove none is left behind
(and end it, should the code under test have failed to).
"""

from __future__ import annotations

import json
import os
import signal
import stat
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from kvswitch.cli import main
from kvswitch.core.models import Profile, ProfileKind
from kvswitch.core.redact import MASK
from kvswitch.logs.process import STOP_TIMEOUT
from kvswitch.verify import sweep
from kvswitch.verify.server_run import ServerRun, port_in_use
from support.net import free_port

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="process groups and setsid are POSIX")

#: a stop may take the SIGTERM grace, then SIGKILL and a moment to reap
STOP_BOUND = STOP_TIMEOUT + 3.0

#: the server leaves its process group (``setsid``) but keeps the output pipe, as a daemonising wrapper does
ESCAPING_CHILD = """
setsid bash -c 'echo $$ >> "$PIDS"; exec sleep 300' &
echo $$ >> "$PIDS"
echo "server: listening"
wait
"""

#: a detached daemon (its parent gone at once) with a scrubbed environment that still writes to the pipe:
#: neither the tree nor the start's mark leads to it, only the pipe it holds
SCRUBBED_DAEMON = """
( setsid env -i PIDS="$PIDS" bash -c 'echo $$ >> "$PIDS"; exec sleep 300' & )
echo $$ >> "$PIDS"
echo "server: listening"
wait
sleep 300
"""

#: a grandchild in the group that ignores SIGTERM (a worker with its own signal handling)
DEAF_GRANDCHILD = """
bash -c 'trap "" TERM; echo $$ >> "$PIDS"; while :; do sleep 0.2; done' &
echo $$ >> "$PIDS"
echo "server: listening"
wait
"""

#: a double-forked daemon: the command's own process returns at once, the daemon keeps the port and
#: has its output on /dev/null (nothing of it reaches the pipe or the group)
PORT_DAEMON = """
import http.server, os, sys, time
port, pids = int(sys.argv[1]), sys.argv[2]
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers()
                self.wfile.write(b"ok")
            def log_message(self, *args):
                pass
        server = http.server.HTTPServer(("127.0.0.1", port), Handler)
        with open(pids, "a") as f:
            f.write(f"{os.getpid()}\\n")
        server.serve_forever()
    os._exit(0)
with open(pids, "a") as f:
    f.write(f"{os.getpid()}\\n")
print("server: forked into the background", flush=True)
os.wait()
time.sleep(300)
"""

#: a server that never becomes ready and prints without end, a key in every line
KEY = "sk-live-0123456789abcdefghijKLMNOP"
PROFILE_KEY = "known-profile-key-12345"
ENDLESS_PRINTER = f"""
echo $$ >> "$PIDS"
while :; do echo "slot update: api_key={KEY} {PROFILE_KEY} usage 0123456789 abcdefghij"; done
"""


@pytest.fixture
def pids_file(tmp_path: Path) -> Iterator[Path]:
    """Where each script writes its pids; afterwards every one must be gone (a survivor is ended here
    so a failing run leaves nothing behind, and the test fails)."""
    path = tmp_path / "pids"
    path.touch()
    yield path
    survivors = [pid for pid in _pids(path) if _alive(pid)]
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert not survivors, f"processes left behind: {survivors}"


def _pids(path: Path) -> list[int]:
    return [int(word) for word in path.read_text().split()]


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _bash(script: str) -> list[str]:
    return ["bash", "-c", script]


@pytest.fixture
def pids_env(pids_file: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PIDS", str(pids_file))
    return pids_file


def _wait_for_pids(path: Path, count: int, timeout: float = 10.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while len(_pids(path)) < count:
        assert time.monotonic() < deadline, f"the script wrote only {_pids(path)}"
        time.sleep(0.05)  # the script is starting its processes
    return _pids(path)


def _timed_stop(server: ServerRun, pids: Path) -> float:
    """Seconds ``stop()`` took; a stop still running after the bound fails the test (its processes are
    then ended by the fixture, which lets the stuck stop return)."""
    started = time.monotonic()
    stopper = threading.Thread(target=server.stop, daemon=True)
    stopper.start()
    stopper.join(STOP_BOUND)
    took = time.monotonic() - started
    if stopper.is_alive():
        for pid in _pids(pids):
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        stopper.join(10)
        pytest.fail(f"stop() still running after {took:.1f} s")
    return took


def test_a_child_that_left_the_group_is_ended_and_never_hangs_the_stop(pids_env: Path) -> None:
    server = ServerRun(_bash(ESCAPING_CHILD))
    leader, escaped = _wait_for_pids(pids_env, 2)
    assert os.getpgid(escaped) != os.getpgid(leader)
    took = _timed_stop(server, pids_env)
    assert took < STOP_BOUND
    assert not _alive(escaped)
    assert not _alive(leader)
    assert server.status.startswith("stopped")


def test_a_detached_daemon_without_our_environment_is_found_by_the_pipe_it_holds(pids_env: Path) -> None:
    server = ServerRun(_bash(SCRUBBED_DAEMON))
    leader, daemon = _wait_for_pids(pids_env, 2)
    assert psutil.Process(daemon).ppid() != leader
    took = _timed_stop(server, pids_env)
    assert took < STOP_BOUND
    assert not _alive(daemon)


def test_a_grandchild_that_ignores_sigterm_is_killed_after_the_grace(pids_env: Path) -> None:
    server = ServerRun(_bash(DEAF_GRANDCHILD))
    _wait_for_pids(pids_env, 2)
    took = _timed_stop(server, pids_env)
    assert took < STOP_BOUND
    assert not any(_alive(pid) for pid in _pids(pids_env))


def _profile(port: int, key: str = "") -> Profile:
    return Profile(name="local", kind=ProfileKind.LLAMA_CPP, base_url=f"http://127.0.0.1:{port}/v1",
                   model="tiny", targets=["bash"], api_key=key or None)


def _answered(profile: Profile, _timeout: float, _cancel: threading.Event | None) -> sweep.Measurement:
    """What the sweep measures here: only that the server answers (the subject is its stop)."""
    return sweep.Measurement(verdict="HIT" if port_in_use(*sweep.server_address(profile)) else "ERROR")


def test_a_daemon_that_keeps_the_port_is_ended_and_the_next_setting_starts(pids_file: Path) -> None:
    port = free_port()
    command = [sys.executable, "-c", PORT_DAEMON, str(port), str(pids_file)]
    started = time.monotonic()
    report = sweep.run_sweep(_profile(port), command, [sweep.parse_vary("--x=1,2")], _answered,
                             probe="synthetic probe", timeout=5, start_timeout=10)
    took = time.monotonic() - started
    assert [row.status for row in report.rows] == [sweep.MEASURED] * 2, report.describe()
    assert not port_in_use("127.0.0.1", port)
    assert took < 2 * (10 + STOP_BOUND)
    assert len(_pids(pids_file)) == 4  # two settings, each a command process and its daemon


def test_endless_output_is_a_capped_masked_private_log(pids_env: Path, tmp_path: Path) -> None:
    from kvswitch.verify import server_log  # noqa: PLC0415

    port = free_port()
    data_dir = tmp_path / "data"
    log_dir = data_dir / "verify-history" / "sweep-logs" / "20260101T000000Z"
    started = time.monotonic()
    report = sweep.run_sweep(_profile(port, key=PROFILE_KEY), _bash(ENDLESS_PRINTER),
                             [sweep.parse_vary("--x=1")], _answered, probe="synthetic probe", timeout=5,
                             start_timeout=3, log_dir=log_dir)
    took = time.monotonic() - started
    [row] = report.rows
    assert row.status == sweep.FAILED_TO_START
    assert took < 3 + STOP_BOUND + 2
    log = log_dir / "setting-01.log"
    size = log.stat().st_size
    assert size <= server_log.HEAD_BYTES + server_log.TAIL_BYTES + 4096, size
    text = log.read_text(encoding="utf-8")
    assert KEY not in text
    assert PROFILE_KEY not in text
    assert MASK in text
    assert "lines dropped" in text  # the file says what it left out, between its head and its tail
    assert text.startswith("slot update:")
    assert text.rstrip("\n").endswith("abcdefghij")
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    for folder in (log_dir, log_dir.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


def test_vary_with_a_value_starting_with_a_dash_as_users_type_it(fake_home: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    assert main(["profile", "add", "local", "--kind", "llama.cpp", "--base-url", f"http://127.0.0.1:{port}",
                 "--model", "tiny", "--target", "bash"]) == 0
    capsys.readouterr()
    outputs = []
    for argv in (["sweep", "--vary", "-np=1,2", "--vary", "--cache-ram=0,default", "--json", "local", "--",
                  str(fake_home / "no-server"), "--vary", "-x"],
                 ["sweep", "local", "--server-cmd", str(fake_home / "no-server"), "--vary", "-np=1,2",
                  "--vary", "--cache-ram=0,default", "--json"]):
        code = main(argv)
        captured = capsys.readouterr()
        assert code == 1, captured.err  # every setting is a row (the server does not exist): no usage error
        assert "expected one argument" not in captured.err
        outputs.append(json.loads(captured.out))
    for output in outputs:
        assert [row["setting"] for row in output["rows"]] == [
            "-np 1, --cache-ram 0", "-np 1, --cache-ram default", "-np 2, --cache-ram 0",
            "-np 2, --cache-ram default"]
    # what follows -- is the server's, as it was typed
    assert outputs[0]["rows"][0]["command"].endswith("no-server --vary -x -np 1 --cache-ram 0")
