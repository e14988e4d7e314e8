"""The usage writer's throughput with and without the hourly rollup (issue 28: the rollup must not slow
the gateway's write path noticeably).

Usage: ``PYTHONPATH=app python3 benchmarks/usage_writer.py [--rows 20000] [--runs 5]``

Writes the same rows into two fresh files in the same run, as the writer thread does (``executemany``
of a batch, then one commit), once without and once with ``usage_rollup.add`` in the transaction; with
one row per commit (a request at a time, the gateway's usual case) and 500 (a burst). Prints rows/s
and the ratio (with rollup / without); the fastest of ``--runs`` interleaved runs of each.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "app"))

from kvswitch.usage import rollup as usage_rollup  # noqa: E402
from kvswitch.usage.schema import COLUMNS, UsageRow, clean_values, connect, ensure_indexes  # noqa: E402

_INSERT = f"INSERT INTO requests ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"


def rows(count: int) -> list[tuple[object, ...]]:
    now = time.time()
    return [clean_values(UsageRow(now - 7200 + index * 0.5, "claude", f"p{index % 4}", "http://u/v1", "m",
                                  200, 30_000, 29_000, 500, 300.0, 40.0, 2_000.0, cost=0.001, session="s",
                                  verdict="HIT")) for index in range(count)]


def run(values: list[tuple[object, ...]], batch: int, rollup: bool) -> float:
    """Rows per second written into a fresh file."""
    with tempfile.TemporaryDirectory() as scratch:
        connection = connect(Path(scratch) / "usage.sqlite3")
        ensure_indexes(connection)
        started = time.perf_counter()
        for first in range(0, len(values), batch):
            chunk = values[first:first + batch]
            connection.executemany(_INSERT, chunk)
            if rollup:
                usage_rollup.add(connection, chunk, len(chunk))
            connection.commit()
        elapsed = time.perf_counter() - started
        connection.close()
    return len(values) / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    values = rows(args.rows)
    report: dict[str, object] = {"rows": args.rows}
    for batch in (1, 500):
        without = with_rollup = 0.0
        for _ in range(args.runs):  # interleaved, so that a burst of load on the machine hits both alike
            without = max(without, run(values, batch, False))
            with_rollup = max(with_rollup, run(values, batch, True))
        report[f"batch_{batch}"] = {"rows_per_s_without": round(without),
                                    "rows_per_s_with_rollup": round(with_rollup),
                                    "ratio": round(with_rollup / without, 3),
                                    "extra_us_per_row": round(1e6 / with_rollup - 1e6 / without, 1)}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
