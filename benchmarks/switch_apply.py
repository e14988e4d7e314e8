"""Switching-engine benchmark: what the safety of an apply costs, as ratios against a naive writer.

Usage: ``PYTHONPATH=app python3 benchmarks/switch_apply.py [--rounds 50]``

Baseline (same run, same files): load ``settings.json`` and ``config.toml``, set the keys, write both
back with fsync + rename: what a switcher without ledger, backups, journal or lock would do.
Measured: ``Engine.apply`` alternating two profiles (plan, backups, journal, atomic writes, ledger
commit), ``Engine.plan`` alone, and ``apply`` with a settings.json 100x larger (many hooks and
permissions), to show how the cost grows with the user's file.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "app"))

import tomlkit  # noqa: E402

from kvswitch.core.models import Profile  # noqa: E402
from kvswitch.core.paths import AppPaths  # noqa: E402
from kvswitch.targets.engine import Engine  # noqa: E402

PROFILES = (
    Profile(
        name="A",
        kind="llama.cpp",
        base_url="http://127.0.0.1:8080",
        api_key="sk-aaaaaaaaaaaaaaaa",
        model="qwen",
        env={"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"},
        targets=["claude", "codex"],
    ),
    Profile(
        name="B",
        kind="custom",
        base_url="https://gw.example/v1",
        api_key="sk-bbbbbbbbbbbbbbbb",
        targets=["claude", "codex"],
    ),
)


def seed(home: Path, scale: int) -> None:
    settings = {
        "permissions": {"allow": [f"Bash(tool-{i})" for i in range(20 * scale)]},
        "hooks": {
            "PreToolUse": [
                {"matcher": f"m{i}", "hooks": [{"type": "command", "command": f"echo {i}"}]}
                for i in range(5 * scale)
            ]
        },
        "env": {"MY_VAR": "1"},
    }
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    (home / ".codex" / "config.toml").write_text('# mine\napproval_policy = "never"\n')


def write_synced(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def naive_apply(home: Path, profile: Profile) -> None:
    settings_path = home / ".claude" / "settings.json"
    data = json.loads(settings_path.read_text())
    data.setdefault("env", {}).update(
        {"ANTHROPIC_BASE_URL": profile.base_url, "ANTHROPIC_AUTH_TOKEN": profile.key}
    )
    write_synced(settings_path, json.dumps(data, indent=2) + "\n")
    config_path = home / ".codex" / "config.toml"
    doc = tomlkit.parse(config_path.read_text())
    doc["model_provider"] = "kvswitch"
    write_synced(config_path, tomlkit.dumps(doc))


def timed(rounds: int, step: Callable[[int], object]) -> float:
    samples = []
    for i in range(rounds):
        start = time.perf_counter()
        step(i)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def measure(rounds: int, scale: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        seed(home, scale)
        engine = Engine(
            AppPaths(home / "cfg", home / "cfg" / "data", home / "cfg" / "logs"), env={"HOME": tmp}
        )
        return {
            "naive": timed(rounds, lambda i: naive_apply(home, PROFILES[i % 2])),
            "apply": timed(rounds, lambda i: engine.apply(PROFILES[i % 2])),
            "plan": timed(rounds, lambda i: engine.plan(PROFILES[i % 2])),
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    small = measure(args.rounds, 1)
    large = measure(args.rounds, 100)
    print(f"apply / naive rewrite (small settings.json): {small['apply'] / small['naive']:.1f}x")
    print(f"plan  / naive rewrite (small settings.json): {small['plan'] / small['naive']:.1f}x")
    print(f"apply / naive rewrite (100x settings.json):  {large['apply'] / large['naive']:.1f}x")
    print(f"apply on 100x settings.json / apply on small: {large['apply'] / small['apply']:.1f}x")
    print(f"(medians of {args.rounds} rounds; naive small = {small['naive'] * 1000:.2f} ms on this machine)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
