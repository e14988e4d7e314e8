"""The editor's gateway fields on a real window: the gateway switch is saved, a save from the window keeps
what the form has no field for (fallbacks, the protocol override, the context window, session slots),
and a bridged client is named."""

from __future__ import annotations

from typing import Any

from kvswitch.core.models import Profile


def test_the_gateway_switch_is_saved_and_hidden_fields_survive_a_save(qtbot: Any, window: Any,
                                                                      store: Any) -> None:
    store.add(Profile(name="backup", kind="llama.cpp", base_url="http://127.0.0.1:8081"))
    store.add(Profile(name="chat", kind="llama.cpp", base_url="http://127.0.0.1:8080", targets=["claude"],
                      fallbacks=["backup"], protocol="openai_chat", context_window=32768,
                      slot_affinity=True))
    editor = window.editor
    editor.load_profile("chat")
    assert not editor.gateway_fields.via_gateway_box.isChecked()
    bridge_text = editor.gateway_fields.bridge_label.text()
    assert "Claude Code: bridged anthropic -> openai_chat" in bridge_text
    assert "only through the gateway" in bridge_text

    editor.gateway_fields.via_gateway_box.setChecked(True)
    editor.model_edit.setText("tiny")
    assert "only through the gateway" not in editor.gateway_fields.bridge_label.text()
    with qtbot.waitSignal(editor.profile_saved, timeout=2000):
        editor.save_button.click()
    saved = store.get("chat")
    assert saved.via_gateway
    assert saved.model == "tiny"
    assert (saved.fallbacks, saved.protocol, saved.context_window) == (["backup"], "openai_chat", 32768)
    assert saved.slot_affinity

    editor.load_profile("backup")
    assert not editor.gateway_fields.via_gateway_box.isChecked()
    assert editor.gateway_fields.bridge_label.text() == ""
    editor.load_profile("chat")
    assert editor.gateway_fields.via_gateway_box.isChecked()
