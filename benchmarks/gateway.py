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
    rps: float = 0.0
    wave: dict[str, float] = field(default_factory=dict)


async def sequential(route: Route, body: bytes, count: int) -> list[float]:
    conn = Connection("127.0.0.1", route.port)
    samples = []
    try:
        for i in range(count + 10):
            result = await asyncio.wait_for(
                conn.request(route.path, route.headers, body, stream_end=route.end), 30)
            if result.error:
                raise RuntimeError(f"{route.label}: {result.error}")
            if i >= 10:  # the first ten warm the connection and the proxy
                samples.append(result.ttfb)
    finally:
        await conn.close()
    return samples


async def throughput(route: Route, body: bytes, count: int, connections: int) -> float:
    remaining = [count]

    async def worker() -> None:
        conn = Connection("127.0.0.1", route.port)
        try:
            while remaining[0] > 0:
                remaining[0] -= 1
                result = await asyncio.wait_for(conn.request(route.path, route.headers, body, stream_end=None), 30)
                if result.error:
                    raise RuntimeError(f"{route.label}: {result.error}")
        finally:
            await conn.close()

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(connections)))
    return count / (time.perf_counter() - start)


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
    return {"full_us": statistics.median(full) * 1e6,
            "convert_us": (statistics.median(full) - statistics.median(parse)) * 1e6}


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
        starters.append(lambda: peers.start_kvswitch(upstream_port, "anthropic"))
        starters.append(lambda: peers.start_kvswitch(upstream_port, "openai_chat"))
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
            for kind, count in (("small", args.requests), ("cc", args.requests // 3)):
                body = small_request(True, route.model) if kind == "small" else claude_code_request(route.model)
                samples = await sequential(route, body, count)
                best = route.ttfb.get(kind)
                if best is None or statistics.median(samples) < statistics.median(best):
                    route.ttfb[kind] = samples
            rps = await throughput(route, small_request(False, route.model), args.rps_requests, 32)
            route.rps = max(route.rps, rps)
        print(f"round {number + 1}/{args.rounds} done")
    await set_upstream(upstream_port, events=20, gap_ms=50)
    for route in routes:
        if route.label.startswith("direct (chat"):
            continue
        waves = [await wave(route, small_request(True, route.model), args.streams) for _ in range(args.waves)]
        route.wave = {"errors": sum(w["errors"] for w in waves), "peak_mb": max(w["peak_mb"] for w in waves),
                      "idle_mb": waves[0]["idle_mb"], "seconds": min(w["seconds"] for w in waves)}
    stats = await set_upstream(upstream_port, events=8, gap_ms=0)
    print(f"upstream served {stats['requests']} requests: {stats['by_path']}")


def report(args: argparse.Namespace, routes: list[Route], conversion: dict[str, float] | str) -> None:
    by_label = {r.label: r for r in routes}
    print()
    print(f"{'route':<28} {'TTFB med':>9} {'p99':>7} {'overhead':>9} {'p99 ovh':>8} "
          f"{'14K med':>8} {'14K ovh':>8} {'req/s':>7} {'x direct':>8} "
          f"{'errors':>6} {'peak RSS':>8} {'idle':>6}")
    for route in routes:
        small, cc = route.ttfb["small"], route.ttfb["cc"]
        base = by_label.get(route.baseline)
        if base:
            ovh = ms(statistics.median(small) - statistics.median(base.ttfb["small"]))
            ovh99 = ms(percentile(small, 0.99) - percentile(base.ttfb["small"], 0.99))
            cc_ovh = ms(statistics.median(cc) - statistics.median(base.ttfb["cc"]))
            ratio = f"{route.rps / base.rps:.2f}"
        else:
            ovh = ovh99 = cc_ovh = ratio = "-"
        wave_txt = (f"{route.wave['errors']:>6.0f} {route.wave['peak_mb']:>6.0f}MB {route.wave['idle_mb']:>4.0f}MB"
                    if route.wave and route.proxy else f"{route.wave.get('errors', 0):>6.0f} {'-':>8} {'-':>6}")
        print(f"{route.label:<28} {ms(statistics.median(small)):>9} {ms(percentile(small, 0.99)):>7} {ovh:>9} "
              f"{ovh99:>8} {ms(statistics.median(cc)):>8} {cc_ovh:>8} {route.rps:>7.0f} {ratio:>8} {wave_txt}")
    print(f"(ms; TTFB: best of {args.rounds} rounds of {args.requests} sequential streaming requests, 14K: "
          f"{args.requests // 3} of the real Claude Code request; req/s: {args.rps_requests} non-streaming, "
          f"32 connections; {args.streams} concurrent streams of ~1 s, best of {args.waves} waves, "
          "RSS of the proxy's process tree)")
    if isinstance(conversion, str):
        print(conversion)
    else:
        print(f"KV Switch Anthropic→chat bridge, request conversion of the 14K request in-process: "
              f"{conversion['convert_us']:.0f} µs (median; with parsing the client's bytes "
              f"{conversion['full_us']:.0f} µs)")
    for route in routes:
        if route.proxy and route.proxy.upstream_protocol == "openai_chat" and route.baseline in by_label:
            extra = statistics.median(route.ttfb["cc"]) - statistics.median(by_label[route.baseline].ttfb["cc"])
            print(f"{route.label}: 14K request end to end over direct chat: {extra * 1e6:.0f} µs (median)")
    print(f"machine: {os.cpu_count()} CPUs, {platform.machine()}, Python {peers.python_version()}, "
          f"{time.strftime('%Y-%m-%d')}; versions: "
          + ", ".join(f"{r.proxy.name} {r.proxy.version}" for r in routes if r.proxy))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=300, help="sequential TTFB requests per round")
    parser.add_argument("--rps-requests", type=int, default=3000)
    parser.add_argument("--streams", type=int, default=500)
    parser.add_argument("--waves", type=int, default=2)
    parser.add_argument("--only", default="direct,kvswitch,ccr,litellm")
    args = parser.parse_args()
    conversion = conversion_us(200)
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
