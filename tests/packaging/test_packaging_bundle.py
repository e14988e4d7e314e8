"""The PyInstaller one-folder bundle builds, runs its commands and passes the app's smoke test offscreen."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.net import free_port
from support.require import require_module

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "packaging" / "pyinstaller" / "kvswitch.spec"

pytestmark = [
    pytest.mark.bundle,
    pytest.mark.timeout(900),
]


@pytest.fixture(autouse=True, scope="module")
def _pyinstaller() -> None:
    """Before the module's bundle is built (a module fixture): PyInstaller is in the ``[test]`` extra."""
    require_module("PyInstaller", "pip install -e '.[test]' brings it")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pyinstaller")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    build = subprocess.run(
        [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
         "--distpath", str(out / "dist"), "--workpath", str(out / "work"), str(SPEC)],
        capture_output=True, text=True, timeout=840, env=env, cwd=out)
    assert build.returncode == 0, build.stderr[-4000:]
    folder = out / "dist" / "kvswitch"
    assert (folder / "kvswitch").is_file()
    return folder


def run(bundle: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | env
    return subprocess.run([str(bundle / "kvswitch"), *args], capture_output=True, text=True, timeout=120,
                          env=full_env)


def test_bundle_carries_resources(bundle: Path) -> None:
    internal = bundle / "_internal"
    assert (internal / "resources" / "icons" / "kvswitch.svg").is_file()
    assert (internal / "resources" / "icons" / "tray" / "png" / "kvswitch-tray-miss-22.png").is_file()
    assert (internal / "resources" / "fonts" / "KVSwitchNotoSansSC-Regular.otf").is_file()  # zh_CN fallback
    assert (internal / "resources" / "fonts" / "OFL.txt").is_file()
    translations = sorted(p.name for p in (REPO / "app" / "kvswitch" / "ui" / "i18n").glob("*.qm"))
    assert sorted(p.name for p in (internal / "kvswitch" / "ui" / "i18n").glob("*.qm")) == translations
    assert (internal / "kvswitch" / "verify" / "data" / "claude_code_request.json").is_file()


def test_bundle_commands_run(bundle: Path) -> None:
    version = run(bundle, "--version")
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("kvswitch ")
    port = free_port()
    detect = run(bundle, "detect", "--json", "--no-processes", "--port", str(port))
    assert detect.returncode == 0, detect.stderr
    assert json.loads(detect.stdout)["servers"] == []


def test_bundle_scans_logs_with_the_native_scanner(bundle: Path, tmp_path: Path) -> None:
    assert list((bundle / "_internal" / "kvswitch" / "logs").glob("_blockscan*"))
    log = tmp_path / "server.log"
    log.write_text(
        "slot get_availabl: id  0 | task -1 | selected slot by LRU, t_last = -1\n"
        "slot launch_slot_: id  0 | task 5 | processing task, is_child = 0\n"
        "slot print_timing: id  0 | task 5 | prompt eval time =      79.11 ms /  1536 tokens\n"
        "slot print_timing: id  0 | task 5 |        eval time =      10.50 ms /     8 tokens\n"
        "slot      release: id  0 | task 5 | stop processing: n_tokens = 1543, truncated = 0\n",
        encoding="utf-8")
    scan = run(bundle, "log", "scan", str(log), "--jsonl")
    assert scan.returncode == 0, scan.stderr
    event, summary = (json.loads(line) for line in scan.stdout.splitlines())
    assert (event["task"], event["new_tokens"], event["cached_tokens"]) == (5, 1536, 0)
    assert summary["summary"]["requests"] == 1


def test_bundle_smoke_test_offscreen(bundle: Path, tmp_path: Path) -> None:
    smoke = run(bundle, "--config-dir", str(tmp_path / "cfg"), "--smoke-test", QT_QPA_PLATFORM="offscreen")
    assert smoke.returncode == 0, smoke.stdout + smoke.stderr
    assert "smoke-test OK" in smoke.stdout + smoke.stderr
