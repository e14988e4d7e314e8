"""Log engine benchmark: ``kvswitch log scan`` against ``grep -cE`` on the same big log, the time to show
the last 1,000 lines of it, and peak memory at two file sizes.

Usage: ``PYTHONPATH=app python3 benchmarks/log_scan.py [--size-mb 1024] [--keep DIR]``

The log is built from the real llama-server captures (``logbench_data``) in a temporary directory and
deleted afterwards. Figures are ratios against a baseline run on the same file in the same run, so they
compare across machines: scan throughput / grep throughput, peak RSS at size S / at size S/4.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "app"))

from logbench_data import write_log  # noqa: E402

from kvswitch.logs import LogAnalyzer  # noqa: E402
from kvswitch.logs.blocks import native_scan  # noqa: E402
from kvswitch.logs.parsers import anchors_for  # noqa: E402
from kvswitch.logs.sources import read_tail  # noqa: E402

APP = Path(__file__).resolve().parent.parent / "app"


def run_measured(
    command: list[str], stdout_path: str = os.devnull, extra_env: dict[str, str] | None = None
) -> tuple[float, int, int]:
    """(wall seconds, peak RSS in KiB of the process or its largest worker, exit code) of one child."""
    env = {**os.environ, "PYTHONPATH": str(APP), "LC_ALL": os.environ.get("LC_ALL", "C.UTF-8"),
           **(extra_env or {})}
    with open(stdout_path, "wb") as out:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _pid, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, usage.ru_maxrss, process.returncode


def scan_command(path: Path) -> list[str]:
    return [sys.executable, "-m", "kvswitch", "log", "scan", str(path), "--jsonl"]


def grep_command(path: Path) -> list[str]:
    keywords = "|".join(anchors_for("llama.cpp"))
    return ["grep", "-cE", keywords, str(path)]


def same_file(first: Path, second: Path) -> bool:
    with first.open("rb") as a, second.open("rb") as b:
        while True:
            block = a.read(1 << 20)
            if block != b.read(1 << 20):
                return False
            if not block:
                return True


def warm(path: Path) -> None:
    """Read the file once so both tools start from the page cache."""
    with path.open("rb") as handle:
        while handle.read(16 << 20):
            pass


def tail_seconds(path: Path, lines: int = 1000) -> tuple[float, int]:
    start = time.perf_counter()
    tail = read_tail(path, lines)
    analyzer = LogAnalyzer()
    events = 0
    for number, line in enumerate(tail, 1):
        events += len(analyzer.feed(line, number).events)
    return time.perf_counter() - start, len(tail)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024, help="size of the big log (default 1024 MB)")
    parser.add_argument("--keep", help="write the logs here and keep them (default: a temp dir, deleted)")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    args = parser.parse_args()
    if shutil.which("grep") is None:
        raise SystemExit("grep is needed as the baseline")
    if native_scan is None:
        raise SystemExit("the native block scanner is not built (pip install -e . with a C compiler)")
    directory = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="kvswitch-logbench-"))
    directory.mkdir(parents=True, exist_ok=True)
    try:
        results = run(directory, args.size_mb)
    finally:
        if not args.keep:
            shutil.rmtree(directory, ignore_errors=True)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        report(results)
    return 0


def run(directory: Path, size_mb: int) -> dict[str, float | int]:
    big = directory / "big.log"
    small = directory / "small.log"
    t0 = time.perf_counter()
    requests = write_log(big, size_mb << 20)
    write_log(small, max(size_mb // 4, 1) << 20)
    build = time.perf_counter() - t0
    size = big.stat().st_size
    warm(big)
    # grep stops at the first match when its output is /dev/null, so it writes to a real file
    grep_s, grep_rss, grep_rc = run_measured(grep_command(big), str(directory / "grep.out"))
    if grep_rc not in (0, 1):
        raise SystemExit(f"grep failed with exit code {grep_rc}")
    out = directory / "events.jsonl"
    scan_s, scan_rss, scan_rc = run_measured(scan_command(big), str(out))
    if scan_rc != 0:
        raise SystemExit(f"kvswitch log scan failed with exit code {scan_rc}")
    with out.open("rb") as handle:
        events = sum(1 for _ in handle) - 1
    pure_out = directory / "events-pure-python.jsonl"
    pure_s, _rss, pure_rc = run_measured(scan_command(big), str(pure_out), {"KVSWITCH_NATIVE_SCAN": "0"})
    if pure_rc != 0 or not same_file(out, pure_out):
        raise SystemExit("the pure-Python scan failed or wrote other lines than the native scan")
    pure_out.unlink()
    warm(small)
    _small_s, small_rss, _rc = run_measured(scan_command(small))
    tail_s, tail_lines = tail_seconds(big)
    return {
        "file_mb": round(size / (1 << 20), 1),
        "requests_written": requests,
        "events_found": events,
        "build_s": round(build, 2),
        "grep_s": round(grep_s, 3),
        "scan_s": round(scan_s, 3),
        "grep_mb_per_s": round(size / (1 << 20) / grep_s, 1),
        "scan_mb_per_s": round(size / (1 << 20) / scan_s, 1),
        "scan_vs_grep": round(grep_s / scan_s, 3),
        "scan_pure_python_s": round(pure_s, 3),
        "scan_pure_python_vs_grep": round(grep_s / pure_s, 3),
        "tail_1000_lines_s": round(tail_s, 4),
        "tail_lines": tail_lines,
        "rss_big_mib": round(scan_rss / 1024, 1),
        "rss_quarter_mib": round(small_rss / 1024, 1),
        "rss_big_vs_quarter": round(scan_rss / small_rss, 3),
        "grep_rss_mib": round(grep_rss / 1024, 1),
    }


def report(r: dict[str, float | int]) -> None:
    print(f"log: {r['file_mb']} MB, {r['requests_written']} requests written, {r['events_found']} found")
    print(f"grep -cE (cache keywords): {r['grep_s']} s ({r['grep_mb_per_s']} MB/s)")
    print(f"kvswitch log scan --jsonl: {r['scan_s']} s ({r['scan_mb_per_s']} MB/s)")
    print(f"  scan throughput / grep throughput = {r['scan_vs_grep']}  (target >= 0.5)")
    print(f"  without the native block scanner (KVSWITCH_NATIVE_SCAN=0, same output): "
          f"{r['scan_pure_python_s']} s, ratio {r['scan_pure_python_vs_grep']}")
    print(f"last 1,000 lines (seek from the end + classify): {r['tail_1000_lines_s']} s  (target < 0.3 s)")
    print(f"peak RSS of scan: {r['rss_big_mib']} MiB at full size, {r['rss_quarter_mib']} MiB at a quarter"
          f"  (ratio {r['rss_big_vs_quarter']}; 1.0 = independent of file size)")


if __name__ == "__main__":
    raise SystemExit(main())
