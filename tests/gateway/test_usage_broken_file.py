"""Issue 28, item 2: a ``usage.sqlite3`` that cannot serve must not stop the gateway or the reader.

Each case is a real file a user can end up with: bytes that are not SQLite, another program's schema,
a directory in its place, a file the user made read-only. ``kvswitch gateway run`` (a real process)
must set it aside (renamed, kept), start a new one, say so on stderr and in the app log, and serve;
``kvswitch usage`` must name the file and exit 1, never 70, or read what it can.

Read-only: the tests run as root, for whom a 0400 file is writable. The child runs in a new user
namespace (``unshare --user``): the same owner, without the capabilities that override file modes, so
SQLite really gets ``EACCES``/``SQLITE_READONLY``, exactly as a normal user would.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from gateway_support import ScriptedUpstream, add_profiles, json_answer

import kvswitch
from kvswitch.core.gateway_config import ensure_token, usage_db
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.usage.queries import query
from kvswitch.usage.schema import UsageRow
from kvswitch.usage.store import UsageStore
from support.net import free_port

#: the code this test process imported (a child runs the same tree, whatever PYTHONPATH chose)
APP = Path(kvswitch.__file__).resolve().parents[1]
BODY = b'{"id":"m","usage":{"input_tokens":5,"cache_read_input_tokens":95,"output_tokens":7}}'
UNSHARE = shutil.which("unshare")


def _unprivileged() -> list[str]:
    """The prefix that runs a command without root's file-mode override (see the module docstring)."""
    assert UNSHARE, "unshare (util-linux) is needed to reproduce a read-only file as root"
    probe = subprocess.run([UNSHARE, "--user", "true"], capture_output=True)
    assert probe.returncode == 0, f"unshare --user is refused here: {probe.stderr!r}"
    return [UNSHARE, "--user"]


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env["PYTHONPATH"] = str(APP)
    return env


def _corrupt(db: Path) -> bytes:
    data = b"this was never an SQLite file\n" * 200
    db.write_bytes(data)
    return data


def _wrong_schema(db: Path) -> bytes:
    connection = sqlite3.connect(db)
    connection.execute("CREATE TABLE requests (url TEXT, hits INTEGER)")
    connection.execute("INSERT INTO requests VALUES ('another program', 3)")
    connection.commit()
    connection.close()
    return db.read_bytes()


def _view(db: Path) -> bytes:
    connection = sqlite3.connect(db)
    connection.execute("CREATE VIEW requests AS SELECT 1 AS time")
    connection.commit()
    connection.close()
    return db.read_bytes()


def _directory(db: Path) -> bytes:
    db.mkdir()
    (db / "the user's notes.txt").write_bytes(b"kept")
    return b"kept"


BROKEN: dict[str, Callable[[Path], bytes]] = {"corrupt": _corrupt, "wrong-schema": _wrong_schema,
                                              "view": _view, "directory": _directory}


def _read_only(db: Path) -> bytes:
    """A real usage file with one row, made read-only by its owner."""
    store = UsageStore(db)
    assert store.add(UsageRow(time.time(), "claude", "earlier", "http://127.0.0.1:1", "m", 200, 10, 4, 1))
    store.close()
    for path in db.parent.glob(db.name + "*"):
        path.chmod(0o400)
    return db.read_bytes()


@pytest.fixture
def paths(fake_home: Path) -> AppPaths:
    return AppPaths.default()


@pytest.fixture
def gateway_run(paths: AppPaths) -> Iterator[Callable[..., tuple[subprocess.Popen[bytes], str]]]:
    """``start(prefix=[])``: ``kvswitch gateway run`` on a free port; (process, its URL) once it listens."""
    started: list[subprocess.Popen[bytes]] = []

    def start(prefix: list[str] | None = None) -> tuple[subprocess.Popen[bytes], str]:
        port = free_port()
        out, err = (paths.config_dir.parent / f"gateway-{port}.{suffix}" for suffix in ("out", "err"))
        with out.open("wb") as stdout, err.open("wb") as stderr:
            proc = subprocess.Popen([*(prefix or []), sys.executable, "-m", "kvswitch", "gateway", "run",
                                     "--listen", f"127.0.0.1:{port}"], env=_child_env(), stdout=stdout,
                                    stderr=stderr)
        started.append(proc)
        deadline = time.monotonic() + 60
        while b"KV Switch gateway on" not in out.read_bytes():
            assert proc.poll() is None, f"exit {proc.returncode}: {err.read_text()}"
            assert time.monotonic() < deadline, "the gateway did not start"
            time.sleep(0.1)  # polling a child process's output
        proc.stderr_path = err  # type: ignore[attr-defined]
        return proc, f"http://127.0.0.1:{port}"

    yield start
    for proc in started:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def _serve_one(paths: AppPaths, url: str, upstreams: Any) -> None:
    upstream: ScriptedUpstream = upstreams(json_answer(BODY))
    add_profiles(paths, Profile(name="local", kind="llama.cpp", base_url=upstream.url, model="tiny"),
                 route="local")
    answer = httpx.post(url + "/claude/v1/messages", content=b'{"model":"tiny"}',
                        headers={"x-api-key": ensure_token(paths)}, timeout=30)
    assert answer.status_code == 200
    assert answer.content == BODY


def _kept(db: Path) -> list[Path]:
    return sorted(p for p in db.parent.iterdir() if p.name.startswith(db.name + ".broken-")
                  and not p.name.endswith(("-wal", "-shm")))


def _wait_for_rows(db: Path, count: int) -> list[UsageRow]:
    deadline = time.monotonic() + 20
    while len(rows := query(db)) < count:
        assert time.monotonic() < deadline, "the row was not stored"
        time.sleep(0.05)  # the gateway's writer thread stores it after the answer
    return rows


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_gateway_run_sets_a_broken_file_aside_and_serves(
    paths: AppPaths, gateway_run: Any, upstreams: Any, kind: str
) -> None:
    db = usage_db(paths)
    db.parent.mkdir(parents=True, exist_ok=True)
    original = BROKEN[kind](db)
    proc, url = gateway_run()
    _serve_one(paths, url, upstreams)
    assert [row.profile for row in _wait_for_rows(db, 1)] == ["local"]  # a new file, recording
    kept = _kept(db)
    assert len(kept) == 1
    assert (kept[0] / "the user's notes.txt" if kind == "directory" else kept[0]).read_bytes() == original
    said = proc.stderr_path.read_text()
    assert str(db) in said
    assert str(kept[0]) in said
    assert "new usage database was started" in said
    log = (paths.log_dir / "kvswitch.log").read_text()
    assert str(kept[0]) in log


def test_gateway_run_sets_a_read_only_file_aside(paths: AppPaths, gateway_run: Any, upstreams: Any) -> None:
    db = usage_db(paths)
    db.parent.mkdir(parents=True, exist_ok=True)
    original = _read_only(db)
    proc, url = gateway_run(_unprivileged())
    _serve_one(paths, url, upstreams)
    assert [row.profile for row in _wait_for_rows(db, 1)] == ["local"]
    kept = _kept(db)
    assert len(kept) == 1
    assert kept[0].read_bytes() == original
    assert "cannot be written" in proc.stderr_path.read_text()


def test_a_broken_file_that_cannot_be_moved_leaves_the_store_counting(paths: AppPaths) -> None:
    """A folder the gateway cannot rename in: the store still opens (no exception for the gateway to
    die of), says usage is not recorded and why, and counts each row it could not keep."""
    folder = paths.data_dir / "locked-folder"
    folder.mkdir(parents=True)
    _corrupt(folder / "usage.sqlite3")
    folder.chmod(0o555)
    script = (
        "import json, sys, time\n"
        "from pathlib import Path\n"
        "from kvswitch.usage.schema import UsageRow\nfrom kvswitch.usage.store import UsageStore\n"
        "store = UsageStore(Path(sys.argv[1]))\n"
        "stored = store.add(UsageRow(time.time(), 'claude', 'p', None, 'm', 200))\n"
        "store.close()\n"
        "print(json.dumps({'stored': stored, **store.counters()}))\n"
    )
    try:
        done = subprocess.run([*_unprivileged(), sys.executable, "-c", script, str(folder / "usage.sqlite3")],
                              env=_child_env(), capture_output=True, text=True, timeout=60)
    finally:
        folder.chmod(0o755)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["stored"] is False
    assert result["usage_errors"] == 1
    assert result["usage_notice"].startswith("usage is not recorded: ")
    assert "cannot be set aside" in result["usage_notice"]


def _usage(args: list[str], prefix: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*(prefix or []), sys.executable, "-m", "kvswitch", *args], env=_child_env(),
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("kind", sorted(BROKEN))
@pytest.mark.parametrize("command", [["usage"], ["usage", "--json"], ["usage", "--csv"],
                                     ["usage", "--requests"], ["sessions"]])
def test_the_reader_names_a_broken_file_and_exits_1(paths: AppPaths, kind: str, command: list[str]) -> None:
    db = usage_db(paths)
    db.parent.mkdir(parents=True, exist_ok=True)
    original = BROKEN[kind](db)
    done = _usage(command)
    assert done.returncode == 1, done.stderr
    assert str(db) in done.stderr
    assert "internal error" not in done.stderr
    assert "Traceback" not in done.stderr
    # read-only means read-only: nothing renamed, migrated or created
    assert (db / "the user's notes.txt" if kind == "directory" else db).read_bytes() == original
    assert not _kept(db)


def test_the_reader_reads_a_read_only_file(paths: AppPaths) -> None:
    db = usage_db(paths)
    db.parent.mkdir(parents=True, exist_ok=True)
    _read_only(db)
    done = _usage(["usage", "--requests"], _unprivileged())
    assert done.returncode == 0, done.stderr
    assert " earlier " in done.stdout
    db.parent.chmod(0o555)  # not even the -shm index can be written: the file alone is read
    try:
        for side in db.parent.glob(db.name + "-*"):
            side.unlink()
        done = _usage(["usage", "--requests"], _unprivileged())
    finally:
        db.parent.chmod(0o755)
    assert done.returncode == 0, done.stderr
    assert " earlier " in done.stdout


def test_the_reader_reads_a_file_from_before_the_cache_record(paths: AppPaths) -> None:
    """An older file (no session/verdict columns) is read as it is, never migrated by a reader."""
    db = usage_db(paths)
    db.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(db)
    connection.executescript("""
        CREATE TABLE requests (id INTEGER PRIMARY KEY AUTOINCREMENT, time REAL NOT NULL, client TEXT,
          profile TEXT, upstream TEXT, model TEXT, status INTEGER, input_tokens INTEGER,
          cached_tokens INTEGER, output_tokens INTEGER, ttft_ms REAL, tokens_per_s REAL, duration_ms REAL,
          failover TEXT, cost REAL, error TEXT);""")
    connection.execute("INSERT INTO requests (time, profile, status, input_tokens, cached_tokens) "
                       "VALUES (?, 'old', 200, 100, 80)", (time.time(),))
    connection.commit()
    connection.close()
    before = db.read_bytes()
    done = _usage(["usage", "--json"])
    assert done.returncode == 0, done.stderr
    assert '"profile": "old"' in done.stdout
    assert '"verdict": null' in done.stdout
    assert _usage(["sessions"]).returncode == 0
    assert db.read_bytes() == before


def test_a_locked_older_file_is_not_taken_for_a_broken_one(paths: AppPaths) -> None:
    """An older file (it needs its new columns added) that another program holds locked as the gateway
    starts is kept in place: the store opens it once the lock is gone, and rows from then on are stored."""
    db = usage_db(paths)
    db.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(db)
    connection.executescript("""
        CREATE TABLE requests (id INTEGER PRIMARY KEY AUTOINCREMENT, time REAL NOT NULL, client TEXT,
          profile TEXT, upstream TEXT, model TEXT, status INTEGER, input_tokens INTEGER,
          cached_tokens INTEGER, output_tokens INTEGER, ttft_ms REAL, tokens_per_s REAL, duration_ms REAL,
          failover TEXT, cost REAL, error TEXT);""")
    connection.close()
    holder = sqlite3.connect(db, isolation_level=None, timeout=0)
    holder.execute("BEGIN IMMEDIATE")
    try:
        store = UsageStore(db, busy_timeout=0.2)
        assert store.add(UsageRow(time.time(), "claude", "while-locked", None, "m", 200)) is False
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    try:
        assert store.add(UsageRow(time.time(), "claude", "after", None, "m", 200, session="s1"))
    finally:
        store.close()
    assert not _kept(db)
    assert [(row.profile, row.session) for row in query(db)] == [("after", "s1")]
    assert store.counters()["usage_errors"] == 1
