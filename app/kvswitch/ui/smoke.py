"""``kvswitch --smoke-test``: open the real window and check the wiring, then exit (packaging CI).

Checks, without writing any user file: the store loads, the engine plans a profile (read-only), the log
classifier recognises a cache-hit line, the tray menu builds, and the window shows. Prints one line.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtWidgets import QApplication

    from kvswitch.core.paths import AppPaths

SAMPLE_TIMING_LINE = ("0.00.391.783 I slot print_timing: id  0 | task 9 | prompt eval time =      23.30 ms "
                      "/    23 tokens (    1.01 ms per token,   987.29 tokens per second)")


def run_smoke_test(app: QApplication, paths: AppPaths) -> int:
    from kvswitch.core.models import Profile  # noqa: PLC0415
    from kvswitch.logs import classify_line  # noqa: PLC0415
    from kvswitch.servers import DEFAULT_LOCAL_KIND, preset  # noqa: PLC0415
    from kvswitch.ui.shell.shell import AppShell  # noqa: PLC0415
    from kvswitch.ui.shell.tray import TrayIcon  # noqa: PLC0415

    checks: list[str] = []
    try:
        shell = AppShell(paths, None, tray_available=TrayIcon.available())
        profiles = shell.controller.store.profiles()
        checks.append(f"store {len(profiles)} profile(s)")
        chosen = profiles[0] if profiles else Profile(
            name="smoke", kind=DEFAULT_LOCAL_KIND, base_url=preset(DEFAULT_LOCAL_KIND).base_url,
            targets=["claude"])
        plans = shell.controller.engine.plan(chosen)
        checks.append(f"engine planned {len(plans)} target(s)")
        kind = classify_line(SAMPLE_TIMING_LINE, DEFAULT_LOCAL_KIND.value).kind
        if str(kind) != "timing":
            raise RuntimeError(f"the log classifier saw a timing line as {kind}")
        checks.append(f"classifier {kind}")
        tray = shell.tray or TrayIcon(shell.controller)
        tray.rebuild_menu()
        checks.append(f"tray menu {len(tray.menu.actions())} item(s)"
                      + ("" if shell.tray is not None else " (no system tray here)"))
        shell.window.show()
        app.processEvents()
        if not shell.window.isVisible():
            raise RuntimeError("the main window did not show")
        checks.append("window shown")
        shell.shutdown()
        shell.window.close()
    except Exception as exc:
        sys.stderr.write(f"kvswitch smoke-test FAILED: {type(exc).__name__}: {exc}\n")
        return 1
    sys.stdout.write("kvswitch smoke-test OK: " + "; ".join(checks) + "\n")
    sys.stdout.flush()
    return 0
