"""Python's cyclic garbage collector, run on the GUI thread only.

Left to itself, CPython collects whenever an allocation crosses a threshold, on whichever thread made
it. A window that has gone away but sits in a reference cycle (a widget and a lambda connected to one of
its signals, a controller and the helpers that hold it) is then freed on a worker thread — the gateway
check, a usage read — and its C++ Qt objects are destroyed off the thread that owns them: a segmentation
fault, sometimes, minutes later. So the app turns automatic collection off and a timer on the GUI thread
runs the same generational passes CPython would have run, judged by the same counts and thresholds.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

from PySide6.QtCore import QObject, QThread, QTimer, Slot

#: how often the GUI thread looks at the collector's counts (cycles wait at most this long)
CHECK_MS = 500


def generation_due(counts: tuple[int, int, int], thresholds: tuple[int, int, int]) -> int | None:
    """The generation CPython would collect now, or ``None`` when no count passed its threshold.

    CPython's rule on allocation: the oldest generation whose count passed its threshold (a first
    threshold of 0 turns collection off). Its extra check before a full pass — enough long-lived objects
    waiting — is not visible from Python; full passes stay rare anyway, as the older counts only grow
    with the younger passes this timer runs.
    """
    if thresholds[0] <= 0:
        return None
    for generation in (2, 1, 0):
        if counts[generation] > thresholds[generation]:
            return generation
    return None


class GuiThreadCollector(QObject):
    """Owns the collector's timing while it runs: ``start`` turns automatic collection off, ``stop``
    restores what was there before."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = CHECK_MS):
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._was_enabled: bool | None = None

    @property
    def running(self) -> bool:
        return self._timer.isActive()

    def start(self) -> None:
        """From the GUI thread: from now on only this object collects."""
        if QThread.currentThread() is not self.thread():
            raise RuntimeError("the collector must start on the thread that owns it (the GUI thread)")
        if self.running:
            return
        self._was_enabled = gc.isenabled()
        gc.disable()
        self._timer.start()

    def stop(self, *, collect: bool = True) -> None:
        """Collect once more here (unless the process is about to end: ``collect=False`` saves a full
        collection, 80-180 ms of a quit), then give collection back to CPython if it had it."""
        if not self.running:
            return
        self._timer.stop()
        if collect:
            gc.collect()
        if self._was_enabled:
            gc.enable()
        self._was_enabled = None

    @Slot()
    def _on_timer_timeout(self) -> None:
        if gc.isenabled():  # someone gave collection back to CPython (a library's own disable/enable)
            gc.disable()
        generation = generation_due(gc.get_count(), gc.get_threshold())
        if generation is None:
            return
        gc.collect(generation)


@contextlib.contextmanager
def collection_held() -> Iterator[None]:
    """No collection while the block runs (a burst of long-lived objects: nothing to free); afterwards
    collection is as it was — off again when the GUI-thread collector has it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
