#!/usr/bin/env python3
"""Cold start to first shown window: KV Switch vs a bare PySide6 window, in the same run.

Each sample is a fresh interpreter (a cold start as the user sees it, minus the OS file cache), timed
from ``exec`` to the moment the window has been shown and painted once. Samples alternate between the
two programs so machine load affects both alike. Target: KV Switch ≤ 1.5× the bare window.

    python3 benchmarks/ui_startup.py [--runs 7]
    python3 benchmarks/ui_startup.py --modules-at-first-paint   # what was imported when it painted

The second form prints, as JSON, the modules loaded at the moment the window first paints;
``tests/ui/test_startup_boundary.py`` fails when the engines are among them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# Both programs report "shown" from the window's first paint, through the same event filter.
FIRST_PAINT = """
from PySide6.QtCore import QEvent, QObject
class FirstPaint(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint and not getattr(self, "seen", False):
            self.seen = True
            print("shown", flush=True)
            if QUIT_ON_PAINT:
                app.quit()
        return False
first_paint = FirstPaint()
"""

BARE = FIRST_PAINT.replace("QUIT_ON_PAINT", "True") + """
from PySide6.QtWidgets import QApplication, QMainWindow
app = QApplication([])
w = QMainWindow()
w.resize(1100, 720)
w.installEventFilter(first_paint)
w.show()
app.exec()
"""

# The same steps as kvswitch.ui.app.run_app: the frame shows first; profiles load on the next turn, and
# "ready" is printed when they are listed and the tray is up (the log file opens on the turn after).
KVSWITCH = FIRST_PAINT.replace("QUIT_ON_PAINT", "False") + """
from kvswitch.core.paths import AppPaths
from kvswitch.ui.app import after_ready, create_application, setup_logging_later
paths = AppPaths.default()
open_log_file = setup_logging_later(paths)
app = create_application()
from kvswitch.ui import i18n
i18n.install(app, i18n.choose_language(None))
from kvswitch.ui.shell.single_instance import SingleInstance, send_to_running, server_name
name = server_name(paths.config_dir)
assert not send_to_running(name)
instance = SingleInstance(name)
instance.listen()
from kvswitch.ui.errors import install_excepthooks
install_excepthooks()
from kvswitch.ui.shell.shell import AppShell
shell = AppShell(paths, deferred=True)
shell.ready.connect(after_ready(open_log_file))
shell.ready.connect(lambda: (print("ready", flush=True), app.quit()))
shell.window.installEventFilter(first_paint)
shell.start()
app.exec()
shell.shutdown()
"""

# What ``kvswitch`` with no sub-command runs (``kvswitch.cli.main``), argument parsing included; stops at
# the first paint.
ENTRY = FIRST_PAINT.replace("QUIT_ON_PAINT", "True") + """
import kvswitch.ui.app as ui_app
create = ui_app.create_application
def create_and_watch(argv=None):
    global app
    app = create(argv)
    app.installEventFilter(first_paint)
    return app
ui_app.create_application = create_and_watch
from kvswitch.cli import main
main([])
"""

# The same programs again, reporting instead of timing: the modules loaded when the window first paints.
_REPORT_MODULES = 'import json, sys; print(json.dumps(sorted(sys.modules)), flush=True); app.quit()'
MODULES_AT_PAINT = {"app": KVSWITCH.replace('print("shown", flush=True)', _REPORT_MODULES),
                    "command": ENTRY.replace('print("shown", flush=True)', _REPORT_MODULES)}
#: ... and when the profiles are listed ("ready")
MODULES_AT_READY = KVSWITCH.replace(
    'print("ready", flush=True)',
    'print(__import__("json").dumps(sorted(__import__("sys").modules)), flush=True)')

SEED = """
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.core.store import ProfileStore
store = ProfileStore(AppPaths.default())
for i in range(5):
    store.add(Profile(name=f"profile {i}", kind="llama.cpp", base_url=f"http://127.0.0.1:{8080 + i}"))
"""


def bench_env(home: str, *, bytecode_cache: bool = True) -> dict[str, str]:
    """The environment every program runs in: a temporary HOME and config dir, the source tree's app."""
    env = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen"),
           "HOME": home, "KVSWITCH_CONFIG_DIR": str(Path(home) / "cfg"), "PYTHONPATH": str(REPO / "app"),
           "KVSWITCH_LANG": "en"}
    if not bytecode_cache:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        # An installed app starts from compiled bytecode (pip compiles it), as PySide6 itself does
        # in both programs; the cache goes to the temporary dir so the source tree stays clean.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(Path(home) / "pycache")
    return env


def modules_at_first_paint(program: str = "app") -> list[str]:
    """The modules imported by the time KV Switch's window first paints (with a few profiles).

    ``program``: ``app`` (the steps of ``run_app``) or ``command`` (``kvswitch`` with no sub-command).
    """
    return _modules_when(MODULES_AT_PAINT[program], "painted")


def modules_at_ready() -> list[str]:
    """The modules imported by the time the cards list the profiles (``AppShell.ready``)."""
    return _modules_when(MODULES_AT_READY, "became ready")


def _modules_when(program: str, moment: str) -> list[str]:
    import json  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as home:
        env = bench_env(home)
        subprocess.run([sys.executable, "-c", SEED], env=env, check=True)
        out = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True,
                             timeout=60)
    for line in out.stdout.splitlines():
        if line.startswith("["):
            return list(json.loads(line))
    raise RuntimeError(f"the window never {moment} (exit {out.returncode}): {out.stderr[-2000:]}")


def sample(code: str, env: dict[str, str]) -> tuple[float, float]:
    """(seconds to the first shown window, seconds until profiles are loaded and shown)."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    shown = time.perf_counter() - start
    ready = shown
    if line.strip() == "shown" and "ready" in code:
        line = proc.stdout.readline()  # "ready" (profiles loaded) must come after the first paint
        ready = time.perf_counter() - start
        line = "shown" if line.strip() == "ready" else f"out of order: {line!r}"
    proc.wait(30)
    if line.strip() != "shown":
        raise SystemExit(f"the program did not show its window (exit {proc.returncode})")
    return shown, ready


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--no-bytecode-cache", action="store_true",
                        help="compile KV Switch from source at every start (as with PYTHONDONTWRITEBYTECODE)")
    parser.add_argument("--modules-at-first-paint", action="store_true",
                        help="print the modules loaded when the window first paints (JSON) and exit")
    args = parser.parse_args()
    if args.modules_at_first_paint:
        import json  # noqa: PLC0415

        print(json.dumps({name: modules_at_first_paint(name) for name in MODULES_AT_PAINT}, indent=0))
        return 0
    with tempfile.TemporaryDirectory() as home:
        env = bench_env(home, bytecode_cache=not args.no_bytecode_cache)
        # a user with a few profiles (with none, the setup assistant would open)
        subprocess.run([sys.executable, "-c", SEED], env=env, check=True)
        sample(BARE, env)  # warm the OS file cache (and the bytecode cache) for all three
        sample(KVSWITCH, env)
        sample(ENTRY, env)
        bare, ours, ready, entry = [], [], [], []
        for _ in range(args.runs):
            bare.append(sample(BARE, env)[0])
            shown, loaded = sample(KVSWITCH, env)
            ours.append(shown)
            ready.append(loaded)
            entry.append(sample(ENTRY, env)[0])
    b, o, r, e = (statistics.median(bare), statistics.median(ours), statistics.median(ready),
                  statistics.median(entry))
    print(f"bare PySide6 window:          median {b * 1000:.0f} ms (min {min(bare) * 1000:.0f})")
    print(f"KV Switch first shown window: median {o * 1000:.0f} ms (min {min(ours) * 1000:.0f})")
    print(f"KV Switch profiles loaded:    median {r * 1000:.0f} ms (min {min(ready) * 1000:.0f})")
    print(f"`kvswitch` command, first shown window (argument parsing included): median {e * 1000:.0f} ms "
          f"(min {min(entry) * 1000:.0f})")
    cache = "compiled from source every start" if args.no_bytecode_cache else "bytecode cached"
    print(f"ratio first window: {o / b:.2f}x (target <= 1.5x); through the command: {e / b:.2f}x; "
          f"fully loaded: {r / b:.2f}x; {args.runs} runs each, platform {env['QT_QPA_PLATFORM']}, {cache}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
