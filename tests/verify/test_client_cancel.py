"""Cancel stops a running client promptly: the whole process group is killed, not waited for."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest

from kvswitch.verify.client_run import ClientCancelled, ClientFailed, _run


def test_cancel_kills_running_client_within_a_second(tmp_path: Path) -> None:
    sleep = shutil.which("sleep")
    assert sleep is not None
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    with pytest.raises(ClientCancelled):
        _run([sleep, "30"], tmp_path, {"PATH": "/usr/bin:/bin"}, 60.0, cancel)
    assert time.monotonic() - started < 1.5


def test_time_limit_still_stops_the_client(tmp_path: Path) -> None:
    sleep = shutil.which("sleep")
    assert sleep is not None
    started = time.monotonic()
    with pytest.raises(ClientFailed, match="did not finish a turn within"):
        _run([sleep, "30"], tmp_path, {"PATH": "/usr/bin:/bin"}, 0.5, threading.Event())
    assert time.monotonic() - started < 2.0


def test_finished_client_output_is_returned(tmp_path: Path) -> None:
    echo = shutil.which("echo")
    assert echo is not None
    done = _run([echo, "ready"], tmp_path, {"PATH": "/usr/bin:/bin"}, 10.0, threading.Event())
    assert done.returncode == 0
    assert done.stdout.strip() == "ready"
