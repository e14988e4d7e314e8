#!/usr/bin/env python3
"""Measure which Claude Code settings move the prompt prefix, with the real client on a real server.

For each candidate setting, the real-client verify (``kvswitch.verify.client_run``: conversation 1
turns 1-3 with ``--continue``, conversation 2 turn 1) runs twice against a real llama-server started
here (tiny model, ``-np 1 --cache-ram 0``): once with the cache-safe baseline env and once with that one
setting toggled (a baseline member removed, any other candidate added): ``kvswitch verify --ablate``'s
own ``kvswitch.verify.ablate``, on a server this script starts. The cached tokens come from the
server's answers. The result is written as data (``app/kvswitch/verify/data/claude_settings.json``) that
the cache-safe env, the lint and the README follow.

usage: PYTHONPATH=app python3 scripts/measure_claude_settings.py --claude-bin PATH [--llama-server PATH]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

from kvswitch.core.models import ModelMap, Profile, ProfileKind
from kvswitch.verify.ablate import ablate

REPO = Path(__file__).resolve().parent.parent
CACHE = Path.home() / ".cache" / "kvswitch"
OUT = REPO / "app" / "kvswitch" / "core" / "data" / "claude_settings.json"
#: the cache-safe env as it stands: each member is measured by removing it
BASELINE = {
    "CLAUDE_CODE_ATTRIBUTION_HEADER": "0",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_ENABLE_TELEMETRY": "0",
}
#: read by the 2.1.332 binary (``strings``) and plausibly prompt-changing: each measured by adding it
CANDIDATES = {
    "CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS": "1",
    "CLAUDE_CODE_OVERRIDE_DATE": "2026-01-01",
    "CLAUDE_CODE_NORMALIZE_PREFIX_CACHE": "1",
    "CLAUDE_CODE_SILENT_TURN_REMINDER": "0",
    "CLAUDE_CODE_TOTAL_TOKENS_REMINDER": "0",
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _eos_bias() -> str:
    spec = importlib.util.spec_from_file_location("make_tiny_model", REPO / "scripts" / "make_tiny_model.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return f"{256 + len(module.MERGES) + module.SPECIAL_TOKENS.index('<|im_end|>')}+100"


def _start_server(binary: Path, model: Path, workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    argv = [
        str(binary),
        "-m",
        str(model),
        "-a",
        "tiny",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "-c",
        "32768",
        "-np",
        "1",
        "--cache-ram",
        "0",
        "--metrics",
        "-l",
        _eos_bias(),
        "--log-file",
        str(workdir / "server.log"),
    ]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("llama-server did not start")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--claude-bin", type=Path, default=os.environ.get("KVSWITCH_CLAUDE_BIN"))
    parser.add_argument(
        "--llama-server",
        type=Path,
        default=os.environ.get("KVSWITCH_LLAMA_SERVER") or CACHE / "llama-server" / "11434" / "llama-server",
    )
    parser.add_argument("--model", type=Path, default=CACHE / "models" / "kvswitch-tiny-32768.gguf")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if not args.claude_bin:
        raise SystemExit("give --claude-bin (or set KVSWITCH_CLAUDE_BIN)")
    with tempfile.TemporaryDirectory() as work:
        proc, url = _start_server(args.llama_server, args.model, Path(work))
        try:
            build = httpx.get(f"{url}/props", timeout=10).json().get("build_info")
            profile = Profile(
                name="measure",
                kind=ProfileKind.LLAMA_CPP,
                base_url=url,
                api_key="measure-key",
                model="tiny",
                models=ModelMap(small_fast="tiny"),
                env=dict(BASELINE),
            )
            # the user's command (verify --ablate) does the work: each member taken away, each candidate added
            report = ablate(
                profile,
                args.claude_bin,
                client="claude",
                timeout=900,
                candidates=CANDIDATES,
                on_step=lambda text: print(text, file=sys.stderr),
            )
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    print(report.describe(), file=sys.stderr)
    rows = [
        {
            "setting": row.setting,
            "value": row.value,
            "in_cache_safe_env": row.in_profile,
            "with": row.with_it.to_json(),
            "without": row.without.to_json(),
            "effect": row.effect,
        }
        for row in report.rows
    ]
    data = {
        "client": "claude",
        "client_version": report.baseline.client_version,
        "server": build,
        "measured": datetime.now(UTC).date().isoformat(),
        "baseline": BASELINE,
        "settings": rows,
    }
    args.out.write_text(json.dumps(data, indent=2) + "\n")
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
