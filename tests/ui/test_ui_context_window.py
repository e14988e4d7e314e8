"""Profiles made in the window carry the context window, as ``kvswitch profile add`` + ``use`` do (issue 38,
item 4): from the gallery (editor Save), the setup assistant and a window Use, against a real llama-server.

Without it Claude Code assumes a window of 1m tokens and Codex 272k. The expected number is the server's
own ``/props`` (``default_generation_settings.n_ctx``), read here by the test, not by KV Switch.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kvswitch.core.models import Profile
from support.llama import RunningServer
from support.llama import llama_server as start_llama_server


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with start_llama_server(tmp_path_factory.mktemp("llama-ctx"), context=32768, parallel=1,
                            metrics=False) as server:
        yield server


def _server_n_ctx(server: RunningServer) -> int:
    props = httpx.get(f"{server.url}/props", timeout=10).json()
    return int(props["default_generation_settings"]["n_ctx"])


def _written(fake_home: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    claude = json.loads((fake_home / ".claude" / "settings.json").read_text())
    codex = tomllib.loads((fake_home / ".codex" / "config.toml").read_text())
    return claude, codex


@pytest.mark.real_server
def test_a_gallery_profile_saved_and_used_in_the_window_tells_both_clients_the_window(
        qtbot: Any, window: Any, store: Any, llama: RunningServer, fake_home: Path) -> None:
    from kvswitch.platform.detect import detect_servers

    n_ctx = _server_n_ctx(llama)
    gallery = window.open_gallery(detector=lambda: detect_servers([llama.port]))
    with qtbot.waitSignal(gallery.detection_finished, timeout=20000):
        pass
    ours = next(t for t in gallery.entry_titles() if t.endswith(f":{llama.port}"))
    assert gallery.select_title(ours)
    gallery.buttons.accepted.emit()
    editor = window.editor
    editor.name_edit.setText("gallery-local")
    for spec, box in editor.target_boxes.items():
        box.setChecked(spec in ("claude", "codex"))
    with qtbot.waitSignal(window.model.rowsInserted, timeout=5000):
        editor.save_button.click()
    assert store.get("gallery-local").context_window == n_ctx

    assert window.apply_profile("gallery-local", review=False)
    claude, codex = _written(fake_home)
    assert claude["env"]["CLAUDE_CODE_MAX_CONTEXT_TOKENS"] == str(n_ctx)
    assert codex["model_context_window"] == n_ctx


@pytest.mark.real_server
def test_the_setup_assistant_gives_its_profiles_the_window(qtbot: Any, controller: Any, store: Any,
                                                           llama: RunningServer) -> None:
    from kvswitch.platform.detect import detect
    from kvswitch.ui.shell.first_run import FirstRunDialog

    dialog = FirstRunDialog(controller, detector=lambda: detect([llama.port], processes=[]))
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.detection_finished, timeout=20000):
        dialog.show()
    with qtbot.waitSignal(dialog.profiles_added, timeout=5000) as added:
        dialog.add_button.click()
    assert [store.get(name).context_window for name in added.args[0]] == [_server_n_ctx(llama)]


@pytest.mark.real_server
def test_use_in_the_window_reads_the_window_of_a_profile_made_without_it(
        qtbot: Any, window: Any, store: Any, llama: RunningServer, fake_home: Path) -> None:
    """A profile an older window saved (no window): Use reads it from the server, as ``kvswitch use``."""
    store.add(Profile(name="older", kind="llama.cpp", base_url=llama.url, targets=["claude", "codex"],
                      env={"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}))
    assert window.apply_profile("older", review=False)
    n_ctx = _server_n_ctx(llama)
    assert store.get("older").context_window == n_ctx
    claude, codex = _written(fake_home)
    assert claude["env"]["CLAUDE_CODE_MAX_CONTEXT_TOKENS"] == str(n_ctx)
    assert codex["model_context_window"] == n_ctx


@pytest.mark.parametrize("version", ["0.169.0", "0.171.0"])
def test_the_real_codex_loads_the_window_a_window_use_wrote(qtbot: Any, window: Any, store: Any,
                                                           fake_home: Path, version: str) -> None:
    """Both Codex versions take ``model_context_window`` as an integer (a string there is refused with
    "invalid type ... in `model_context_window`", so the key is known): ``codex mcp list`` loads the whole
    config.toml without contacting a model."""
    import subprocess

    from support.clients import codex_binary

    binary = codex_binary(version)
    store.add(Profile(name="known", kind="llama.cpp", base_url="http://127.0.0.1:9", targets=["codex"],
                      model="tiny", context_window=32768))
    assert window.apply_profile("known", review=False)
    codex_home = fake_home / ".codex"
    assert tomllib.loads((codex_home / "config.toml").read_text())["model_context_window"] == 32768
    env = {"HOME": str(fake_home), "CODEX_HOME": str(codex_home), "PATH": "/usr/bin:/bin"}
    loaded = subprocess.run([str(binary), "mcp", "list"], env=env, capture_output=True, text=True, timeout=60,
                            check=False)
    assert loaded.returncode == 0, loaded.stderr
    assert "failed to load" not in loaded.stdout + loaded.stderr
