"""Stand-in server processes with the command lines of real servers, started for detection tests."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from platform_helpers import Spawner, wait_for_port

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def standin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory laid out so real-looking command lines run the stand-in."""
    root = tmp_path_factory.mktemp("standins")
    shutil.copy(HERE / "standin.py", root / "standin.py")
    (root / "serve").write_text("import standin\nstandin.main('ollama')\n")  # run as `ollama serve`
    for package, module, kind in (("vllm", "entrypoints/openai/api_server", "vllm"),
                                  ("sglang", "launch_server", "sglang")):
        target = root / package / f"{module}.py"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"import standin\nstandin.main({kind!r})\n")
        directory = target.parent
        while directory != root:
            (directory / "__init__.py").touch()
            directory = directory.parent
    (root / "lmstudio_main.py").write_text("import standin\nstandin.main('lmstudio')\n")
    # the app's main process, which leaves the server to a helper process (as Electron apps do)
    (root / "lmstudio_app.py").write_text(
        "import os, subprocess\n"
        "helper = subprocess.Popen(['/opt/LM Studio/lm-studio', 'lmstudio_main.py', '--type=utility'],"
        " executable=os.environ['STANDIN_PYTHON'])\n"
        "try:\n    helper.wait()\nfinally:\n    helper.kill()\n")
    (root / "web.py").write_text("import standin\nstandin.main('web')\n")
    return root


@pytest.fixture
def spawn(standin_dir: Path) -> Iterator[Spawner]:
    """Start ``argv`` and wait for ``port``; ``argv[0]`` is only the name shown, Python runs it."""
    started: list[subprocess.Popen[bytes]] = []

    def start(argv: list[str], port: int, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        full_env = {**os.environ, "PYTHONPATH": str(standin_dir), "STANDIN_PORT": str(port),
                    "STANDIN_PYTHON": sys.executable, **(env or {})}
        proc = subprocess.Popen(argv, executable=sys.executable, cwd=standin_dir, env=full_env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started.append(proc)
        wait_for_port(port, proc)
        return proc

    yield start
    for proc in started:
        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(proc.pid).children(recursive=True):
                child.kill()
        proc.kill()
        proc.wait(timeout=10)
