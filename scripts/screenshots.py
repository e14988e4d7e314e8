#!/usr/bin/env python3
"""Take the docs' screenshots of the desktop app under Xvfb, from a throw-away demo HOME.

    scripts/screenshots.py --matrix          # every state, en and zh_CN, light and dark, 100% and 200%
    scripts/screenshots.py [--theme dark]    # every state once, in this run's language and scale

Re-runs itself under ``xvfb-run -a`` when there is no display. Everything happens in a temporary HOME:
demo profiles, a demo llama-server log (a real capture, re-stamped), verify verdicts and gateway usage
written through the app's own stores, and a real llama-server on a tiny model for the verify states
(``scripts/screenshot_states.py`` walks through them in order). Files are named
``<state>[-dark][-zh_CN][@2x].png``; beside each, ``<same>.json`` lists the rectangles and texts of the
visible text-bearing widgets, which ``tests/ui/test_screenshot_contrast.py`` checks for contrast.

The look is the app's own: the theme is saved in the demo HOME's settings (``--theme``) and the app
applies it at start (``kvswitch.ui.widgets.appearance``); this script never sets a style or palette.
``--matrix`` runs one child per language x theme x scale (the scale must be set before Qt starts), two
at a time, then removes screenshots in ``--out`` that no state makes any
more. Each child recompresses its PNGs losslessly when ``optipng`` is installed (apt).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REAL_HOME = Path.home()
LLAMA = Path(os.environ.get("KVSWITCH_LLAMA_SERVER")
             or REAL_HOME / ".cache" / "kvswitch" / "llama-server" / "11434" / "llama-server")

#: every state the docs show (the test checks each exists in every language, theme and scale)
STATES = ("empty-state", "setup-assistant", "gallery", "gallery-search", "apply-diff", "message-bar-undo",
          "review-changes", "main-window", "no-match", "editor", "log-panel-hit", "log-panel-miss",
          "verify-running", "verify-card", "verify-failed", "error-card", "verify-history", "usage",
          "sessions",
          "prompts", "skills", "mcp", "mcp-form", "settings", "tray-menu")
LANGUAGES = ("en", "zh_CN")
THEMES = ("light", "dark")
SCALES = ("1", "2")
CHILD_TIMEOUT_S = 900
#: children at once in ``--matrix``
PARALLEL = 2


def file_name(state: str, language: str, theme: str, scale: str) -> str:
    return (state + ("-dark" if theme == "dark" else "") + ("" if language == "en" else "-" + language)
            + ("@2x" if scale == "2" else "") + ".png")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(REPO / "docs" / "screenshots"))
    parser.add_argument("--theme", choices=["light", "dark"], default="light")
    parser.add_argument("--matrix", action="store_true",
                        help="every state in en and zh_CN, light and dark, at 100%% and 200%%")
    args = parser.parse_args()
    if args.matrix:
        return matrix(Path(args.out))
    if not os.environ.get("DISPLAY") and not os.environ.get("KVSWITCH_SCREENSHOTS_CHILD"):
        if not shutil.which("xvfb-run"):
            sys.exit("xvfb-run is needed (apt-get install xvfb)")
        env = {**os.environ, "KVSWITCH_SCREENSHOTS_CHILD": "1", "QT_QPA_PLATFORM": "xcb"}
        return subprocess.call(["xvfb-run", "-a", "-s", "-screen 0 2600x1800x24", sys.executable, __file__,
                                "--out", args.out, "--theme", args.theme], env=env)
    with tempfile.TemporaryDirectory(prefix="kvswitch-demo-") as tmp:
        return shoot(Path(tmp), Path(args.out), args.theme)


def matrix(out: Path) -> int:
    """One child per language x theme x scale, ``PARALLEL`` at a time, each with its own llama-server.

    The children mostly wait (for the event loop to settle, for the server's answers), so two at once
    cost little. (One server shared by all was slower: its slots split the CPU, and a verify that
    timed out left its prompt running.)
    """
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    started = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)

    def child(combo: tuple[str, str, str]) -> int:
        language, theme, scale = combo
        env = {**os.environ, "KVSWITCH_LANG": language, "QT_SCALE_FACTOR": scale}
        name = f"{language} {theme} {scale}x"
        try:
            done = subprocess.run([sys.executable, __file__, "--out", str(out), "--theme", theme], env=env,
                                  timeout=CHILD_TIMEOUT_S, capture_output=True, text=True, check=False)
        except subprocess.TimeoutExpired:
            print(f"screenshots: {name}: over {CHILD_TIMEOUT_S} s", flush=True)
            return 1
        print(f"screenshots: {name}: exit {done.returncode}\n{done.stdout}{done.stderr[-3000:]}", flush=True)
        return done.returncode

    # KVSWITCH_SCREENSHOTS_LANGUAGES=zh_CN redoes one language's shots (the others stay as they are)
    chosen = tuple(os.environ.get("KVSWITCH_SCREENSHOTS_LANGUAGES", "").split(",")) if os.environ.get(
        "KVSWITCH_SCREENSHOTS_LANGUAGES") else LANGUAGES
    combos = [(language, theme, scale) for language in chosen for theme in THEMES for scale in SCALES]
    with ThreadPoolExecutor(PARALLEL) as pool:
        failed = max(pool.map(child, combos))
    wanted = {file_name(state, language, theme, scale) for state in STATES for language in LANGUAGES
              for theme in THEMES for scale in SCALES}
    for stale in sorted(out.glob("*.png")):
        if stale.name not in wanted:
            stale.unlink()
            stale.with_suffix(".json").unlink(missing_ok=True)
            print(f"screenshots: removed {stale.name} (no state makes it any more)")
    missing = sorted(wanted - {p.name for p in out.glob("*.png")})
    if missing:
        print("screenshots: missing " + ", ".join(missing))
    print(f"screenshots: {len(wanted) - len(missing)} files in {time.monotonic() - started:.0f} s")
    return 1 if failed or missing else 0


def _optimise(pngs: list[Path]) -> None:
    """Same pixels, smaller files: ``optipng`` (apt) when installed (a 200% shot loses about a third)."""
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    optipng = shutil.which("optipng")
    if not optipng:
        print("screenshots: optipng is not installed (apt-get install optipng): files left as Qt wrote them")
        return

    def run(png: Path) -> None:
        subprocess.run([optipng, "-quiet", "-o2", "-strip", "all", str(png)], check=False, timeout=600)

    with ThreadPoolExecutor(1) as pool:
        list(pool.map(run, pngs))


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


def _free_port() -> int:
    import socket  # noqa: PLC0415

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_llama(home: Path) -> tuple[subprocess.Popen[bytes] | None, str | None]:
    """A real llama-server on a tiny model, for the verify states (None when the binary is not built)."""
    if not LLAMA.is_file():
        print(f"screenshots: no llama-server at {LLAMA}: the verify states are left out")
        return None, None
    import httpx  # noqa: PLC0415

    model = home / "tiny.gguf"
    subprocess.run([sys.executable, str(REPO / "scripts" / "make_tiny_model.py"), str(model), "--context",
                    "32768"], check=True, capture_output=True, timeout=120)
    port = _free_port()
    argv = [str(LLAMA), "-m", str(model), "-a", "qwen3-coder", "--host", "127.0.0.1", "--port", str(port),
            "-c", "32768", "-np", "1"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc, f"http://127.0.0.1:{port}"
        except httpx.HTTPError:
            time.sleep(0.2)  # polling a child process's port
    proc.kill()
    return None, None


def shoot(home: Path, out: Path, theme: str) -> int:
    _demo_env(home)
    _save_theme(theme)
    out.mkdir(parents=True, exist_ok=True)
    llama, llama_url = _start_llama(home)
    try:
        from kvswitch.ui import i18n  # noqa: PLC0415
        from kvswitch.ui.app import create_application  # noqa: PLC0415

        app = create_application()
        i18n.install(app, i18n.choose_language(None))
        import screenshot_states  # noqa: PLC0415 - after Qt and the demo HOME are set up

        language = os.environ.get("KVSWITCH_LANG", "en")
        scale = os.environ.get("QT_SCALE_FACTOR", "1")
        tag = file_name("", language, theme, scale).removesuffix(".png")
        tour = screenshot_states.shoot(home, out, tag, llama_url, f"http://127.0.0.1:{_free_port()}")
        _optimise([out / f"{name}{tag}.png" for name in tour.saved])  # while the other children wait
        print(f"saved {len(tour.saved)} states ({tag or 'light, en, 1x'})", flush=True)
        if tour.failed:
            print("screenshots: failed: " + ", ".join(tour.failed), flush=True)
        return 1 if tour.failed else 0
    finally:
        if llama is not None:
            llama.terminate()
            llama.wait(10)


if __name__ == "__main__":
    sys.exit(main())
