"""The editor's gateway fields on a real window: the gateway switch is saved, a save from the window keeps
what the form has no field for (fallbacks, the protocol override, the context window), the local-only
switches (session slots, inline system messages as user messages) are shown, saved and greyed out where
they cannot run, and a bridged client is named."""

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


def test_the_local_only_switches_are_shown_saved_and_greyed_out_for_a_cloud_backend(
        qtbot: Any, window: Any, store: Any) -> None:
    store.add(Profile(name="loc", kind="llama.cpp", base_url="http://127.0.0.1:8080", targets=["claude"],
                      slot_affinity=True))
    store.add(Profile(name="vl", kind="vllm", base_url="http://127.0.0.1:8000", targets=["claude"]))
    store.add(Profile(name="cloud", kind="anthropic", base_url="https://api.anthropic.com",
                      targets=["claude"]))
    editor = window.editor
    fields = editor.gateway_fields
    editor.load_profile("loc")
    assert fields.session_slots_box.isChecked()
    assert not fields.inline_system_box.isChecked()
    assert fields.session_slots_box.isEnabled()
    assert fields.inline_system_box.isEnabled()

    fields.session_slots_box.setChecked(False)
    fields.inline_system_box.setChecked(True)
    with qtbot.waitSignal(editor.profile_saved, timeout=2000):
        editor.save_button.click()
    saved = store.get("loc")
    assert not saved.slot_affinity
    assert saved.inline_system_as_user

    editor.load_profile("vl")  # a local server without slots to pin
    assert not fields.session_slots_box.isEnabled()
    assert fields.inline_system_box.isEnabled()
    editor.load_profile("cloud")
    assert not fields.session_slots_box.isEnabled()
    assert not fields.inline_system_box.isEnabled()
    editor.load_profile("loc")
    assert fields.inline_system_box.isChecked()
    assert not fields.session_slots_box.isChecked()
