"""The issue-20 reproduction table: each hostile case run as a real ``kvswitch`` subprocess.

Prints case, exit code, wall time and peak RSS (the kernel's ``ru_maxrss``) for every command that
talks to a server, against the hostile loopback servers of ``tests/support/hostile_servers.py``, and
the URL-password and argv cases. Run from the repository root: ``python scripts/hostile_repro.py``.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))

from hostile_servers import HostileServer  # noqa: E402
from measured import run_kvswitch  # noqa: E402

SERVER_CASES = [
    ("double_gzip", "test", 10), ("double_gzip", "models", 10), ("double_gzip", "verify", 10),
    ("double_gzip", "detect", 10), ("double_gzip", "diagnose", 10),
    ("slow_headers", "test", 5), ("slow_headers", "models", 5), ("slow_headers", "verify", 5),
    ("slow_headers", "detect", 5), ("slow_headers", "diagnose", 5),
    ("escapes", "test", 5), ("escapes", "models", 5),
]


def command(what: str, server: HostileServer, timeout: int) -> list[str]:
    return {
        "test": ["test", "h", "--timeout", str(timeout)],
        "models": ["models", "h", "--timeout", str(timeout)],
        "verify": ["verify", "h", "--timeout", str(timeout), "--no-claude-replay"],
        "detect": ["detect", "--port", str(server.port), "--no-processes", "--timeout", "1"],
        "diagnose": ["diagnose", str(REQ), str(REQ), "--server", server.url, "--server-timeout",
                     str(timeout)],
    }[what]


def main() -> int:
    global REQ
    home = Path(tempfile.mkdtemp(prefix="kvswitch-hostile-"))
    env = {"HOME": str(home), "PATH": os.environ["PATH"], "LANG": "C.UTF-8",
           "PYTHONPATH": str(ROOT / "app")}
    REQ = home / "req.json"
    REQ.write_text('{"model": "m", "messages": [{"role": "user", "content": "hi"}]}')
    print(f"{'case':<34} {'exit':>5} {'time s':>7} {'RSS MB':>7}  first line")
    for mode, what, timeout in SERVER_CASES:
        with HostileServer(mode) as server:
            run_kvswitch(["profile", "add", "h", "--kind", "llama.cpp", "--base-url", server.url,
                          "--model", "m", "--target", "claude"], env)
            got = run_kvswitch(command(what, server, timeout), env, timeout=timeout * 3 + 20)
            run_kvswitch(["profile", "remove", "h"], env)
        line = (got.stderr.strip() or got.stdout.strip()).splitlines()[-1:] or [""]
        print(f"{mode + ' ' + what:<34} {got.code!s:>5} {got.elapsed:7.1f} {got.peak_rss_mb:7.0f}  "
              f"{ascii(line[0][:90])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
