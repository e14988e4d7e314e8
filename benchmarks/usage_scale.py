"""Usage store at scale (issue 28 item 10): ``kvswitch usage``, ``--json`` and ``--csv`` on a file of
1,000,000 rows, against a plain ``sqlite3`` query on the same file in the same run.

Usage: ``PYTHONPATH=app python3 benchmarks/usage_scale.py [--rows 1000000] [--sessions 1000000] [--runs 3]
[--keep DIR]``

The file is built through KV Switch's own schema (``usage_schema.connect``) in a temporary HOME, every
row within the last 22 hours, in time order (the default ``--since 1d`` then covers all of them: the
worst case), with 6 profiles, 2,000 sessions and the cache record's columns filled. Each command runs
as a child of the small launcher of ``tests/support/measured.py`` (so its peak RSS is its own, not the
parent's), output to a file that is then counted. Baselines, on the same file: ``sqlite3`` summing the
same columns per profile (for the summary), ``sqlite3 -json`` and ``sqlite3 -csv`` of every row (for
the streams); the summary's figures are the fastest of ``--runs`` runs (the streams run once); ratios
are KV Switch / baseline. The summary reads the hourly rollup (``usage/rollup.py``), which the
build fills the way the writer thread does for an existing file (``ensure_indexes``), so the shell's
full scan is the cost the rollup avoids, not a like-for-like query. Bounds (issue 28): the summary
under 2 s and 200 MB, the streams under 300 MB.

Sessions (issue 39): ``kvswitch sessions --source gateway`` and ``--json`` on a second file of
``--sessions`` distinct sessions of one request each (the old reader took 79 s / 817 MB and 98 s /
4.0 GB on a million), against ``sqlite3`` grouping the same file by session and client in the same
run (the SQL alone, without the summaries' sums). Bound: under 200 MB each, whatever the count.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "app"))

from kvswitch.core.paths import AppPaths  # noqa: E402
from kvswitch.usage.schema import COLUMNS, UsageRow, clean_values, connect, ensure_indexes  # noqa: E402
from support.measured import ADDRESS_SPACE_CAP, LAUNCHER  # noqa: E402

PROFILES = ("local-qwen", "local-gemma", "deepseek", "claude-sonnet", "gpt-5", "backup")
VERDICTS = ("HIT", "HIT", "HIT", "PARTIAL", "MISS", "COLD")
REASONS = {"HIT": None, "PARTIAL": "prefix_changed", "MISS": "evicted", "COLD": "cold"}
#: the plain sqlite3 shell (the launcher execs a path, not a name)
SQLITE = shutil.which("sqlite3") or "sqlite3"
#: the rows span the last 22 hours: the default ``--since 1d`` covers every one of them while the
#: measurements run (the worst case for the summary)
SPAN_S = 22 * 3600
BOUNDS = {"summary": (2.0, 200.0), "json": (None, 300.0), "csv": (None, 300.0), "sessions": (None, 200.0),
          "sessions_json": (None, 200.0)}


def build(db: Path, rows: int, seed: int = 7) -> float:
    """Write ``rows`` realistic rows in one transaction; the seconds it took."""
    started = time.perf_counter()
    rng = random.Random(seed)
    now = time.time()
    connection = connect(db)
    insert = f"INSERT INTO requests ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"

    step = SPAN_S / rows
    start = now - SPAN_S

    def generate(first: int, count: int) -> list[tuple[object, ...]]:
        batch = []
        for index in range(first, first + count):
            prompt = rng.randint(2_000, 60_000)
            verdict = rng.choice(VERDICTS)
            cached = {"HIT": prompt - rng.randint(10, 400), "PARTIAL": prompt // 2}.get(verdict, 0)
            # in time order, as the gateway appends them
            row = UsageRow(start + index * step + rng.uniform(0, step), rng.choice(("claude", "codex")),
                           rng.choice(PROFILES),
                           "http://127.0.0.1:8080/v1/messages", "qwen3-coder-30b-a3b", 200, prompt, cached,
                           rng.randint(1, 2_000), rng.uniform(50, 3_000), rng.uniform(5, 80),
                           rng.uniform(500, 60_000), None, 0.0, None, "claude-code", "2.1.332",
                           f"session-{rng.randint(1, 2_000):05d}", None, "header", max(cached, prompt - 500),
                           verdict, REASONS[verdict], None, None)
            batch.append(clean_values(row))
        return batch

    with connection:
        for first in range(0, rows, 50_000):
            connection.executemany(insert, generate(first, min(50_000, rows - first)))
    ensure_indexes(connection)  # as the gateway's writer does when it opens the file
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    return time.perf_counter() - started


def build_sessions(db: Path, sessions: int) -> float:
    """``sessions`` distinct sessions of one request each, in the last hour, written by SQL; seconds."""
    started = time.perf_counter()
    connection = connect(db)
    with connection:
        connection.execute(f"""
            WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < {sessions})
            INSERT INTO requests (time, client, profile, upstream, model, status, input_tokens, cached_tokens,
                                  output_tokens, ttft_ms, cost, client_name, session, verdict, reason,
                                  reusable_tokens)
            SELECT {time.time() - 3600} + i * 3000.0 / {sessions}, 'claude', 'local',
                   'http://127.0.0.1:8080/v1/messages', 'qwen3-coder-30b-a3b', 200, 20000, 18000, 50,
                   300.0, 0.0, 'claude-code', printf('session-%08d', i), 'PARTIAL', 'prefix_changed', 19000
            FROM k""")
    ensure_indexes(connection)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    return time.perf_counter() - started


def measure(argv: list[str], env: dict[str, str], out: Path) -> tuple[float, float, int, int]:
    """(wall s, peak RSS MB, exit, output lines) of one command, run by the small launcher."""
    with tempfile.TemporaryDirectory() as scratch, out.open("wb") as sink:
        report = Path(scratch) / "rusage"
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", LAUNCHER, str(report), str(ADDRESS_SPACE_CAP), *argv],
                       env=env, stdout=sink, stderr=subprocess.DEVNULL, check=False)
        elapsed = time.perf_counter() - started
        peak_kb, code = (int(value) for value in report.read_text().split())
    lines = 0
    with out.open("rb") as produced:
        while block := produced.read(1 << 20):
            lines += block.count(b"\n")
    out.unlink()
    return elapsed, peak_kb / 1024, code, lines


def fastest(runs: int, argv: list[str], env: dict[str, str], out: Path) -> dict[str, float]:
    results = [measure(argv, env, out) for _ in range(runs)]
    wall = min(r[0] for r in results)
    rss = max(r[1] for r in results)
    codes = {r[2] for r in results}
    return {"wall_s": round(wall, 3), "peak_rss_mb": round(rss, 1), "exit": max(codes),
            "lines": results[0][3]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--sessions", type=int, default=1_000_000,
                        help="distinct sessions in the sessions file (0: skip the sessions cases)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="build the file here and keep it")
    args = parser.parse_args()
    home = args.keep or Path(tempfile.mkdtemp(prefix="kvswitch-usage-scale-"))
    try:
        config = home / "config"
        env = {**os.environ, "HOME": str(home), "KVSWITCH_CONFIG_DIR": str(config),
               "PYTHONPATH": str(ROOT / "app"), "LC_ALL": "C.UTF-8"}
        os.environ["KVSWITCH_CONFIG_DIR"] = str(config)
        db = AppPaths.default().data_dir / "usage.sqlite3"
        db.parent.mkdir(parents=True, exist_ok=True)
        built_s = build(db, args.rows) if not db.exists() else 0.0
        since = time.time() - 86_400
        sums = ("SELECT profile, COUNT(*), SUM(CASE WHEN error IS NOT NULL OR status IS NULL OR "
                "status >= 400 THEN 1 ELSE 0 END), SUM(input_tokens), SUM(cached_tokens), "
                f"SUM(output_tokens), SUM(cost) FROM requests WHERE time >= {since} GROUP BY profile")
        every = f"SELECT * FROM requests WHERE time >= {since} ORDER BY id"
        kv = [sys.executable, "-m", "kvswitch"]
        cases = {
            "summary": (kv + ["usage"], [SQLITE, str(db), sums]),
            "json": (kv + ["usage", "--json"], [SQLITE, "-json", str(db), every]),
            "csv": (kv + ["usage", "--csv"], [SQLITE, "-csv", "-header", str(db), every]),
        }
        out = home / "out"
        report: dict[str, object] = {"rows": args.rows, "file_mb": round(db.stat().st_size / 2**20, 1),
                                     "build_s": round(built_s, 1), "sqlite": _sqlite_version()}
        envs = dict.fromkeys(cases, env)
        if args.sessions:
            session_home = home / "sessions-home"
            session_env = {**env, "HOME": str(session_home),
                           "KVSWITCH_CONFIG_DIR": str(session_home / "config")}
            session_db = session_home / "config" / "data" / "usage.sqlite3"
            session_db.parent.mkdir(parents=True, exist_ok=True)
            report["distinct_sessions"] = args.sessions
            sessions_built_s = build_sessions(session_db, args.sessions) if not session_db.exists() else 0.0
            report["sessions_build_s"] = round(sessions_built_s, 1)
            grouped = ("SELECT session, COALESCE(client_name, client), COUNT(*), MAX(id) FROM requests "
                       "GROUP BY 1, 2 ORDER BY MAX(id)")
            for name, form in (("sessions", []), ("sessions_json", ["--json"])):
                cases[name] = (kv + ["sessions", "--source", "gateway", "--since", "all", *form],
                               [SQLITE, *(["-json"] if form else []), str(session_db), grouped])
                envs[name] = session_env
        for name, (ours, baseline) in cases.items():
            runs = args.runs if name == "summary" else 1  # a stream of a million rows is long enough once
            mine = fastest(runs, ours, envs[name], out)
            base = fastest(runs, baseline, envs[name], out)
            wall_bound, rss_bound = BOUNDS[name]
            report[name] = {
                "kvswitch": mine, "sqlite3": base,
                "wall_ratio": round(mine["wall_s"] / base["wall_s"], 2) if base["wall_s"] else None,
                "rss_ratio": round(mine["peak_rss_mb"] / base["peak_rss_mb"], 2)
                if base["peak_rss_mb"] else None,
                "within_bounds": (wall_bound is None or mine["wall_s"] < wall_bound)
                and mine["peak_rss_mb"] < rss_bound and mine["exit"] == 0,
            }
        print(json.dumps(report, indent=2))
        return 0 if all(report[name]["within_bounds"] for name in cases) else 1  # type: ignore[index]
    finally:
        if args.keep is None:
            shutil.rmtree(home, ignore_errors=True)


def _sqlite_version() -> str:
    done = subprocess.run(["sqlite3", "--version"], capture_output=True, text=True, check=False)
    return done.stdout.split(" ")[0]


if __name__ == "__main__":
    raise SystemExit(main())
