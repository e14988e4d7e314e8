""""Use" in the window on a gateway profile switches as ``kvswitch use`` does: when the clients' files
already point at the gateway, only the gateway's routing changes (the files stay byte-identical and the
next request reaches the new profile's server), and the message bar says so; the first switch to the
gateway writes the files and says that instead.

Real components: ``kvswitch gateway run`` as its own process on a free port, two real llama-servers
b11434 (tiny model) whose ``/metrics`` counters tell which one served a request, the client files in a
temporary HOME, a real window offscreen clicked on its cards' "Use" buttons."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from PySide6.QtCore import QPoint, Qt
from uihelpers import make_profile

from kvswitch.core.gateway_config import ensure_token, read_routes
from kvswitch.core.paths import claude_config_dir
from kvswitch.ui.profiles.diff_dialog import ApplyDialog
from kvswitch.ui.profiles.profile_card import use_button_rect
from support.gateway import gateway_process
from support.llama import RunningServer, llama_server
from support.net import free_port

pytestmark = pytest.mark.real_server

SAFE = {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}


def _prompt_tokens(server: RunningServer) -> int:
    """The prompt tokens the server has processed or taken from its cache so far (its own counters)."""
    text = httpx.get(f"{server.url}/metrics", timeout=10).text
    found = dict(re.findall(r"^(llamacpp:prompt_tokens(?:_cached)?_total) (\S+)$", text, re.M))
    return int(float(found["llamacpp:prompt_tokens_total"])) + int(
        float(found.get("llamacpp:prompt_tokens_cached_total", "0")))


def _ask_gateway(port: int, token: str, text: str) -> None:
    """One request as Claude Code sends it, to the gateway's Claude Code address in its files."""
    body = {"model": "tiny", "max_tokens": 2, "messages": [{"role": "user", "content": text}]}
    answer = httpx.post(f"http://127.0.0.1:{port}/claude/v1/messages", json=body,
                        headers={"x-api-key": token}, timeout=120, trust_env=False)
    assert answer.status_code == 200, answer.text[:500]


def _click_use(qtbot: Any, window: Any, name: str) -> None:
    index = window.model.index(window.model.row_of(name))
    point: QPoint = use_button_rect(window.list_view.visualRect(index), window.list_view.font()).center()
    with qtbot.waitSignal(window.controller.profile_applied, timeout=10000) as applied:
        qtbot.mouseClick(window.list_view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert applied.args == [name]


def _client_files() -> dict[str, bytes]:
    """Every file in Claude Code's config directory, byte for byte."""
    folder = claude_config_dir()
    return {str(f.relative_to(folder)): f.read_bytes() for f in sorted(folder.rglob("*")) if f.is_file()}


def test_use_between_gateway_profiles_only_reroutes(qtbot: Any, window: Any, store: Any, fake_home: Path,
                                                    tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ApplyDialog, "ask", staticmethod(lambda *_a: pytest.fail("one click asks nothing")))
    port = free_port()
    with (
        llama_server(tmp_path / "one") as one,
        llama_server(tmp_path / "two") as two,
        gateway_process(fake_home, port, tmp_path / "gateway.log"),
    ):
        # with their context windows, as the window and `profile add` make them: a Use that first reads a
        # missing one changes the model picker's entries, and the files are written again
        store.add(make_profile("A", base_url=one.url, model="tiny", via_gateway=True, env=SAFE,
                               context_window=32768))
        store.add(make_profile("B", base_url=two.url, model="tiny-b", via_gateway=True, env=SAFE,
                               context_window=32768))
        qtbot.waitExposed(window)

        # the first switch to the gateway writes the files: the gateway's URL and the local token
        _click_use(qtbot, window, "A")
        assert window.controller.switched_by_routing is False
        assert "files written" in window.message_bar.text
        assert "undo" in window.message_bar.action_buttons
        settings = (claude_config_dir() / "settings.json").read_text()
        assert f"http://127.0.0.1:{port}/claude" in settings
        token = ensure_token(window.controller.paths)
        assert token in settings
        files = _client_files()
        assert read_routes(window.controller.paths).clients == {"claude": "A"}
        before = _prompt_tokens(one), _prompt_tokens(two)
        _ask_gateway(port, token, "hello A")
        assert _prompt_tokens(one) > before[0]
        assert _prompt_tokens(two) == before[1]

        # "Use" on B: its model entries differ, yet only the routing changes
        _click_use(qtbot, window, "B")
        assert window.controller.switched_by_routing is True
        message = window.message_bar.text
        assert "instantly" in message
        assert "running sessions follow" in message
        assert "files written" not in message
        assert window.message_bar.action_buttons == {}  # nothing written: nothing to review or undo
        assert _client_files() == files  # byte-identical, every file under ~/.claude
        assert read_routes(window.controller.paths).clients == {"claude": "B"}
        assert store.active_name == "B"  # the card in use is the one the gateway routes to
        assert window.model.row_of("B") >= 0

        # the gateway now sends the same client's next request to server 2, and none to server 1
        before = _prompt_tokens(one), _prompt_tokens(two)
        _ask_gateway(port, token, "hello B")
        assert _prompt_tokens(two) > before[1]
        assert _prompt_tokens(one) == before[0]

        # and back to A the same way
        _click_use(qtbot, window, "A")
        assert window.controller.switched_by_routing is True
        assert _client_files() == files
        assert read_routes(window.controller.paths).clients == {"claude": "A"}
