"""Fixtures for the desktop app tests: offscreen Qt, no modal error dialogs, and a thread-leak guard."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["KVSWITCH_NO_ERROR_DIALOGS"] = "1"


@pytest.fixture(autouse=True)
def _no_dangling_threads() -> Iterator[None]:
    """Fail a test that leaves a worker running (napari's ``_dangling_qthreads`` idea)."""
    from kvswitch.ui import tasks

    before = {t.ident for t in threading.enumerate()}
    yield
    leaked = [t for t in threading.enumerate()
              if t.ident not in before and t.is_alive() and not isinstance(t, threading._DummyThread)]
    pool_busy = tasks._POOL is not None and tasks._POOL.activeThreadCount() > 0
    if pool_busy:
        tasks.drain(5000)
    assert not leaked, f"threads outlived the test: {[t.name for t in leaked]}"
    assert not pool_busy, "a background task outlived the test"


@pytest.fixture
def paths(fake_home: Path) -> Any:
    from kvswitch.core.paths import AppPaths

    return AppPaths.default()


@pytest.fixture
def store(paths: Any) -> Any:
    from kvswitch.core.store import ProfileStore

    return ProfileStore(paths)


@pytest.fixture
def controller(qtbot: Any, paths: Any, store: Any) -> Iterator[Any]:
    from kvswitch.ui.controller import AppController

    ctrl = AppController(paths, store=store)
    yield ctrl
    ctrl.shutdown()


@pytest.fixture
def window(qtbot: Any, controller: Any) -> Iterator[Any]:
    from kvswitch.ui.main_window import MainWindow

    win = MainWindow(controller)
    qtbot.addWidget(win)
    win.show()
    yield win
    win.log_panel.stop()
