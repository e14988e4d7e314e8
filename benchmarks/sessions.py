"""How fast and how lean the session readers are on a large history (issue 35), as ratios of one run.

Usage: ``python benchmarks/sessions.py [--files 5000] [--mb 1000] [--ccusage PATH] [--keep DIR]``

A corpus of ``--files`` Claude Code transcripts (about ``--mb`` MB in all) is made by replaying the real
lines of ``tests/fixtures/sessions-2026-12`` (Claude Code 2.1.332 against llama-server b11434) under new
session and request ids, in a throw-away HOME. Measured, each in a fresh child process so its peak RSS is
its own: the first index (``index_sessions``: every file read), a re-read after one line was appended to
one file (the incremental pass), and ``list_sessions`` over everything; with ``--ccusage`` (18.0.11, from
scripts/install_ccusage.sh) also ``ccusage session --json --offline`` on the same corpus. Printed: seconds,
peak RSS (MB) and the ratios the issue asks for (first index ÷ ccusage, re-read in ms).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "sessions-2026-12" / "claude" / "projects"
#: re-reads measured (one line appended before each); the median is printed
REREADS = 5
_SESSION_ID = re.compile(r'"sessionId":"[^"]*"')
_CHILD = """
import json, resource, sys, time
from pathlib import Path
from kvswitch.core.paths import AppPaths
from kvswitch.sessions import ClientHomes, index_sessions, list_sessions
home, what = Path(sys.argv[1]), sys.argv[2]
paths = AppPaths.default(home / "kvswitch")
homes = ClientHomes(home / ".claude" / "projects", home / ".codex" / "sessions", home / "none.db")
started = time.perf_counter()
if what == "list":
    found = len(list_sessions(paths))
elif what == "scan":  # the floor of any re-read: list every folder and stat every file, nothing else
    import os
    found = sum(os.stat(os.path.join(d, n)) is not None for d, _, names in os.walk(homes.claude_projects)
                for n in names if n.endswith(".jsonl"))
else:
    report = index_sessions(paths, homes)
    found = report.files_read
elapsed = time.perf_counter() - started
print(json.dumps({"seconds": elapsed, "found": found,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def real_lines() -> list[str]:
    """Every line of the captured Claude transcripts (the corpus's material)."""
    lines: list[str] = []
    for path in sorted(FIXTURES.rglob("*.jsonl")):
        lines += [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not lines:
        sys.exit(f"benchmarks/sessions.py: no captured transcripts under {FIXTURES}")
    return lines


def make_corpus(home: Path, files: int, megabytes: int) -> int:
    """``files`` transcripts of about ``megabytes`` MB in all, real lines under new ids; bytes written."""
    lines = real_lines()
    per_file = megabytes * 1_000_000 // files
    written = 0
    for number in range(files):
        session = str(uuid.UUID(int=number + 1))
        folder = home / ".claude" / "projects" / f"-tmp-bench-project-{number % 50}"
        folder.mkdir(parents=True, exist_ok=True)
        chunks, size, index = [], 0, 0
        while size < per_file:
            line = lines[index % len(lines)]
            tag = f"{number}-{index // len(lines)}-"  # each replayed cycle: new request ids
            index += 1
            for key in ('"id":"', '"requestRef":"', '"base":"'):
                line = line.replace(key, key + tag)
            text = _SESSION_ID.sub(f'"sessionId":"{session}"', line) + "\n"
            chunks.append(text)
            size += len(text)
        data = "".join(chunks).encode()
        (folder / f"{session}.jsonl").write_bytes(data)
        written += len(data)
    return written


def child(home: Path, what: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "app")}
    run = subprocess.run(
        [sys.executable, "-c", _CHILD, str(home), what],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=3600,
    )
    return json.loads(run.stdout.strip().splitlines()[-1])


def ccusage(binary: Path, home: Path) -> dict[str, float]:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
    started = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    subprocess.run(
        [str(binary), "session", "--json", "--offline"],
        env=env,
        capture_output=True,
        check=True,
        timeout=3600,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"seconds": time.perf_counter() - started, "rss_mb": max(after, before) / 1024}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--mb", type=int, default=1000, help="the corpus's size in MB (default 1000)")
    parser.add_argument("--ccusage", type=Path, help="ccusage 18.0.11's entry script (install_ccusage.sh)")
    parser.add_argument("--keep", type=Path, help="make the corpus here and keep it")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="kvswitch-sessions-bench-"))
    try:
        home = root / "home"
        started = time.perf_counter()
        size = make_corpus(home, args.files, args.mb)
        made = time.perf_counter() - started
        print(f"corpus: {args.files:,} files, {size / 1e6:,.0f} MB of real lines ({made:.0f} s)")
        first = child(home, "index")
        print(f"first index: {first['seconds']:.2f} s, peak RSS {first['rss_mb']:.0f} MB")
        victim = next((home / ".claude" / "projects").rglob("*.jsonl"))
        rereads, scans = [], []
        for _ in range(REREADS):  # each in a fresh process, as the CLI runs it; the median is printed
            with victim.open("a", encoding="utf-8") as handle:
                handle.write(real_lines()[-1] + "\n")
            rereads.append(child(home, "index"))
            scans.append(child(home, "scan"))
        again = sorted(rereads, key=lambda run: run["seconds"])[REREADS // 2]
        scan = sorted(run["seconds"] for run in scans)[REREADS // 2]
        print(
            f"re-read after one appended line: {again['seconds'] * 1000:.0f} ms "
            f"({again['found']:.0f} file read, median of {REREADS}), peak RSS {again['rss_mb']:.0f} MB; "
            f"a bare walk + stat of every file: {scan * 1000:.0f} ms; "
            f"ratio re-read / bare walk: {again['seconds'] / scan:.2f}, "
            f"re-read / first index: {again['seconds'] / first['seconds']:.4f}"
        )
        listed = child(home, "list")
        print(
            f"list_sessions: {listed['seconds']:.2f} s for {listed['found']:.0f} sessions, "
            f"peak RSS {listed['rss_mb']:.0f} MB"
        )
        if args.ccusage:
            theirs = ccusage(args.ccusage, home)
            print(
                f"ccusage session --json --offline: {theirs['seconds']:.2f} s, "
                f"peak RSS {theirs['rss_mb']:.0f} MB"
            )
            print(f"ratio first index / ccusage: {first['seconds'] / theirs['seconds']:.2f} (issue: <= 1)")
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
