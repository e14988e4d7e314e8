"""Log engine benchmark, per log format: ``kvswitch log scan --jsonl`` against ``grep -cE`` on the same
big log, peak memory at two file sizes, the time to show the last 1,000 lines, and blank-line input.

Usage: ``PYTHONPATH=app python3 benchmarks/log_scan.py [--size-mb 200] [--only NAME ...] [--keep DIR]``

Every ``*.log`` under ``tests/fixtures/llama.cpp-b11434/`` (new captures included) is grouped by its
configuration (``configuration_of``); each group's captures are repeated to ``--size-mb`` in a temporary
directory, deleted afterwards. Figures are ratios against a baseline run on the same file in the same
run, so they compare across machines: scan throughput / grep throughput (each the fastest of ``RUNS``
runs), peak RSS at size S / at S/4.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "app"))


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


FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "llama.cpp-b11434"
#: the configuration a capture's name says: ``llama_server_np1_trace_lv4.log`` and ``formats/trace_lv4.log``
#: are both ``trace_lv4``; ``np1_anthropic`` (default flags, another endpoint) is ``default``
_ALIASES = {"anthropic": "default", "np4_default": "np4"}


def configuration_of(log: Path) -> str:
    name = re.sub(r"^llama_server_", "", log.stem)
    name = re.sub(r"^np1_", "", name)
    name = re.sub(r"[_-]\d+$", "", name)
    return _ALIASES.get(name, name)


def captures_by_configuration(directory: Path = FIXTURES) -> dict[str, list[Path]]:
    groups: dict[str, list[Path]] = {}
    for log in sorted(directory.rglob("*.log")):
        groups.setdefault(configuration_of(log), []).append(log)
    return groups


def write_repeated(path: Path, captures: list[Path], size_bytes: int) -> int:
    """Repeat the captures (whole, in turn) until ``size_bytes``; returns the number of copies."""
    unit = b"".join(capture.read_bytes() for capture in captures)
    unit = unit if unit.endswith(b"\n") else unit + b"\n"
    copies = max(size_bytes // len(unit), 1)
    block = unit * max((8 << 20) // len(unit), 1)
    with path.open("wb") as out:
        written = 0
        while written + len(block) <= copies * len(unit):
            out.write(block)
            written += len(block)
        out.write(unit * ((copies * len(unit) - written) // len(unit)))
    return copies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=200, help="size of each configuration's log (200 MB)")
    parser.add_argument("--only", nargs="*", help="configurations to run (default: every one found)")
    parser.add_argument("--keep", help="write the logs here and keep them (default: a temp dir, deleted)")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    args = parser.parse_args()
    if shutil.which("grep") is None:
        raise SystemExit("grep is needed as the baseline")
    if native_scan is None:
        raise SystemExit("the native block scanner is not built (pip install -e . with a C compiler)")
    directory = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="kvswitch-logbench-"))
    directory.mkdir(parents=True, exist_ok=True)
    results: dict[str, object] = {}
    try:
        for name, captures in captures_by_configuration().items():
            if args.only and name not in args.only:
                continue
            results[name] = run_configuration(directory, name, captures, args.size_mb)
            if not args.json:
                report_configuration(name, results[name])  # type: ignore[arg-type]
        results["memory"] = run_memory(directory, captures_by_configuration()["default"], args.size_mb)
        results["blank_lines"] = run_blank_lines(directory)
        results["jsonl_fit_end"] = run_jsonl_fit_end(directory, args.size_mb)
    finally:
        if not args.keep:
            shutil.rmtree(directory, ignore_errors=True)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(json.dumps({key: results[key] for key in ("memory", "blank_lines", "jsonl_fit_end")}, indent=2))
    return 0


#: each tool runs this many times on the file and its fastest run counts: a busy machine slows single
#: runs by up to half, and the fastest of a few is what each tool can do there
RUNS = 3


def _grep_and_scan(directory: Path, log: Path) -> tuple[float, float, int, int]:
    """(grep seconds, scan seconds, scan peak RSS KiB, events) on one warm file, fastest of ``RUNS``."""
    warm(log)
    grep_times, scan_times, scan_rss = [], [], 0
    out = directory / "events.jsonl"
    for _ in range(RUNS):
        # grep stops at the first match when its output is /dev/null, so it writes to a real file
        grep_s, _rss, grep_rc = run_measured(grep_command(log), str(directory / "grep.out"))
        if grep_rc not in (0, 1):
            raise SystemExit(f"grep failed with exit code {grep_rc}")
        scan_s, rss, scan_rc = run_measured(scan_command(log), str(out))
        if scan_rc != 0:
            raise SystemExit(f"kvswitch log scan failed with exit code {scan_rc}")
        grep_times.append(grep_s)
        scan_times.append(scan_s)
        scan_rss = max(scan_rss, rss)
    with out.open("rb") as handle:
        events = sum(1 for _ in handle) - 1
    out.unlink()
    return min(grep_times), min(scan_times), scan_rss, events


def run_configuration(
    directory: Path, name: str, captures: list[Path], size_mb: int
) -> dict[str, float | int]:
    log = directory / f"{name}.log"
    write_repeated(log, captures, size_mb << 20)
    size_mb_real = log.stat().st_size / (1 << 20)
    grep_s, scan_s, scan_rss, events = _grep_and_scan(directory, log)
    log.unlink()
    return {
        "captures": len(captures), "file_mb": round(size_mb_real, 1), "events": events,
        "grep_s": round(grep_s, 3), "scan_s": round(scan_s, 3),
        "scan_mb_per_s": round(size_mb_real / scan_s, 1), "scan_vs_grep": round(grep_s / scan_s, 3),
        "rss_mib": round(scan_rss / 1024, 1),
    }


def run_memory(directory: Path, captures: list[Path], size_mb: int) -> dict[str, float]:
    """Peak RSS of the scan at full size and at a quarter, and the tail time, on the default format."""
    big, small = directory / "rss-big.log", directory / "rss-small.log"
    write_repeated(big, captures, size_mb << 20)
    write_repeated(small, captures, max(size_mb // 4, 1) << 20)
    _s, big_rss, _rc = run_measured(scan_command(big))
    _s, small_rss, _rc = run_measured(scan_command(small))
    tail_s, _lines = tail_seconds(big)
    big.unlink()
    small.unlink()
    return {"rss_big_mib": round(big_rss / 1024, 1), "rss_quarter_mib": round(small_rss / 1024, 1),
            "rss_big_vs_quarter": round(big_rss / small_rss, 3), "tail_1000_lines_s": round(tail_s, 4)}


def run_blank_lines(directory: Path) -> dict[str, float]:
    """1 MB and 4 MB of bare newlines: the scan must grow linearly (it was quadratic)."""
    found: dict[str, float] = {}
    for mb in (1, 4):
        log = directory / f"blank-{mb}.log"
        log.write_bytes(b"\n" * (mb << 20))
        found[f"blank_{mb}mb_s"] = round(run_measured(scan_command(log))[0], 3)
        log.unlink()
    return found


_FIT = (b'{"type":"fit_memory_breakdown","data":{"unit":"MiB","rows":[{"kind":"host","name":"Host",'
        b'"self":41}]}}\n')


def write_jsonl_fit_end(path: Path, size_bytes: int) -> None:
    """The real ``--log-jsonl`` capture repeated to ``size_bytes``, ending with a complete
    ``fit_memory_breakdown`` record, padded so the scanner's last sample starts at a ``{`` inside one:
    the shape that took 60-70 s at 200 MB while the same file with its last line cut took 0.5 s."""
    from kvswitch.logs import scan  # noqa: PLC0415

    src = (FIXTURES / "llama_server_cc_jsonl.log").read_bytes()
    body = src * max(size_bytes // len(src), 2)
    sample = scan._SAMPLE_BYTES  # noqa: SLF001 - the window whose alignment matters
    inner = body.find(b'{"kind"', len(body) - sample + 2048)
    pad = inner + sample - len(body) - len(_FIT)
    head, tail = b'{"type":"log","time":1,"level":"info","msg":"srv  operator(): ', b'\\n"}\n'
    lines = []
    while pad > 0:
        take = min(pad, 1024) if pad - min(pad, 1024) == 0 or pad - 1024 >= 200 else pad - 200
        lines.append(head + b"." * (take - len(head) - len(tail)) + tail)
        pad -= take
    path.write_bytes(body + b"".join(lines) + _FIT)


def run_jsonl_fit_end(directory: Path, size_mb: int) -> dict[str, float]:
    """The log ending in a complete ``fit_memory_breakdown`` record against the same log cut short."""
    log, cut = directory / "jsonl-fit.log", directory / "jsonl-fit-cut.log"
    write_jsonl_fit_end(log, size_mb << 20)
    with log.open("rb") as handle, cut.open("wb") as out:
        shutil.copyfileobj(handle, out)
        out.truncate(log.stat().st_size - 20)
    grep_s, scan_s, _rss, _events = _grep_and_scan(directory, log)
    _g, cut_s, _rss, _events = _grep_and_scan(directory, cut)
    log.unlink()
    cut.unlink()
    return {"file_mb": round((size_mb << 20) / (1 << 20), 1), "grep_s": round(grep_s, 3),
            "complete_s": round(scan_s, 3), "cut_s": round(cut_s, 3),
            "complete_vs_cut": round(scan_s / cut_s, 3), "scan_vs_grep": round(grep_s / scan_s, 3)}


def report_configuration(name: str, r: dict[str, float | int]) -> None:
    print(f"{name:18} {r['file_mb']:7.1f} MB  grep {r['grep_s']:7.3f} s  scan {r['scan_s']:8.3f} s "
          f"({r['scan_mb_per_s']:6.1f} MB/s)  scan/grep {r['scan_vs_grep']:.3f}  RSS {r['rss_mib']} MiB",
          flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
