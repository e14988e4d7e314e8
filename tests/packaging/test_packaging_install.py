"""``pip install .`` gives working ``kvswitch`` commands, with the icons inside the installed package.

Built from a copy of the tree (pip writes egg-info next to the sources) into a bare venv: the package's
dependencies and the build backend come from the package index through pip, exactly as on a user's fresh
machine, never from this interpreter's site-packages (on a fresh machine the base interpreter has none,
so a venv that inherits them passes here and fails there).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.net import free_port
from support.require import component_missing

REPO = Path(__file__).resolve().parents[2]
IGNORE = shutil.ignore_patterns(".git", ".venv", "build", "dist", "__pycache__", "*.egg-info", ".mypy_cache",
                                ".ruff_cache", ".pytest_cache", "benchmarks", "tests", "*.so", "*.pyd")


@pytest.mark.slow
@pytest.mark.timeout(1500)  # a fresh machine downloads PySide6 and the rest first
def test_pip_install_gives_working_commands(tmp_path: Path) -> None:
    source = tmp_path / "src"
    shutil.copytree(REPO, source, ignore=IGNORE)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    bare = subprocess.run([str(bin_dir / "python"), "-c", "import platformdirs"], capture_output=True,
                          env=env, cwd=tmp_path, timeout=60)
    assert bare.returncode != 0, "the fresh venv must not see this interpreter's packages"
    install = subprocess.run(
        [str(bin_dir / "python"), "-m", "pip", "install", "-q", str(source)],
        capture_output=True, text=True, timeout=1200, env=env, cwd=tmp_path)
    if install.returncode != 0 and "Could not find a version" in install.stderr:
        component_missing("the package index is unreachable, so the dependencies cannot be fetched")
    assert install.returncode == 0, install.stderr[-3000:]

    kvswitch = str(bin_dir / "kvswitch")
    help_run = subprocess.run([kvswitch, "--help"], capture_output=True, text=True, env=env, cwd=tmp_path,
                              timeout=60)
    assert help_run.returncode == 0, help_run.stderr
    assert "detect" in help_run.stdout
    assert "export" in help_run.stdout
    gui = subprocess.run([str(bin_dir / "kvswitch-gui"), "use", "nosuch"], capture_output=True, text=True,
                         env={**env, "HOME": str(tmp_path / "home")}, cwd=tmp_path, timeout=60)
    assert gui.returncode != 0
    assert gui.stderr.count("\n") == 1, gui.stderr  # one line through the CLI's errors, no traceback
    assert gui.stderr.startswith("kvswitch: ")
    port = free_port()
    detect = subprocess.run([kvswitch, "detect", "--json", "--no-processes", "--port", str(port)],
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert detect.returncode == 0, detect.stderr
    assert json.loads(detect.stdout)["servers"] == []

    where = subprocess.run(
        [str(bin_dir / "python"), "-c",
         "import kvswitch; from kvswitch.core.resources import resource_path as r;"
         "print(kvswitch.__file__); print(r('icons/kvswitch.svg'));"
         "print(r('icons/tray/png/kvswitch-tray-hit-16.png'))"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60, check=True).stdout.splitlines()
    package_dir = Path(where[0]).parent
    assert package_dir.is_relative_to(venv)  # the installed copy, not the source tree
    assert Path(where[1]) == package_dir / "_resources" / "icons" / "kvswitch.svg"
    assert Path(where[2]).is_file()
    translations = sorted(p.name for p in (REPO / "app" / "kvswitch" / "ui" / "i18n").glob("*.qm"))
    assert sorted(p.name for p in (package_dir / "ui" / "i18n").glob("*.qm")) == translations
    assert (package_dir / "verify" / "data" / "claude_code_request.json").is_file()
    assert (package_dir / "core" / "data" / "vendors.json").is_file()
    assert (package_dir / "_resources" / "fonts" / "KVSwitchNotoSansSC-Regular.otf").is_file()
    assert (package_dir / "_resources" / "fonts" / "OFL.txt").is_file()
    presets = subprocess.run([kvswitch, "preset", "list", "--json"], capture_output=True, text=True, env=env,
                             cwd=tmp_path, timeout=60)
    assert presets.returncode == 0, presets.stderr
    assert any(entry["id"] == "deepseek" for entry in json.loads(presets.stdout))
    scanner = subprocess.run(  # compiled by the install, not copied from the source tree
        [str(bin_dir / "python"), "-c", "from kvswitch.logs import _blockscan; print(_blockscan.__file__)"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert scanner.returncode == 0, scanner.stderr
    assert Path(scanner.stdout.strip()).parent == package_dir / "logs"
