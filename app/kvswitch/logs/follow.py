"""The log reader process: follows one source, classifies every line, and streams batches to the app.

Run by ``kvswitch.ui.logs.log_worker.ProcessLogFollower`` as
``python -m kvswitch.logs.follow SOURCE_JSON KIND TAIL MAX_LINES``. It imports no Qt (it lives below the
``ui`` package for that reason), so a flood costs the reader only the log engine's own start-up.
Classifying a flood is CPU-bound Python; in a thread it would fight the GUI for the GIL (every Qt call
that releases the GIL then waits for the reader to give it back), so it runs in its own process and the
window only unpickles what it will show. Every ``INTERVAL_S`` it writes one frame to stdout:
a 4-byte big-endian length and a pickled dict (``lines``: the newest ``max_lines`` ClassifiedLines,
``dropped``: how many older lines it skipped, ``events``: every CacheEvent, ``status``, ``lines_read``).
It exits when its stdin closes (the app stopped it or died).
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import struct
import sys
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kvswitch.logs.analyzer import LogAnalyzer
    from kvswitch.logs.model import CacheEvent, ClassifiedLine

INTERVAL_S = 0.05
SLICE_LINES = 1000


class DrawBudget:
    """How many lines may be drawn now: bursts pass whole, a sustained flood is thinned to ``rate``.

    A token bucket: ``rate`` lines a second refill it up to ``burst``. A server printing a few hundred
    lines at start-up shows every one; 50,000 lines a second show ``rate`` of the newest, and the rest
    are counted as not drawn. The rate is what the window draws within its per-tick budget
    (``log_panel.DRAW_BUDGET_MS``) on a loaded machine; sending more would only be dropped there.
    """

    def __init__(self, rate: float = 2000.0, burst: int = 600):
        self.rate = rate
        self.burst = burst
        self._tokens = float(burst)
        self._last = time.monotonic()

    def take(self, wanted: int) -> int:
        now = time.monotonic()
        self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.rate)
        self._last = now
        granted = min(wanted, int(self._tokens))
        self._tokens -= granted
        return granted


def classify_lines(analyzer: LogAnalyzer, texts: list[str],
                   line_no: int) -> tuple[list[ClassifiedLine], list[CacheEvent], int]:
    """Feed ``texts`` to a ``LogAnalyzer``: (ClassifiedLines, CacheEvents, the last line number).

    Shared by the app's reader thread and this process, so both number and classify lines the same way.
    An event without a wall-clock time gets the server's own clock from the line that finished it
    (``CacheEvent.server_clock_ms``): the panel shows when the server handled each request, not when the
    panel read it. Only lines that finish a request are looked at, so the flood path pays nothing.
    """
    from dataclasses import replace  # noqa: PLC0415 - the reader process imports little at start-up

    from kvswitch.logs.parsers import server_clock_ms  # noqa: PLC0415

    classified: list[ClassifiedLine] = []
    events: list[CacheEvent] = []
    feed = analyzer.feed
    for text in texts:
        line_no += 1
        result = feed(text, line_no)
        classified.append(result.line)
        if result.events:
            clock = server_clock_ms(result.line.text)
            if clock is None:
                events.extend(result.events)
            else:
                events.extend(event if event.timestamp else replace(event, server_clock_ms=clock)
                              for event in result.events)
    return classified, events, line_no


def _watch_stdin(stop: threading.Event) -> None:
    try:
        while sys.stdin.buffer.read(1):
            pass
    except OSError:
        pass
    stop.set()


def _fast_pickling() -> None:
    """Pickle lines and events as constructor calls: the default for frozen slotted dataclasses
    rebuilds each object through ``dataclasses.fields()`` and costs the window ~20 µs per object."""
    import copyreg  # noqa: PLC0415
    import dataclasses  # noqa: PLC0415

    from kvswitch.logs.model import CacheEvent, ClassifiedLine  # noqa: PLC0415

    def reducer(cls: type) -> Any:
        names = tuple(f.name for f in dataclasses.fields(cls))

        def reduce(obj: Any) -> tuple[type, tuple[Any, ...]]:
            return cls, tuple(getattr(obj, name) for name in names)

        return reduce

    for cls in (ClassifiedLine, CacheEvent):
        copyreg.pickle(cls, reducer(cls))


def run(source_json: str, kind_hint: str | None, tail_lines: int, max_lines: int) -> int:
    from kvswitch.core.errors import KvSwitchError  # noqa: PLC0415 - only the reader process needs these
    from kvswitch.core.models import LogSource  # noqa: PLC0415
    from kvswitch.logs.analyzer import LogAnalyzer  # noqa: PLC0415
    from kvswitch.logs.sources import open_source  # noqa: PLC0415

    _fast_pickling()
    out = sys.stdout.buffer
    stop = threading.Event()

    def on_term(_signum: int, _frame: Any) -> None:
        raise SystemExit(0)  # unwinds through ``finally`` so a server we started is stopped too

    signal.signal(signal.SIGTERM, on_term)
    threading.Thread(target=_watch_stdin, args=(stop,), daemon=True).start()

    def send(frame: dict[str, Any]) -> None:
        data = pickle.dumps(frame, protocol=pickle.HIGHEST_PROTOCOL)
        out.write(struct.pack(">I", len(data)) + data)
        out.flush()

    try:
        reader = open_source(LogSource.model_validate(json.loads(source_json)), start_at_end=True,
                             tail_lines=tail_lines)
    except KvSwitchError as exc:
        send({"error": str(exc)})
        return 0
    analyzer = LogAnalyzer(kind_hint)
    budget = DrawBudget(burst=max_lines)
    line_no = 0
    status = None
    try:
        while not stop.is_set():
            started = time.monotonic()
            kept: deque[ClassifiedLine] = deque(maxlen=max_lines)
            events: list[CacheEvent] = []
            read = 0
            while time.monotonic() - started < INTERVAL_S:
                try:
                    lines = reader.read_lines()
                except KvSwitchError as exc:
                    status = str(exc)
                    lines = []
                if not lines:
                    break
                for start in range(0, len(lines), SLICE_LINES):  # a big read is not held classified twice
                    classified, found, line_no = classify_lines(analyzer, lines[start:start + SLICE_LINES],
                                                                line_no)
                    kept.extend(classified)
                    events.extend(found)
                read += len(lines)
            frame: dict[str, Any] = {"lines_read": line_no}
            if read:
                granted = budget.take(len(kept))
                lines_out = list(kept)[len(kept) - granted:] if granted else []
                frame.update(lines=lines_out, dropped=read - len(lines_out), events=events)
            if reader.status != status:
                frame["status"] = status = reader.status
            send(frame)
            remaining = INTERVAL_S - (time.monotonic() - started)
            if remaining > 0:
                stop.wait(remaining)
    except (BrokenPipeError, OSError):
        return 0
    finally:
        reader.close()
    return 0


def main() -> int:
    source_json, kind_hint, tail_lines, max_lines = sys.argv[1:5]
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    if hasattr(os, "nice"):
        # Background work: when a flood keeps this process busy, the window gets the CPU first.
        os.nice(10)
    return run(source_json, kind_hint or None, int(tail_lines), int(max_lines))


if __name__ == "__main__":
    sys.exit(main())
