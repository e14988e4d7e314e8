"""The GUI-thread collector: a cycle that a worker's allocations would have freed on the worker is freed
on the GUI thread instead, the passes follow CPython's own counts and thresholds, and stopping gives
collection back as it was. (CI once died with a segmentation fault when a controller left in a cycle by
one test was collected by the next test's gateway check on a worker.)"""

from __future__ import annotations

import gc
import threading
from typing import Any

import pytest
from PySide6.QtCore import QObject

from kvswitch.ui.gui_collector import GuiThreadCollector, collection_held, generation_due


class _Cycle:
    """Refers to itself, so only the cyclic collector frees it; says on which thread that happened."""

    def __init__(self, freed_on: list[str], qt_object: QObject | None = None):
        self.me = self
        self.freed_on = freed_on
        self.qt_object = qt_object

    def __del__(self) -> None:
        self.freed_on.append(threading.current_thread().name)


def _allocate_on_a_worker() -> list[list[int]]:
    """Container allocations on another thread, kept (the counts are allocations less deallocations),
    enough to cross the first threshold many times."""
    kept: list[list[int]] = []

    def churn() -> None:
        kept.extend([number] for number in range(gc.get_threshold()[0] * 20))

    worker = threading.Thread(target=churn, name="worker")
    worker.start()
    worker.join()
    return kept


@pytest.mark.parametrize(("counts", "thresholds", "expected"), [
    ((10, 0, 0), (700, 10, 10), None),
    ((701, 0, 0), (700, 10, 10), 0),
    ((701, 11, 0), (700, 10, 10), 1),
    ((5, 11, 0), (700, 10, 10), 1),  # the oldest due generation, as CPython picks it
    ((701, 11, 11), (700, 10, 10), 2),
    ((5000, 50, 50), (0, 10, 10), None),  # a first threshold of 0 turns collection off
])
def test_the_generation_due_is_the_one_cpython_would_collect(counts: tuple[int, int, int],
                                                             thresholds: tuple[int, int, int],
                                                             expected: int | None) -> None:
    assert generation_due(counts, thresholds) == expected


def test_without_it_a_workers_allocation_frees_the_cycle_on_the_worker(qapp: Any) -> None:
    """The control: what happens to a plain cycle when CPython collects on its own (the fixture's
    collector has it off: it is handed back to CPython for this test alone)."""
    previous = gc.isenabled()
    gc.enable()
    try:
        gc.collect()
        freed_on: list[str] = []
        _Cycle(freed_on)
        assert _allocate_on_a_worker()
        assert freed_on == ["worker"]
    finally:
        if not previous:
            gc.disable()


def test_a_cycle_holding_a_qt_object_is_freed_on_the_gui_thread(qtbot: Any) -> None:
    collector = GuiThreadCollector(interval_ms=20)
    collector.start()
    try:
        gc.collect()
        freed_on: list[str] = []
        destroyed: list[bool] = []
        qt_object = QObject()
        qt_object.destroyed.connect(lambda: destroyed.append(True))
        _Cycle(freed_on, qt_object)
        del qt_object
        kept = _allocate_on_a_worker()
        assert freed_on == []  # the worker's allocations did not collect
        qtbot.waitUntil(lambda: bool(freed_on), timeout=5_000)
        assert freed_on == [threading.main_thread().name]
        assert destroyed == [True]
        del kept
    finally:
        collector.stop()


def test_stopping_gives_collection_back_as_it_was(qapp: Any) -> None:
    outer = gc.isenabled()
    try:
        gc.enable()
        collector = GuiThreadCollector()
        collector.start()
        assert not gc.isenabled()
        with collection_held():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the load's hold does not hand collection back to CPython
        collector.stop()
        assert gc.isenabled()
        with collection_held():
            assert not gc.isenabled()
        assert gc.isenabled()
    finally:
        (gc.enable if outer else gc.disable)()


def test_it_refuses_to_start_off_the_gui_thread(qapp: Any) -> None:
    collector = GuiThreadCollector()
    failures: list[BaseException] = []

    def start_here() -> None:
        try:
            collector.start()
        except RuntimeError as exc:
            failures.append(exc)

    worker = threading.Thread(target=start_here)
    worker.start()
    worker.join()
    assert failures
    assert not collector.running
