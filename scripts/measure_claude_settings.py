#!/usr/bin/env python3
"""Measure which Claude Code settings move the prompt prefix, with the real client on a real server.

For each candidate setting, the real-client verify (``kvswitch.verify.client_run``: conversation 1
turns 1-3 with ``--continue``, conversation 2 turn 1) runs twice against a real llama-server started
here (tiny model, ``-np 1 --cache-ram 0``): once with the cache-safe baseline env and once with that one
setting toggled (a baseline member removed, any other candidate added). The cached tokens come from the
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
from typing import Any

import httpx

from kvswitch.core.models import ModelMap, Profile, ProfileKind
from kvswitch.verify.client_report import build_report
from kvswitch.verify.client_run import run_session
from kvswitch.verify.tokendiag import ServerRenderer

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


def _measure(url: str, binary: Path, env: dict[str, str]) -> dict[str, Any]:
    profile = Profile(
        name="measure",
        kind=ProfileKind.LLAMA_CPP,
        base_url=url,
        api_key="measure-key",
        model="tiny",
        models=ModelMap(small_fast="tiny"),
        env=env,
    )
    report = build_report(
        profile, run_session(profile, binary, timeout=900), ServerRenderer(url, timeout=120)
    )
    turns = {(t.conversation, t.turn): t for t in report.turns}
    inside = [turns[(1, n)] for n in (2, 3) if (1, n) in turns]
    new = turns.get((2, 1))
    return {
        "client_version": report.session.version,
        "first_prompt_tokens": turns[(1, 1)].prompt_tokens if (1, 1) in turns else None,
        "inside_reprocessed_max": max((t.reprocessed_tokens or 0) for t in inside) if inside else None,
        "new_conversation_prompt": new.prompt_tokens if new else None,
        "new_conversation_cached": new.cached_tokens if new else None,
        "new_conversation_reprocessed": new.reprocessed_tokens if new else None,
        "new_conversation_cause": (new.diagnosis or {}).get("cause") if new else None,
    }


#: a difference in re-processed tokens below this is noise of the client's own text (a date, a count)
SIGNIFICANT = 100


def _effect(with_it: dict[str, Any], without: dict[str, Any]) -> str:
    """What the setting does, from the run with it against the run without: re-processed tokens."""
    inside = (without["inside_reprocessed_max"] or 0) - (with_it["inside_reprocessed_max"] or 0)
    new = (without["new_conversation_reprocessed"] or 0) - (with_it["new_conversation_reprocessed"] or 0)
    if inside > SIGNIFICANT:
        return f"saves {inside} re-processed tokens per turn inside a conversation"
    if inside < -SIGNIFICANT:
        return f"costs {-inside} re-processed tokens per turn inside a conversation"
    if new > SIGNIFICANT:
        return f"saves {new} re-processed tokens per new conversation"
    if new < -SIGNIFICANT:
        return f"costs {-new} re-processed tokens per new conversation"
    if with_it["first_prompt_tokens"] != without["first_prompt_tokens"]:
        return "changes the prompt, not its reuse"
    return "no effect measured"


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
            base = _measure(url, args.claude_bin, dict(BASELINE))
            print("baseline", base, file=sys.stderr)
            rows = []
            trials = [(name, value, True) for name, value in BASELINE.items()]
            trials += [(name, value, False) for name, value in CANDIDATES.items()]
            for name, value, member in trials:
                env = (
                    {k: v for k, v in BASELINE.items() if k != name} if member else {**BASELINE, name: value}
                )
                got = _measure(url, args.claude_bin, env)
                print(name, got, file=sys.stderr)
                with_it, without = (base, got) if member else (got, base)
                rows.append(
                    {
                        "setting": name,
                        "value": value,
                        "in_cache_safe_env": member,
                        "with": with_it,
                        "without": without,
                        "effect": _effect(with_it, without),
                    }
                )
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    data = {
        "client": "claude",
        "client_version": base["client_version"],
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
