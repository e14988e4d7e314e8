#!/usr/bin/env python3
"""The live log panel under a flood: event-loop stalls while a writer floods the watched file, and RSS.

Stall mode (default): the real window follows a real file while another process appends llama-server
lines at ``--rate`` lines/s. A 5 ms QTimer on the GUI thread records how late each tick fires; the
worst lateness is the longest the window was frozen. The same measurement with no writer runs first in
the same process, as the baseline. Target: max stall < 50 ms at 50,000 lines/s.

RSS mode (``--rss-lines N``): the writer appends as fast as it can until the panel's follower has read
N lines; the process RSS is sampled every million lines. Bounded memory means a flat curve.

    python3 benchmarks/ui_flood.py [--rate 50000] [--seconds 10]
    python3 benchmarks/ui_flood.py --rss-lines 10000000
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEMO_LOG = REPO / "tests" / "ui" / "data" / "llama_server_demo.log"

WRITER = r"""
import sys, time
path, rate, seconds, lines_file = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
lines = open(lines_file).read().splitlines()
block = 100 if rate else 2000
text = ("\n".join((lines * (block // len(lines) + 1))[:block]) + "\n").encode()
start = time.monotonic()
written = 0
with open(path, "ab", buffering=0) as out:
    while seconds <= 0 or time.monotonic() - start < seconds:
        if rate:
            due = start + written / rate
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        out.write(text)
        written += block
print(written, flush=True)
"""


def _env(home: Path) -> None:
    os.environ.update({"HOME": str(home), "KVSWITCH_CONFIG_DIR": str(home / "cfg"), "KVSWITCH_LANG": "en",
                       "KVSWITCH_NO_ERROR_DIALOGS": "1"})
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    sys.path.insert(0, str(REPO / "app"))


def _rss_mb(pid: int | None = None) -> float:
    import psutil  # noqa: PLC0415

    try:
        return float(psutil.Process(pid).memory_info().rss) / 2**20
    except psutil.Error:
        return 0.0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rate", type=int, default=50_000, help="lines per second the writer appends")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--baseline-seconds", type=float, default=3.0)
    parser.add_argument("--rss-lines", type=int, default=0, help="RSS mode: stop after this many lines")
    parser.add_argument("--collector", choices=("gui", "cpython"), default="gui",
                        help="who runs the cyclic collector: the GUI thread's timer, as the app does "
                             "(default), or CPython on allocation, as before")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kvswitch-flood-") as tmp:
        home = Path(tmp)
        _env(home)
        return run(home, args)


def run(home: Path, args: argparse.Namespace) -> int:
    from PySide6.QtCore import QElapsedTimer, QEventLoop, QTimer  # noqa: PLC0415

    from kvswitch.core.models import LogSource  # noqa: PLC0415
    from kvswitch.core.paths import AppPaths  # noqa: PLC0415
    from kvswitch.ui.app import create_application  # noqa: PLC0415
    from kvswitch.ui.shell.shell import AppShell  # noqa: PLC0415

    app = create_application()
    if args.collector == "gui":
        from kvswitch.ui.gui_collector import GuiThreadCollector  # noqa: PLC0415

        GuiThreadCollector(app).start()  # as ``run_app`` does
    shell = AppShell(AppPaths.default(), tray_available=False)
    window = shell.window
    window.show()
    window.tabs.setCurrentWidget(window.log_panel)
    log_file = home / "server.log"
    log_file.write_text("")
    panel = window.log_panel
    panel.bind(LogSource(kind="file", path=str(log_file)), "llama.cpp")
    appended = [0]
    panel.lines_appended.connect(lambda n: appended.__setitem__(0, appended[0] + n))

    def wait(ms: int) -> None:
        loop = QEventLoop()
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    busy: dict[str, list[float]] = {}

    def measure(seconds: float, name: str = "") -> list[float]:
        """Lateness (ms) of every 5 ms tick over ``seconds``; ``busy[name]``: the GUI thread's CPU time
        (ms) in each gap, which tells the window's own work from time the OS gave to other processes."""
        late: list[float] = []
        cpu: list[float] = busy.setdefault(name, [])
        clock = QElapsedTimer()
        clock.start()
        last = [clock.nsecsElapsed(), time.thread_time_ns()]

        def tick() -> None:
            now, now_cpu = clock.nsecsElapsed(), time.thread_time_ns()
            late.append(max(0.0, (now - last[0]) / 1e6 - 5.0))
            cpu.append((now_cpu - last[1]) / 1e6)
            last[0], last[1] = now, now_cpu

        timer = QTimer()
        timer.setInterval(5)
        timer.timeout.connect(tick)
        timer.start()
        wait(int(seconds * 1000))
        timer.stop()
        return late

    wait(500)
    if args.rss_lines:
        return rss_mode(args, log_file, panel, wait)
    idle = measure(args.baseline_seconds, "idle")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(log_file), str(args.rate), str(args.seconds),
                               str(DEMO_LOG)], stdout=subprocess.PIPE, text=True)
    flood = measure(args.seconds, "flood")
    written = int((writer.communicate(timeout=60)[0] or "0").strip() or 0)
    follower = panel._follower
    read = follower.lines_read if follower is not None else 0
    panel.stop()

    def summary(name: str, late: list[float], cpu: list[float]) -> str:
        q = statistics.quantiles(late, n=100)
        worst = max(range(len(late)), key=late.__getitem__)
        cpu_q = statistics.quantiles(cpu, n=100)
        return (f"{name}: max stall {late[worst]:.1f} ms (GUI thread busy {cpu[worst]:.1f} ms of it), "
                f"p99 {q[98]:.1f} ms, median {q[49]:.2f} ms ({len(late)} ticks); GUI thread CPU per gap: "
                f"max {max(cpu):.1f} ms, p99 {cpu_q[98]:.1f} ms")

    print(summary("idle baseline", idle, busy["idle"]))
    print(summary(f"flood {args.rate:,} lines/s", flood, busy["flood"]))
    print(f"writer appended {written:,} lines in {args.seconds:.0f} s; follower read {read:,}; view appended "
          f"{appended[0]:,} (view keeps {panel.view.document().blockCount():,}); table rows "
          f"{panel.events_model.rowCount():,}; lines not drawn (flood coalescing) {panel.dropped_lines:,}")
    print(f"RSS {_rss_mb():.0f} MB")
    return 0


def rss_mode(args: argparse.Namespace, log_file: Path, panel: object, wait: object) -> int:
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(log_file), "0", "0", str(DEMO_LOG)],
                              stdout=subprocess.DEVNULL)
    follower = panel._follower  # type: ignore[attr-defined]
    process = getattr(follower, "process", None)
    child = int(process.processId()) if process is not None else None
    samples = [(0, _rss_mb())]
    start = time.monotonic()
    next_mark = 1_000_000
    try:
        while follower.lines_read < args.rss_lines:
            wait(200)  # type: ignore[operator]
            if follower.lines_read >= next_mark:
                samples.append((follower.lines_read, _rss_mb()))
                reader = f"  reader process {_rss_mb(child):6.1f} MB" if child else ""
                print(f"{follower.lines_read:>12,} lines  RSS {samples[-1][1]:7.1f} MB{reader}  "
                      f"({time.monotonic() - start:.0f} s)", flush=True)
                next_mark += 1_000_000
            if log_file.stat().st_size > 2 << 30:
                log_file.write_bytes(b"")  # keep the disk in check; the follower sees a truncation
    finally:
        writer.kill()
        writer.wait()
        panel.stop()  # type: ignore[attr-defined]
    first = samples[1][1] if len(samples) > 1 else samples[0][1]
    print(f"after {follower.lines_read:,} lines: RSS {samples[-1][1]:.1f} MB (at 1M lines: {first:.1f} MB, "
          f"before: {samples[0][1]:.1f} MB); table rows {panel.events_model.rowCount():,}")  # type: ignore[attr-defined]
    return 0


if __name__ == "__main__":
    sys.exit(main())
