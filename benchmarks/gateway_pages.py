"""How long the gateway's reads of servers' ``/metrics`` pages hold its event loop, per page shape.

Usage: ``PYTHONPATH=app python3 benchmarks/gateway_pages.py [--reads 200] [--json]``

The gateway reads a local upstream's page (and its cache tier's) around every request it forwards, on
the same event loop that relays every other request's bytes. This runs the record's own reader
(``gateway.truth.pages``: the bounded GET, then ``page_values``) against a loopback server handing out
each page shape users' servers send: llama-server b11434's, vLLM 0.32.0's and LMCache 0.5.6's real pages
(``tests/fixtures``), and a 2 MB page (the reader's bound, what only a broken or hostile server sends).
The pages are served by another process (a kept-alive HTTP/1.1 server), so only the reader's work is
on the measured loop. Alongside, a small task wakes every millisecond, as a relayed request's next
chunk would, and records how late each wake-up was. The baseline is the same probe in the same run
with the reader doing a loopback GET of a 2-byte page, so figures compare across machines: each
shape's worst and 99th percentile lateness, and the ratio of its median read time to the baseline's.
The 2 MB page is also parsed in place, as the record did before ``INLINE_PARSE_CHARS``, to show what
the thread saves.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "app"))

from gateway_peers import free_port  # noqa: E402

from kvswitch.core.prometheus import parse_samples  # noqa: E402
from kvswitch.gateway.truth.pages import PageReader, page_values  # noqa: E402
from kvswitch.gateway.truth.tier_record import MAX_PAGE_BYTES  # noqa: E402

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
TICK_S = 0.001


def shapes() -> dict[str, str]:
    vllm = (FIXTURES / "lmcache-0.5.6" / "cold-vllm-after.txt").read_text()
    llama = FIXTURES / "llama.cpp-b11434" / "responses" / "metrics.txt"
    pages = {
        "baseline (2-byte page)": "#\n",
        "vLLM 0.32.0 with LMCache connected": vllm,
        "LMCache 0.5.6 (its --http-port page)": (FIXTURES / "lmcache-0.5.6" / "metrics-l1-hit.txt").read_text(
            encoding="utf-8"),
    }
    pages["llama-server b11434"] = llama.read_text()
    big = (vllm * (MAX_PAGE_BYTES // len(vllm) + 1))[: MAX_PAGE_BYTES - 1]
    pages["2 MB (the reader's bound)"] = big
    return pages


async def _probe(stop: asyncio.Event, late: list[float]) -> None:
    """Wakes every ``TICK_S``; how late each wake-up came is how long the loop was held."""
    while not stop.is_set():
        due = time.perf_counter() + TICK_S
        await asyncio.sleep(TICK_S)
        late.append(max(0.0, time.perf_counter() - due))


async def _measure(url: str, reads: int, in_place: bool) -> dict[str, float]:
    reader = PageReader(2.0, MAX_PAGE_BYTES)
    stop, late, took = asyncio.Event(), [], []
    probe = asyncio.create_task(_probe(stop, late))
    try:
        await reader.get(url, "")  # the connection opened, as the record's kept-alive pool has it
        for _ in range(reads):
            start = time.perf_counter()
            text = await reader.get(url, "")
            _values = parse_samples(text) if in_place else await page_values(text)
            took.append(time.perf_counter() - start)
            await asyncio.sleep(0.002)  # requests are apart; the probe runs between them too
    finally:
        stop.set()
        await probe
        await reader.close()
    late.sort()
    return {"read_median_ms": statistics.median(took) * 1e3, "loop_late_max_ms": late[-1] * 1e3,
            "loop_late_p99_ms": late[int(len(late) * 0.99)] * 1e3}


#: the page server: every file under its folder at ``/<name>``, kept alive (HTTP/1.1)
SERVER = """
import functools, http.server, sys
class Pages(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    def log_message(self, *args): pass
handler = functools.partial(Pages, directory=sys.argv[2])
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), handler).serve_forever()
"""


async def run(reads: int) -> dict[str, dict[str, float]]:
    pages = shapes()
    folder = Path(tempfile.mkdtemp(prefix="kvswitch-pagebench-"))
    for index, text in enumerate(pages.values()):
        (folder / f"{index}.txt").write_text(text)
    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port), str(folder)])
    results: dict[str, dict[str, float]] = {}
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.05)
        for index, name in enumerate(pages):
            url = f"http://127.0.0.1:{port}/{index}.txt"
            results[name] = await _measure(url, reads, in_place=False)
            if name.startswith("2 MB"):
                results[name + ", parsed in place"] = await _measure(url, max(10, reads // 10), in_place=True)
    finally:
        server.terminate()
        server.wait(10)
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()
    base = results["baseline (2-byte page)"]["read_median_ms"]
    for figures in results.values():
        figures["read_median_vs_baseline"] = figures["read_median_ms"] / base
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=200, help="page reads per shape (200)")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    args = parser.parse_args()
    results = asyncio.run(run(args.reads))
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for name, figures in results.items():
        print(f"{name:48} read {figures['read_median_ms']:7.2f} ms median "
              f"(x{figures['read_median_vs_baseline']:.1f} the baseline); loop held at most "
              f"{figures['loop_late_max_ms']:6.2f} ms, p99 {figures['loop_late_p99_ms']:5.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
