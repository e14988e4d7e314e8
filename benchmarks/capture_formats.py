"""Capture one real llama-server log per log format, for the per-format tests and the scan benchmark.

Usage: ``python3 benchmarks/capture_formats.py OUT_DIR [--only NAME ...]``

Each configuration starts the real llama-server (``$KVSWITCH_LLAMA_SERVER``, else the build cache) on the
tiny model of ``scripts/make_tiny_model.py`` on loopback, sends the same few requests (short prompt,
repeat, a ~3k-token prompt that needs several batches, its repeat, a changed prefix, a
``cache_prompt: false`` request) and keeps the server's stdout+stderr as ``OUT_DIR/<name>.log``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CACHE = Path.home() / ".cache" / "kvswitch"

#: name -> (extra flags, extra environment); every one also runs ``-c 16384 -np 1`` unless it says -np
CONFIGS: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
    "default": ((), {}),
    "timestamps_prefix": (("--log-timestamps", "--log-prefix"), {}),
    "verbose": (("-v",), {}),
    "small_batch": (("-b", "256", "-ub", "128"), {}),
    "trace_lv3": (("-lv", "3"), {}),
    "trace_lv4": (("-lv", "4"), {}),
    "slots_debug": ((), {"LLAMA_SERVER_SLOTS_DEBUG": "1"}),
    "log_jsonl": (("--log-jsonl",), {}),
    "np4_unified": (("-np", "4", "-kvu"), {}),
}


def _words(count: int, seed: str) -> str:
    return " ".join(f"{seed}{i % 97} the cache" for i in range(count))


def _requests() -> list[dict[str, object]]:
    short = "ts=2026-12-01T10:00:00Z " + _words(40, "w")
    long = "ts=2026-12-01T10:00:00Z " + _words(1000, "x")
    changed = "ts=2026-12-01T11:11:11Z " + _words(1000, "x")
    return [
        {"prompt": short, "n_predict": 4},
        {"prompt": short + " and more", "n_predict": 4},
        {"prompt": long, "n_predict": 4},
        {"prompt": long + " one question", "n_predict": 4},
        {"prompt": long + " one question", "n_predict": 4},
        {"prompt": changed, "n_predict": 4},
        {"prompt": changed, "n_predict": 4, "cache_prompt": False},
    ]


def _post(url: str, body: dict[str, object]) -> None:
    request = urllib.request.Request(url, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as answer:
        answer.read()


def _wait_healthy(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"llama-server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=1) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)  # polling a child process's port
    raise SystemExit("llama-server did not become healthy")


def capture(name: str, out: Path, port: int) -> None:
    flags, env = CONFIGS[name]
    binary = os.environ.get("KVSWITCH_LLAMA_SERVER") or str(CACHE / "llama-server" / "11434" / "llama-server")
    model = CACHE / "models" / "kvswitch-tiny-32768.gguf"
    if not model.is_file():
        subprocess.run([sys.executable, str(REPO / "scripts" / "make_tiny_model.py"), str(model)], check=True)
    parallel = () if "-np" in flags else ("-np", "1")
    argv = [binary, "-m", str(model), "-a", "tiny", "--host", "127.0.0.1", "--port", str(port),
            "-c", "32768" if parallel == () else "16384", *parallel, *flags]
    with (out / f"{name}.log").open("wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **env})
        try:
            url = f"http://127.0.0.1:{port}"
            _wait_healthy(url, proc)
            for body in _requests():
                _post(f"{url}/completion", body)
            if "-np" in flags:  # two different prompts at once: they go to different slots, interleaved
                import threading  # noqa: PLC0415

                threads = [threading.Thread(target=_post, args=(f"{url}/completion", body))
                           for body in _requests()[2:4]]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
        finally:
            proc.terminate()
            proc.wait(timeout=20)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--only", nargs="*", choices=sorted(CONFIGS))
    parser.add_argument("--port", type=int, default=18931)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.only or CONFIGS:
        capture(name, args.out, args.port)
        print(f"{name}: {(args.out / f'{name}.log').stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
