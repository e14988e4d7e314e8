"""Gateway benchmark: what a proxy between Claude Code and its backend costs, against going direct.

Usage: ``PYTHONPATH=app python3 benchmarks/gateway.py [--rounds 3] [--only direct,ccr,litellm,kvswitch]``
(the peers come from ``bash scripts/install_bench_peers.sh``, which this runs; a peer that does not
install is skipped with one line).

One scripted upstream on loopback (``gateway_wire.py``, its own process) answers Anthropic Messages and
chat completions. In the same run, the same load generator (one process, raw asyncio) talks to it
directly (the baseline) and through each proxy:
- **TTFB**: streaming requests one after another on a keep-alive connection; time from writing the
  request to the first body byte of the answer (the first SSE event). Overhead = proxy − direct
  (direct to the protocol the proxy speaks upstream), median and p99; a ~600-token request, and the real
  ~14K-token Claude Code request from ``tests/fixtures/claude-code-2.1.332/``.
- **Small requests per second**: non-streaming, 32 keep-alive connections.
- **500 concurrent streams**: 500 connections opened at once, each a streaming request whose answer
  takes about a second (20 deltas 50 ms apart); errors, and the peak RSS of the proxy's process tree
  (psutil, sampled every 20 ms).
- **Conversion cost**: the KV Switch Anthropic→chat bridge called in-process on the 14K request (µs,
  median), and claude-code-router's conversion measured end to end: its TTFB for the 14K request minus
  direct chat TTFB for the same bytes (so it includes its routing and token counting, which run per
  request too).
- **The live cache record's cost** (issue 25): the same KV Switch gateway started a second time with the
  record switched off (``benchmarks/norecord``), so "with − without" is measured in the same run, for
  TTFB and for the complete answer; and the record's own ``begin``/``finish`` in-process on the 14K request.
  ``--profile-kind llama.cpp`` makes the routed profile a local server's, so "with" also holds the
  ``/metrics`` reading the gateway takes as it forwards each request to a local server (for an answer
  that carries no counts), and the reader of that profile's server log (a file here that stays quiet);
  the upstream serves a llama-server-shaped counters page.
Rounds alternate between the routes and each figure is the best round (the machine is shared).
Goals: median TTFB overhead ≤ 2 ms, 0 errors at 500 streams, RSS ≤ 200 MB, ahead of both peers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "app"))

import gateway_peers as peers  # noqa: E402
import gateway_wire  # noqa: E402
from gateway_wire import Connection, Result  # noqa: E402

FIXTURE = peers.REPO / "tests" / "fixtures" / "claude-code-2.1.332" / "request_attribution_0_1.json"
CLIENT_HEADERS = {"content-type": "application/json", "anthropic-version": "2023-06-01",
                  "user-agent": "claude-cli/2.1.332 (external, sdk-cli)", "x-app": "cli"}
ANTHROPIC_END = b"message_stop"
CHAT_END = b"[DONE]"


def small_request(stream: bool, model: str) -> bytes:
    """About 600 tokens: a system prompt, one user turn."""
    text = "Explain what a prompt cache is and when a server can reuse it. " * 36
    return json.dumps({"model": model, "max_tokens": 256, "stream": stream,
                       "system": [{"type": "text", "text": "You are a terse assistant."}],
                       "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}]}).encode()


def claude_code_request(model: str) -> bytes:
    body = json.loads(FIXTURE.read_text())["body"]
    body["model"] = model
    return json.dumps(body).encode()


@dataclass
class Route:
    """Where the load generator sends a request, and how a complete answer ends."""

    label: str
    port: int
    path: str
    headers: dict[str, str]
    end: bytes
    model: str = "claude-bench"
    proxy: peers.Proxy | None = None
    baseline: str = "direct"  # label of the direct route it is compared with
    ttfb: dict[str, list[float]] = field(default_factory=dict)  # "small"/"cc" → best round's samples
    totals: dict[str, list[float]] = field(default_factory=dict)  # the same requests' complete answers
    rps: float = 0.0
    wave: dict[str, float] = field(default_factory=dict)
    failed: str = ""
    cpu_us: float = 0.0  # the proxy's CPU time (user + system, process tree) per small request


async def sequential(route: Route, body: bytes, count: int) -> tuple[list[float], list[float]]:
    """TTFB and complete-answer times of ``count`` requests (after ten to warm up)."""
    conn = Connection("127.0.0.1", route.port)
    samples, totals = [], []
    try:
        for i in range(count + 10):
            result = await asyncio.wait_for(
                conn.request(route.path, route.headers, body, stream_end=route.end), 30)
            if result.error:
                raise RuntimeError(f"{route.label}: {result.error}")
            if i >= 10:  # the first ten warm the connection and the proxy
                samples.append(result.ttfb)
                totals.append(result.total)
    finally:
        await conn.close()
    return samples, totals


async def throughput(
    route: Route, body: bytes, count: int, connections: int, seconds: float
) -> tuple[int, float]:
    """``count`` non-streaming requests over ``connections`` (or as many as fit in ``seconds``, for the
    slow peers); returns how many completed and how long they took."""
    remaining = [count]
    done = [0]
    deadline = time.perf_counter() + seconds

    async def worker() -> None:
        conn = Connection("127.0.0.1", route.port)
        try:
            while remaining[0] > 0 and time.perf_counter() < deadline:
                remaining[0] -= 1
                pending = conn.request(route.path, route.headers, body, stream_end=None)
                result = await asyncio.wait_for(pending, 30)
                if result.error:
                    raise RuntimeError(f"{route.label}: {result.error}")
                done[0] += 1
        finally:
            await conn.close()

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(connections)))
    return done[0], time.perf_counter() - start


async def wave(route: Route, body: bytes, streams: int) -> dict[str, float]:
    """``streams`` streaming requests at once, each on a new connection; errors and peak RSS."""
    idle = route.proxy.rss() if route.proxy else 0
    peak = [idle]
    stop = asyncio.Event()

    async def sample() -> None:
        while not stop.is_set() and route.proxy is not None:
            peak[0] = max(peak[0], route.proxy.rss())
            await asyncio.sleep(0.02)

    async def one() -> Result:
        conn = Connection("127.0.0.1", route.port)
        try:
            return await asyncio.wait_for(
                conn.request(route.path, route.headers, body, stream_end=route.end, keep_alive=False), 120)
        except (OSError, TimeoutError, asyncio.IncompleteReadError, ValueError) as error:
            return Result(error=f"{type(error).__name__}: {error}")
        finally:
            await conn.close()

    sampler = asyncio.create_task(sample())
    start = time.perf_counter()
    results = await asyncio.gather(*(one() for _ in range(streams)))
    took = time.perf_counter() - start
    stop.set()
    await sampler
    errors = [r.error for r in results if r.error]
    if errors:
        print(f"  {route.label}: {len(errors)} errors at {streams} streams, first: {errors[0][:160]}")
    return {"errors": len(errors), "seconds": took, "idle_mb": idle / 2**20, "peak_mb": peak[0] / 2**20}


async def set_upstream(port: int, **config: float) -> dict[str, object]:
    conn = Connection("127.0.0.1", port)
    result = await conn.request("/_bench/config", {"content-type": "application/json"},
                                json.dumps(config).encode(), stream_end=None, keep_alive=False)
    return dict(json.loads(result.body))


def conversion_us(rounds: int) -> dict[str, float] | str:
    """The KV Switch Anthropic→chat bridge on the real 14K request, in-process (request side)."""
    try:
        from kvswitch.gateway.bridges import dump_body, pick_bridge
        bridge = pick_bridge("anthropic", "openai_chat")
    except (ImportError, LookupError) as error:
        return f"KV Switch Anthropic→chat bridge: not available ({error})"
    assert bridge is not None
    raw = json.dumps(json.loads(FIXTURE.read_text())["body"]).encode()
    full, parse = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        dump_body(bridge.convert_request(json.loads(raw)))
        middle = time.perf_counter()
        json.loads(raw)
        parse.append(time.perf_counter() - middle)
        full.append(middle - start)
    events = gateway_wire.chat_events("bench-model", 20)
    answer = []
    for _ in range(rounds):
        request = json.loads(raw)
        start = time.perf_counter()
        converter = bridge.response_converter(request, streaming=True)
        for event in events:
            converter.feed(event)
        converter.close()
        answer.append(time.perf_counter() - start)
    return {"full_us": statistics.median(full) * 1e6,
            "convert_us": (statistics.median(full) - statistics.median(parse)) * 1e6,
            "answer_us": statistics.median(answer) * 1e6}


def record_us(rounds: int) -> dict[str, float]:
    """The live cache record's own work on the real 14K request, in-process: ``begin`` (client and
    session from the headers) and ``finish`` (the prompt's digest, the comparison with the session's
    previous request, the row's fields), the same conversation continued each time (µs, median)."""
    from kvswitch.gateway.truth.live_record import CacheTruth  # noqa: PLC0415 - the benchmark's own import
    from kvswitch.usage.schema import UsageRow  # noqa: PLC0415

    data = json.loads(FIXTURE.read_text())
    headers, body = {k.lower(): v for k, v in data["headers"].items()}, data["body"]
    truth = CacheTruth()
    begins, finishes = [], []
    for _ in range(rounds):
        row = UsageRow(time.time(), "claude", "bench", None, "claude-bench", None)
        started = time.perf_counter()
        truth.begin(row, headers, body)
        begun = time.perf_counter()
        row.status, row.upstream, row.input_tokens, row.cached_tokens = 200, "http://upstream", 13800, 13790
        truth.finish(row, local=True)
        finishes.append(time.perf_counter() - begun)
        begins.append(begun - started)
    return {"begin_us": statistics.median(begins) * 1e6, "finish_us": statistics.median(finishes) * 1e6}


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f}"


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run(args: argparse.Namespace, upstream_port: int) -> list[Route]:
    wanted = set(args.only.split(","))
    direct = Route("direct (Anthropic)", upstream_port, "/v1/messages", {**CLIENT_HEADERS,
                   "x-api-key": peers.UPSTREAM_KEY}, ANTHROPIC_END, baseline="")
    direct_chat = Route("direct (chat)", upstream_port, "/v1/chat/completions", {**CLIENT_HEADERS,
                        "Authorization": f"Bearer {peers.UPSTREAM_KEY}"}, CHAT_END, baseline="")
    routes = [direct, direct_chat]
    found = peers.peer_paths() if wanted & {"ccr", "litellm"} else {}
    for line in found.get("skip", "").splitlines():
        print(line)
    starters = []
    if "kvswitch" in wanted:
        starters.append(lambda: peers.start_kvswitch(upstream_port, "anthropic", args.profiles - 1,
                                                     kind=args.profile_kind))
        # the same gateway without the live cache record: its cost, in the same run
        starters.append(lambda: peers.start_kvswitch(upstream_port, "anthropic", args.profiles - 1,
                                                     without_record=True, kind=args.profile_kind))
        starters.append(lambda: peers.start_kvswitch(upstream_port, "openai_chat", args.profiles - 1))
    if "ccr" in wanted and "ccr" in found:
        starters.append(lambda: peers.start_ccr(found["ccr"], upstream_port))
    if "litellm" in wanted and "litellm" in found:
        starters.append(lambda: peers.start_litellm(found["litellm"], upstream_port))
    for start in starters:
        proxy = start()
        if isinstance(proxy, str):
            print("skip", proxy)
            continue
        baseline = direct.label if proxy.upstream_protocol == "anthropic" else direct_chat.label
        routes.append(Route(proxy.name, proxy.port, proxy.messages_path, {**CLIENT_HEADERS, **proxy.headers},
                            ANTHROPIC_END, model=proxy.extra.get("model", "claude-bench"), proxy=proxy,
                            baseline=baseline))
    try:
        await measure(args, routes, upstream_port)
    finally:
        for route in routes:
            if route.proxy:
                route.proxy.stop()
    return routes


async def measure(args: argparse.Namespace, routes: list[Route], upstream_port: int) -> None:
    await set_upstream(upstream_port, events=8, gap_ms=0)
    for number in range(args.rounds):
        for route in routes:
            if route.failed:
                continue
            try:
                for kind, count in (("small", args.requests), ("cc", args.requests // 3)):
                    small = kind == "small"
                    body = small_request(True, route.model) if small else claude_code_request(route.model)
                    samples, totals = await sequential(route, body, count)
                    best = route.ttfb.get(kind)
                    if best is None or statistics.median(samples) < statistics.median(best):
                        route.ttfb[kind] = samples
                    best_total = route.totals.get(kind)
                    if best_total is None or statistics.median(totals) < statistics.median(best_total):
                        route.totals[kind] = totals
                cpu_before = route.proxy.cpu_seconds() if route.proxy else 0.0
                done, took = await throughput(route, small_request(False, route.model), args.rps_requests, 32,
                                              args.rps_seconds)
                rps = done / took
                if route.proxy:
                    cpu_us = (route.proxy.cpu_seconds() - cpu_before) / done * 1e6
                    route.cpu_us = min(route.cpu_us or cpu_us, cpu_us)
                route.rps = max(route.rps, rps)
            except (RuntimeError, OSError, TimeoutError, asyncio.IncompleteReadError, ValueError) as error:
                route.failed = f"{type(error).__name__}: {error}"[:300]
                print(f"  {route.label} failed: {route.failed}")
        print(f"round {number + 1}/{args.rounds} done")
    await set_upstream(upstream_port, events=20, gap_ms=50)
    for route in routes:
        if route.label.startswith("direct (chat") or route.failed:
            continue
        waves = [await wave(route, small_request(True, route.model), args.streams) for _ in range(args.waves)]
        route.wave = {"errors": sum(w["errors"] for w in waves), "peak_mb": max(w["peak_mb"] for w in waves),
                      "idle_mb": waves[0]["idle_mb"], "seconds": min(w["seconds"] for w in waves)}
    stats = await set_upstream(upstream_port, events=8, gap_ms=0)
    print(f"upstream served {stats['requests']} requests: {stats['by_path']}")


def figures(route: Route, by_label: dict[str, Route]) -> dict[str, float | None]:
    """One row: medians, p99s and overheads in ms, req/s and its ratio, errors and RSS."""
    small, cc = route.ttfb["small"], route.ttfb["cc"]
    row: dict[str, float | None] = {
        "med": statistics.median(small) * 1e3, "p99": percentile(small, 0.99) * 1e3,
        "cc_med": statistics.median(cc) * 1e3, "rps": route.rps, "cpu_us": route.cpu_us or None,
        "errors": route.wave.get("errors"), "peak_mb": route.wave.get("peak_mb") if route.proxy else None,
        "idle_mb": route.wave.get("idle_mb") if route.proxy else None,
        "ovh": None, "ovh99": None, "cc_ovh": None, "ratio": None,
    }
    base = by_label.get(route.baseline)
    if base is not None and not base.failed:
        row["ovh"] = (statistics.median(small) - statistics.median(base.ttfb["small"])) * 1e3
        row["ovh99"] = (percentile(small, 0.99) - percentile(base.ttfb["small"], 0.99)) * 1e3
        row["cc_ovh"] = (statistics.median(cc) - statistics.median(base.ttfb["cc"])) * 1e3
        row["ratio"] = route.rps / base.rps
    return row


COLUMNS = (("med", "TTFB med", ".2f"), ("p99", "p99", ".2f"), ("ovh", "overhead", ".2f"),
           ("ovh99", "p99 ovh", ".2f"), ("cc_med", "14K med", ".2f"), ("cc_ovh", "14K ovh", ".2f"),
           ("rps", "req/s", ".0f"), ("ratio", "x direct", ".3f"), ("cpu_us", "CPU µs", ".0f"),
           ("errors", "errors", ".0f"), ("peak_mb", "peak MB", ".0f"), ("idle_mb", "idle MB", ".0f"))


def cell(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def record_report(routes: list[Route], record: dict[str, float]) -> None:
    """The live cache record's cost: the gateway with it against the same gateway without it."""
    by_label = {r.label: r for r in routes if not r.failed}
    on, off = by_label.get("KV Switch gateway"), by_label.get("KV Switch gateway (no record)")
    print(f"live cache record in-process on the 14K request: begin {record['begin_us']:.0f} µs, finish "
          f"{record['finish_us']:.0f} µs (median; finish runs once the upstream's answer is in)")
    if on is None or off is None:
        return
    for kind, name in (("cc", "14K"), ("small", "600-token")):
        ttfb = (statistics.median(on.ttfb[kind]) - statistics.median(off.ttfb[kind])) * 1e3
        total = (statistics.median(on.totals[kind]) - statistics.median(off.totals[kind])) * 1e3
        print(f"live cache record, {name} request, with − without (same run, medians): TTFB {ttfb:+.2f} ms, "
              f"complete answer {total:+.2f} ms")


def report(args: argparse.Namespace, routes: list[Route], conversion: dict[str, float] | str) -> None:
    by_label = {r.label: r for r in routes}
    rows = {r.label: figures(r, by_label) for r in routes if not r.failed}
    print()
    print(f"{'route':<30}" + "".join(f"{title:>9}" for _, title, _ in COLUMNS))
    for label, row in rows.items():
        print(f"{label:<30}" + "".join(f"{cell(row[key], fmt):>9}" for key, _, fmt in COLUMNS))
    for route in routes:
        if route.failed:
            print(f"{route.label:<30} failed: {route.failed}")
    print(f"(ms; TTFB: best of {args.rounds} rounds of {args.requests} sequential streaming ~600-token "
          f"requests; 14K: {args.requests // 3} of the real Claude Code request; overhead against direct to "
          f"the protocol spoken upstream; req/s: {args.rps_requests} non-streaming (at most "
          f"{args.rps_seconds:.0f} s), 32 connections, and the "
          "proxy's CPU time per request over them (user + system, least of the rounds); "
          f"{args.streams} concurrent ~1 s streams x {args.waves} waves: errors summed, peak RSS of the "
          "proxy's process tree; idle: before the first wave)")
    if isinstance(conversion, str):
        print(conversion)
    else:
        print(f"KV Switch Anthropic→chat bridge, request conversion of the 14K request in-process: "
              f"{conversion['convert_us']:.0f} µs (median; with parsing the client's bytes "
              f"{conversion['full_us']:.0f} µs); its streamed answer (20 deltas, chat SSE → Anthropic SSE): "
              f"{conversion['answer_us']:.0f} µs")
    for route in routes:
        if route.proxy and route.proxy.upstream_protocol == "openai_chat" and route.label in rows:
            extra = rows[route.label]["cc_ovh"]
            if extra is not None:
                print(f"{route.label}: 14K request end to end over direct chat: {extra * 1e3:.0f} µs "
                      "(median)")
    goals(rows)
    record_report(routes, args.record)
    print(f"machine: {os.cpu_count()} CPUs, {platform.machine()}, Python {peers.python_version()}, "
          f"load {os.getloadavg()[0]:.1f}, {time.strftime('%Y-%m-%d %H:%M')}; versions: "
          + ", ".join(f"{r.proxy.name} {r.proxy.version}" for r in routes if r.proxy))
    if args.markdown:
        print()
        print("| route | " + " | ".join(title for _, title, _ in COLUMNS) + " |")
        print("|---|" + "---:|" * len(COLUMNS))
        for label, row in rows.items():
            print(f"| {label} | " + " | ".join(cell(row[key], fmt) for key, _, fmt in COLUMNS) + " |")


def goals(rows: dict[str, dict[str, float | None]]) -> None:
    """The issue's goals, checked against this run's figures for each KV Switch route."""
    peer_rows = [row for label, row in rows.items() if not label.startswith(("KV Switch", "direct"))]
    for label, row in rows.items():
        if not label.startswith("KV Switch") or label.endswith("(no record)"):
            continue
        checks = [
            ("median TTFB overhead <= 2 ms", row["ovh"] is not None and row["ovh"] <= 2.0),
            ("0 errors at the concurrent streams", row["errors"] == 0),
            ("peak RSS <= 200 MB", row["peak_mb"] is not None and row["peak_mb"] <= 200),
        ]
        for key, better in (("ovh", min), ("rps", max), ("cpu_us", min), ("peak_mb", min)):
            theirs = [r[key] for r in peer_rows if r[key] is not None]
            if theirs and row[key] is not None:
                checks.append((f"{key} ahead of every peer", better(theirs + [row[key]]) == row[key]))
        print(f"{label}: " + "; ".join(f"{name}: {'yes' if ok else 'NO'}" for name, ok in checks))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=300, help="sequential TTFB requests per round")
    parser.add_argument("--rps-requests", type=int, default=3000)
    parser.add_argument("--rps-seconds", type=float, default=8.0, help="bound of one req/s measurement")
    parser.add_argument("--streams", type=int, default=500)
    parser.add_argument("--waves", type=int, default=2)
    parser.add_argument("--only", default="direct,kvswitch,ccr,litellm")
    parser.add_argument("--profiles", type=int, default=8,
                        help="profiles in the KV Switch gateway's HOME (one routed, the others a user's)")
    parser.add_argument("--profile-kind", default="custom",
                        help="the routed KV Switch profile's kind; llama.cpp adds the per-request /metrics "
                        "reading of a local profile to the record's cost (the upstream serves such a page)")
    parser.add_argument("--markdown", action="store_true", help="also print the rows as a Markdown table")
    args = parser.parse_args()
    conversion = conversion_us(200)
    args.record = record_us(200)
    with tempfile.TemporaryDirectory(prefix="bench-upstream-") as tmp:
        port_file = os.path.join(tmp, "port")
        upstream = subprocess.Popen([sys.executable, str(Path(__file__).with_name("gateway_wire.py")),
                                     "--port-file", port_file, "--max-seconds", "1800"])
        try:
            deadline = time.monotonic() + 20
            while not os.path.exists(port_file) and time.monotonic() < deadline:
                time.sleep(0.05)
            port = int(Path(port_file).read_text())
            routes = asyncio.run(run(args, port))
        finally:
            upstream.terminate()
            upstream.wait(timeout=10)
    report(args, routes, conversion)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
