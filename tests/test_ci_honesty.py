"""CI cannot pass without the real components: ``scripts/dev.sh``'s component section with ``npm`` gone
from PATH fails under ``CI=true`` naming each client (and skips locally, saying so), a checkout without
the vLLM installer fails under CI, and ``.ci/run`` fails on pytest's exit 5 (nothing tested).

Cheap by construction: only the npm clients and vLLM are asked for (``scripts/dev.sh components NAME...``),
into an empty ``KVSWITCH_CACHE``, so nothing is built or downloaded.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.require import VARIABLES

REPO = Path(__file__).resolve().parents[1]
NPM_CLIENTS = ("claude-code", "codex", "codex-new", "opencode")
CLIENT_LABELS = ("Claude Code", "Codex 0.169.0", "Codex 0.171.0", "OpenCode")


def _path_without_npm(tmp_path: Path) -> str:
    """A PATH of links to every program on this PATH except Node.js's (npm, npx, node)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for directory in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep):
        if not os.path.isdir(directory):
            continue
        for entry in os.scandir(directory):
            link = bin_dir / entry.name
            if entry.name in ("npm", "npx", "node", "nodejs") or link.exists() or link.is_symlink():
                continue
            if entry.is_file() and os.access(entry.path, os.X_OK):
                link.symlink_to(entry.path)
    assert shutil.which("npm", path=str(bin_dir)) is None
    assert shutil.which("bash", path=str(bin_dir)) is not None
    return str(bin_dir)


def _env(tmp_path: Path, path: str, ci: bool) -> dict[str, str]:
    """No component variable set (they would be used as given), an empty install cache."""
    env = {key: value for key, value in os.environ.items()
           if key not in VARIABLES.values() and key not in ("CI", "CODEX_VERSION")}
    env.update(PATH=path, KVSWITCH_CACHE=str(tmp_path / "cache"), HOME=str(tmp_path / "home"))
    if ci:
        env["CI"] = "true"
    return env


def _components(repo: Path, env: dict[str, str], *names: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(repo / "scripts" / "dev.sh"), "components", *names], env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_under_ci_a_client_that_cannot_install_fails_the_run_naming_it(tmp_path: Path) -> None:
    done = _components(REPO, _env(tmp_path, _path_without_npm(tmp_path), ci=True), *NPM_CLIENTS)
    assert done.returncode != 0, done.stderr
    summary = done.stderr[done.stderr.index("CI=true and 4 real component(s)"):]
    for label in CLIENT_LABELS:
        assert f"{label}: " in summary, summary
    assert summary.count("npm is missing") == 4, summary
    assert done.stdout == ""  # nothing exported


def test_locally_the_same_failure_skips_the_tier_and_says_why(tmp_path: Path) -> None:
    done = _components(REPO, _env(tmp_path, _path_without_npm(tmp_path), ci=False), *NPM_CLIENTS)
    assert done.returncode == 0, done.stderr
    for label in CLIENT_LABELS:
        assert f"{label} could not be installed or found (install_" in done.stderr
    assert done.stderr.count("its tests will be skipped") == 4


def test_a_component_variable_already_set_is_used_as_given(tmp_path: Path) -> None:
    env = _env(tmp_path, _path_without_npm(tmp_path), ci=True)
    env["KVSWITCH_OPENCODE_BIN"] = sys.executable  # any executable: dev.sh does not second-guess it
    done = _components(REPO, env, "opencode")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"export KVSWITCH_OPENCODE_BIN={sys.executable}"


def test_under_ci_a_checkout_without_the_vllm_installer_fails(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "dev.sh", checkout / "scripts" / "dev.sh")
    done = _components(checkout, _env(tmp_path, os.environ["PATH"], ci=True), "vllm")
    assert done.returncode == 1
    assert "vLLM: dev.sh: scripts/install_vllm.sh is not in this checkout" in done.stderr
    local = _components(checkout, _env(tmp_path, os.environ["PATH"], ci=False), "vllm")
    assert local.returncode == 0, local.stderr
    assert "its tests will be skipped" in local.stderr


@pytest.mark.parametrize("exported", sorted(set(VARIABLES.values())))
def test_dev_sh_exports_every_variable_the_tests_read(exported: str) -> None:
    assert f" {exported} " in (REPO / "scripts" / "dev.sh").read_text(encoding="utf-8")


def test_ci_run_fails_when_pytest_tests_nothing(tmp_path: Path) -> None:
    """``.ci/run`` around a dev.sh whose pytest finds no test: the real pytest's exit 5 fails the run."""
    checkout = tmp_path / "checkout"
    (checkout / ".ci").mkdir(parents=True)
    (checkout / "scripts").mkdir()
    (checkout / "tests").mkdir()
    shutil.copy(REPO / ".ci" / "run", checkout / ".ci" / "run")
    (checkout / "scripts" / "dev.sh").write_text(
        f'cd "$(dirname "$0")/.." && exec {sys.executable} -m pytest -q -p no:cacheprovider tests\n')
    env = {key: value for key, value in os.environ.items() if key not in ("CI", "PYTEST_ADDOPTS")}
    done = subprocess.run(["bash", str(checkout / ".ci" / "run")], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 5, done.stdout + done.stderr
    assert "exit 5" in done.stderr
