#!/usr/bin/env python3
"""Take the README screenshots of the desktop app under Xvfb, from a throw-away demo HOME.

    scripts/screenshots.py [--out docs/screenshots]

Re-runs itself under ``xvfb-run -a`` when there is no display. Everything happens in a temporary
HOME: demo profiles, a demo llama-server log (built from ``tests/ui/data/llama_server_demo.log``, a
real capture, or generated when that file is absent), and — when the llama-server binary is built — a
real verify against a tiny local model. Saves the empty window, the preset gallery, main window (profile
cards, light and dark), log panel (hit and miss), verify card, apply diff and tray menu.

    QT_SCALE_FACTOR=2 scripts/screenshots.py --quick
    scripts/screenshots.py --matrix

``--quick`` saves only the window states (empty, gallery, cards), with ``@2x`` in the names when
``QT_SCALE_FACTOR`` is 2, to check the layout at 200%. ``--matrix`` takes those states in English and
Simplified Chinese, light and dark, at 100% and 200% (``main-window-dark-zh_CN@2x.png`` …).

The look is the app's own: the theme is saved in the demo HOME's settings (``--theme``) and the app
applies it at start (``kvswitch.ui.widgets.appearance``); this script never sets a style or palette.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEMO_LOG = REPO / "tests" / "ui" / "data" / "llama_server_demo.log"
REAL_HOME = Path.home()
LLAMA = Path(os.environ.get("KVSWITCH_LLAMA_SERVER")
             or REAL_HOME / ".cache" / "kvswitch" / "llama-server" / "11434" / "llama-server")

HEADER = [
    "0.00.002.197 I srv  llama_server: initializing ...",
    "0.00.008.791 I srv    load_model: loading model '/models/qwen3-coder-30b-a3b-q4_k_m.gguf'",
    "0.00.021.840 I srv    load_model: initializing, n_slots = 1, n_ctx_slot = 65536, kv_unified = 'false'",
    "0.00.025.413 I srv  llama_server: model loaded",
    "0.00.025.481 I srv  llama_server: listening on http://127.0.0.1:8080",
]


def demo_blocks() -> tuple[list[str], list[str], list[str]]:
    """(cold miss, hit, miss) request blocks in llama-server's own format."""
    if DEMO_LOG.is_file():
        lines = DEMO_LOG.read_text().splitlines()
        return lines[8:15], lines[15:22], lines[22:29]
    similar = "LCP similarity, f_sim_best = 0.985 (> 0.100 thold), f_keep = 0.995"
    return (_generated("LRU, t_last = -1", 1536, 79.11), _generated(similar, 23, 23.3),
            _generated("LRU, t_last = 2656294876", 1515, 79.89))


def _generated(selected: str, tokens: int, ms: float) -> list[str]:
    return [
        f"0.00.250.178 I slot get_availabl: id  0 | task -1 | selected slot by {selected}",
        "0.00.250.284 I slot launch_slot_: id  0 | task 0 | processing task, is_child = 0",
        f"0.00.339.940 I slot print_timing: id  0 | task 0 | prompt eval time =  {ms:9.2f} ms / "
        f"{tokens:5d} tokens (    0.05 ms per token, 19416.98 tokens per second)",
        "0.00.340.017 I slot print_timing: id  0 | task 0 |        eval time =      10.50 ms /     8 tokens "
        "(    1.50 ms per token,   666.60 tokens per second)",
        "0.00.340.042 I slot print_timing: id  0 | task 0 |       total time =      89.61 ms /  1544 tokens",
        "0.00.340.067 I slot print_timing: id  0 | task 0 |    graphs reused =          7",
        "0.00.340.217 I slot      release: id  0 | task 0 | stop processing: n_tokens = 1543, truncated = 0",
    ]


class Session:
    """Writes request blocks with increasing task ids and clock, like a server that keeps running."""

    def __init__(self, path: Path):
        self.path = path
        self.task = 0
        self.clock_ms = 30_000

    def write(self, lines: list[str]) -> None:
        with self.path.open("a") as handle:
            handle.write("\n".join(lines) + "\n")

    def request(self, block: list[str]) -> None:
        self.task += 3
        out = []
        for line in block:
            self.clock_ms += 7
            ms = self.clock_ms
            stamp = f"0.{ms // 60000:02d}.{ms // 1000 % 60:03d}.{ms % 1000:03d}"
            line = re.sub(r"^\d+\.\d+\.\d+\.\d+", stamp, line)
            out.append(re.sub(r"\| task (\d+) \|", f"| task {self.task} |", line))
        self.write(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(REPO / "docs" / "screenshots"))
    parser.add_argument("--quick", action="store_true", help="only the empty state, gallery and cards")
    parser.add_argument("--theme", choices=["light", "dark", "system"], default="light")
    parser.add_argument("--matrix", action="store_true",
                        help="the quick states in en and zh_CN, light and dark, at 100%% and 200%%")
    args = parser.parse_args()
    if args.matrix:
        failed = 0
        for lang in ("en", "zh_CN"):
            for theme in ("light", "dark"):
                for scale in ("1", "2"):
                    env = {**os.environ, "KVSWITCH_LANG": lang, "QT_SCALE_FACTOR": scale}
                    failed |= subprocess.call([sys.executable, __file__, "--out", args.out, "--quick",
                                               "--theme", theme], env=env)
        return failed
    if not os.environ.get("DISPLAY") and not os.environ.get("KVSWITCH_SCREENSHOTS_CHILD"):
        if not shutil.which("xvfb-run"):
            sys.exit("xvfb-run is needed (apt-get install xvfb)")
        env = {**os.environ, "KVSWITCH_SCREENSHOTS_CHILD": "1"}
        return subprocess.call(["xvfb-run", "-a", "-s", "-screen 0 2600x1800x24", sys.executable, __file__,
                                "--out", args.out, "--theme", args.theme,
                                *(["--quick"] if args.quick else [])], env=env)
    with tempfile.TemporaryDirectory(prefix="kvswitch-demo-") as tmp:
        return shoot(Path(tmp), Path(args.out), args.quick, args.theme)


def _demo_env(home: Path) -> None:
    demo = {"HOME": home, "XDG_CONFIG_HOME": home / ".config", "XDG_DATA_HOME": home / ".local/share",
            "XDG_STATE_HOME": home / ".local/state", "XDG_CACHE_HOME": home / ".cache",
            "KVSWITCH_CONFIG_DIR": home / ".config" / "kvswitch"}
    for name, value in demo.items():
        os.environ[name] = str(value)
    os.environ["KVSWITCH_NO_ERROR_DIALOGS"] = "1"
    os.environ.setdefault("KVSWITCH_LANG", "en")
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        os.environ.pop(name, None)
    sys.path.insert(0, str(REPO / "app"))


def _save_theme(theme: str) -> None:
    """The theme as a user saves it in Settings; the app reads and applies it when it starts."""
    from kvswitch.core.paths import AppPaths  # noqa: PLC0415
    from kvswitch.core.settings import AppSettings, save_settings  # noqa: PLC0415

    save_settings(AppPaths.default(), AppSettings(theme=theme, first_run_done=True))  # type: ignore[arg-type]


def _tag() -> str:
    """``-dark``, ``-zh_CN`` and ``@2x`` as the theme, language and scale of this run make them."""
    from kvswitch.ui.widgets import appearance  # noqa: PLC0415

    tag = "-dark" if appearance.current_scheme() == "dark" else ""
    if os.environ.get("KVSWITCH_LANG", "en") != "en":
        tag += "-" + os.environ["KVSWITCH_LANG"]
    return tag + ("@2x" if os.environ.get("QT_SCALE_FACTOR") == "2" else "")


def _start_llama(home: Path) -> tuple[subprocess.Popen[bytes] | None, str | None]:
    """A real llama-server on a tiny model, for the verify card (None when the binary is not built)."""
    if not LLAMA.is_file():
        return None, None
    import socket  # noqa: PLC0415

    import httpx  # noqa: PLC0415

    model = home / "tiny.gguf"
    subprocess.run([sys.executable, str(REPO / "scripts" / "make_tiny_model.py"), str(model), "--context",
                    "32768"], check=True, capture_output=True, timeout=120)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    argv = [str(LLAMA), "-m", str(model), "-a", "qwen3-coder", "--host", "127.0.0.1", "--port", str(port),
            "-c", "32768", "-np", "1"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc, f"http://127.0.0.1:{port}"
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    return None, None


def shoot(home: Path, out: Path, quick: bool = False, theme: str = "light") -> int:
    _demo_env(home)
    _save_theme(theme)
    os.environ["KVSWITCH_SCREENSHOT_THEME"] = theme
    out.mkdir(parents=True, exist_ok=True)
    llama, llama_url = _start_llama(home)
    try:
        return _shoot(home, out, llama_url, quick)
    finally:
        if llama is not None:
            llama.terminate()
            llama.wait(10)


def _remember_demo_verdicts(paths: object) -> None:
    """Verdicts for two demo profiles' cards, as ``kvswitch verify`` records them."""
    import datetime as dt  # noqa: PLC0415

    from kvswitch.verify.history import HistoryEntry, VerifyHistory  # noqa: PLC0415

    history = VerifyHistory(paths.data_dir / "verify-history")  # type: ignore[attr-defined]
    earlier = (dt.datetime.now(dt.UTC) - dt.timedelta(minutes=12)).isoformat(timespec="seconds")
    history.append(HistoryEntry(time=earlier, profile="Local llama.cpp", check="synthetic", verdict="HIT"))
    yesterday = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=26)).isoformat(timespec="seconds")
    history.append(HistoryEntry(time=yesterday, profile="llama.cpp, stock Claude env", check="synthetic",
                                verdict="MISS"))


def _shoot_chinese(app: object, shell: object, out: Path, pump: object) -> None:
    """The verify tab in Simplified Chinese, when a CJK font is installed (widgets are built translated)."""
    from PySide6.QtGui import QFontDatabase  # noqa: PLC0415

    from kvswitch.ui import i18n  # noqa: PLC0415
    from kvswitch.ui.shell.main_window import MainWindow  # noqa: PLC0415

    if not QFontDatabase.families(QFontDatabase.WritingSystem.SimplifiedChinese):
        print("no Chinese font installed: skipping the zh_CN screenshot")
        return
    i18n.install(app, "zh_CN")  # type: ignore[arg-type]
    window = MainWindow(shell.controller)  # type: ignore[attr-defined]
    window.resize(1180, 760)
    window.show()
    window.tabs.setCurrentWidget(window.verify_card)
    result = shell.controller.last_verify_result  # type: ignore[attr-defined]
    if result is not None:
        window.verify_card.show_result(result, shell.controller.verifying)  # type: ignore[attr-defined]
    pump(500)  # type: ignore[operator]
    window.grab().save(str(out / "verify-card-zh_CN.png"))
    window.log_panel.stop()
    window.close()
    i18n.install(app, "en")  # type: ignore[arg-type]


def _shoot_first_start(window: object, out: Path, pump: object, llama_url: str | None, tag: str) -> None:
    """The window before any profile exists, and the gallery it opens (a real server detected first)."""
    from kvswitch.platform.detect import detect_servers  # noqa: PLC0415

    window.grab().save(str(out / f"empty-state{tag}.png"))  # type: ignore[attr-defined]
    ports = [int(llama_url.rsplit(":", 1)[1])] if llama_url else []
    def demo_servers() -> list[object]:  # only the demo server, not others this machine runs
        return [found for found in detect_servers(ports) if found.port in ports] if ports else []

    gallery = window.open_gallery(detector=demo_servers)  # type: ignore[attr-defined]
    pump(2500)  # type: ignore[operator]
    gallery.grab().save(str(out / f"gallery{tag}.png"))
    gallery.search_edit.setText("deepseek")
    pump(200)  # type: ignore[operator]
    gallery.grab().save(str(out / f"gallery-search{tag}.png"))
    gallery.close()


def _shoot(home: Path, out: Path, llama_url: str | None, quick: bool = False) -> int:
    theme_choice = os.environ.get("KVSWITCH_SCREENSHOT_THEME", "light")
    from PySide6.QtCore import QEventLoop, QPoint, QTimer  # noqa: PLC0415
    from PySide6.QtWidgets import QApplication  # noqa: PLC0415

    from kvswitch.core.models import Profile  # noqa: PLC0415
    from kvswitch.core.paths import AppPaths  # noqa: PLC0415
    from kvswitch.servers.preset_data import preset_profile_data  # noqa: PLC0415
    from kvswitch.ui import i18n  # noqa: PLC0415
    from kvswitch.ui.app import create_application  # noqa: PLC0415
    from kvswitch.ui.profiles.diff_dialog import ApplyDialog  # noqa: PLC0415
    from kvswitch.ui.shell.shell import AppShell  # noqa: PLC0415
    from kvswitch.ui.shell.tray import TrayIcon  # noqa: PLC0415

    app = create_application()
    i18n.install(app, i18n.choose_language(None))

    def pump(ms: int) -> None:
        loop = QEventLoop()
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    server_log = home / "llama-server.log"
    server_log.write_text("")
    paths = AppPaths.default()
    shell = AppShell(paths, None, tray_available=False)
    tag = _tag()
    shell.window.resize(1180, 760)
    if not shell.window.content_built:
        shell.window.build_content()
    shell.window.show()
    pump(300)
    _shoot_first_start(shell.window, out, pump, llama_url, tag)
    store = shell.controller.store
    safe = {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CODE_ENABLE_TELEMETRY": "0"}
    store.add(Profile(name="Local llama.cpp", kind="llama.cpp", base_url=llama_url or "http://127.0.0.1:8080",
                      model="qwen3-coder", env=safe, targets=["claude", "codex", "bash"],
                      log={"kind": "file", "path": str(server_log)}))
    store.add(Profile(name="Anthropic", kind="anthropic", base_url="https://api.anthropic.com",
                      api_key="sk-ant-api03-demo-0000000000000000000000"))
    store.add(Profile(name="LM Studio", kind="lm-studio", base_url="http://127.0.0.1:1234",
                      model="qwen3-coder-30b", env={"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}))
    deepseek = preset_profile_data("DeepSeek", "deepseek", None, False, False)
    store.add(Profile.model_validate({**deepseek, "api_key": "sk-demo-2222222222222222"}))
    store.add(Profile(name="Team gateway", kind="openai-compatible", base_url="https://llm.example.com/v1",
                      api_key="sk-team-demo-1111111111111111", model="gpt-5-codex", targets=["codex"]))
    store.add(Profile(name="llama.cpp, stock Claude env", kind="llama.cpp",
                      base_url=llama_url or "http://127.0.0.1:8080", model="qwen3-coder", targets=["claude"]))
    window = shell.window
    window.resize(1180, 760)
    window.show()
    window._select("Local llama.cpp")
    plans = shell.controller.plan("Local llama.cpp")
    engine = shell.controller.engine
    dialog = ApplyDialog("Local llama.cpp", plans, lambda ps: engine.render_diff(ps, show_secrets=False),
                         window)
    dialog.show()
    pump(300)
    dialog.grab().save(str(out / "apply-diff.png"))
    dialog.close()
    shell.controller.apply("Local llama.cpp")
    _remember_demo_verdicts(paths)
    shell.controller.verify_summary.reload()  # the cards read the history off the GUI thread
    pump(800)
    window.grab().save(str(out / f"main-window{tag}.png"))
    if quick:
        window.filter_edit.setText("no such profile")
        pump(200)
        window.grab().save(str(out / f"no-match{tag}.png"))
        shell.shutdown()
        window.close()
        return 0

    window._select("LM Studio")
    pump(200)
    window.grab().save(str(out / "lint-fix.png"))

    window._select("Local llama.cpp")
    cold, hit, miss = demo_blocks()
    session = Session(server_log)
    session.write(HEADER)
    window.tabs.setCurrentWidget(window.log_panel)
    session.request(cold)
    for _ in range(14):
        session.request(hit)
        pump(120)
    pump(600)
    window.grab().save(str(out / "log-panel-hit.png"))
    for _ in range(12):
        session.request(miss)
        pump(120)
    pump(600)
    window.grab().save(str(out / "log-panel-miss.png"))

    window.tabs.setCurrentWidget(window.verify_card)
    if llama_url:
        # verify the profile without the fix, so the card shows the diagnosis and its one-click fix
        shell.controller.apply("llama.cpp, stock Claude env")
        window._select("llama.cpp, stock Claude env")
        window.tabs.setCurrentWidget(window.verify_card)
        shell.controller.verify_timeout_s = 90
        loop = QEventLoop()
        shell.controller.verify_finished.connect(loop.quit)
        shell.controller.verify_failed.connect(loop.quit)
        QTimer.singleShot(120_000, loop.quit)
        shell.controller.start_verify("llama.cpp, stock Claude env")
        pump(1500)
        window.grab().save(str(out / "verify-running.png"))
        loop.exec()
        pump(300)
        window.grab().save(str(out / "verify-card.png"))

    # The same panel in the dark theme, switched as Settings does (the app's own palette).
    shell.controller.apply("Local llama.cpp")
    window._select("Local llama.cpp")
    window.bind_log_to_active()
    pump(2500)  # the log reader is a child process: on a busy machine it takes a while to open the file
    session.write(HEADER)
    for block in [cold] + [hit] * 8 + [miss] * 5 + [hit] * 6:
        session.request(block)
        pump(60)
    from kvswitch.ui.widgets import appearance  # noqa: PLC0415

    appearance.apply_theme("dark")
    window.tabs.setCurrentWidget(window.log_panel)
    pump(800)
    window.grab().save(str(out / "log-panel-dark.png"))
    window.tabs.setCurrentWidget(window.editor_page)
    pump(300)
    window.grab().save(str(out / "main-window-dark.png"))
    appearance.apply_theme(theme_choice)

    tray = TrayIcon(shell.controller)
    tray.rebuild_menu()
    tray.menu.popup(QPoint(40, 40))
    pump(300)
    tray.menu.grab().save(str(out / "tray-menu.png"))
    tray.menu.hide()

    _shoot_chinese(app, shell, out, pump)
    shell.shutdown()
    window.close()
    QApplication.processEvents()
    written = sorted(p.name for p in out.glob("*.png"))
    print("saved:", ", ".join(written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
