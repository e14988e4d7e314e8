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


#: a worker that is already finishing when its test ends gets this long before it counts as leaked
GRACE_S = 3.0


@pytest.fixture(autouse=True)
def _no_dangling_threads() -> Iterator[None]:
    """Fail a test that leaves a worker running (napari's ``_dangling_qthreads`` idea).

    A background task that is still unwinding at teardown (a cancelled probe closing its socket) gets a
    short grace period; one still running after it is a leak and fails the test.
    """
    from kvswitch.ui.control import tasks

    before = {t.ident for t in threading.enumerate()}
    yield
    leaked = []
    for thread in threading.enumerate():
        if thread.ident in before or isinstance(thread, threading._DummyThread):
            continue
        thread.join(GRACE_S)
        if thread.is_alive():
            leaked.append(thread.name)
    pool_busy = tasks._POOL is not None and not tasks.drain(int(GRACE_S * 1000))
    assert not leaked, f"threads outlived the test: {leaked}"
    assert not pool_busy, "a background task outlived the test"


@pytest.fixture(autouse=True)
def _app_look_restored(qapp: Any) -> Iterator[None]:
    """A test that applies a theme (a shell reads the settings) leaves the next one the look it had."""
    from kvswitch.ui.widgets import appearance

    palette, style = qapp.palette(), qapp.style().name()
    yield
    appearance._state.pop("choice", None)
    appearance._state.pop("scheme", None)
    if qapp.style().name() != style:
        qapp.setStyle(style)
    qapp.setPalette(palette)


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
    from kvswitch.ui.control.controller import AppController

    ctrl = AppController(paths, store=store)
    yield ctrl
    ctrl.shutdown()


@pytest.fixture
def window(qtbot: Any, controller: Any) -> Iterator[Any]:
    from kvswitch.ui.shell.main_window import MainWindow

    win = MainWindow(controller)
    qtbot.addWidget(win)
    win.show()
    yield win
    win.log_panel.stop()
