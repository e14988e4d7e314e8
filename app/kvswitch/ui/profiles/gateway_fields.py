"""The editor's gateway fields: through the gateway or direct, what the gateway does for a local server
(the prefix stabiliser, session slots, inline system messages as user messages), and whether a client
reaches the backend through a protocol bridge.

Kept out of ``profile_editor`` so the form stays readable; the editor asks for ``values()`` when it
builds a profile and calls ``show_for`` after each validation. A bridge is worth saying out loud: the
client then talks to something that converts every request, and the user should know which route a
cache measurement was made on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QLabel, QVBoxLayout, QWidget

if TYPE_CHECKING:
    from kvswitch.core.models import Profile


class GatewayFields(QWidget):
    """Four switches and one line of explanation; ``changed`` when the user flips a switch."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.via_gateway_box = QCheckBox(self.tr("Through the KV Switch gateway"))
        self.via_gateway_box.setToolTip(self.tr(
            "The clients are pointed at the local gateway once, with a local token instead of the key; "
            "switching between gateway profiles then rewrites no file and reaches running sessions"))
        self.stable_prefix_box = QCheckBox(self.tr("Stabilise the prompt prefix (local servers only)"))
        self.stable_prefix_box.setToolTip(self.tr(
            "The gateway moves Claude Code's environment block before your first message, the same way "
            "on every turn, so a new conversation in a project reuses the server's cache. Off by default"))
        self.session_slots_box = QCheckBox(self.tr("A server slot per conversation (servers with slots)"))
        self.session_slots_box.setToolTip(self.tr(
            "For a local server started with several slots and little or no host-RAM cache: each "
            "conversation (a session's own, a subagent's) keeps its slot, so another one does not overwrite "
            "its cached prompt. Claude Code then goes through the chat bridge. Off by default"))
        self.inline_system_box = QCheckBox(
            self.tr("Inline system messages as user messages (local servers only)"))
        self.inline_system_box.setToolTip(self.tr(
            "For chat templates that refuse a system message after the first (\"System message must be at "
            "the beginning\"): each of Claude Code's becomes a user message in the same place, the same "
            "bytes on every turn. Off by default"))
        self.bridge_label = QLabel()
        self.bridge_label.setWordWrap(True)
        self.bridge_label.setObjectName("secondaryText")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for box in self._boxes().values():
            layout.addWidget(box)
            box.toggled.connect(self._on_box_toggled)
        layout.addWidget(self.bridge_label)

    def _boxes(self) -> dict[str, QCheckBox]:
        """The switches by the profile field each one sets."""
        return {"via_gateway": self.via_gateway_box, "stable_prefix": self.stable_prefix_box,
                "slot_affinity": self.session_slots_box, "inline_system_as_user": self.inline_system_box}

    def set_values(self, profile: Profile | None) -> None:
        """Show ``profile``'s switches (``None``: a new profile, all off)."""
        for field_name, box in self._boxes().items():
            box.blockSignals(True)
            box.setChecked(bool(profile and getattr(profile, field_name)))
            box.blockSignals(False)

    def values(self) -> dict[str, Any]:
        return {field_name: box.isChecked() for field_name, box in self._boxes().items()}

    def show_for(self, profile: Profile | None) -> None:
        """Which clients of ``profile`` go through a bridge, and the local-only switches' reach."""
        local = profile is None or profile.is_local
        for box in (self.stable_prefix_box, self.inline_system_box):
            box.setEnabled(local)
        if profile is None:
            self.session_slots_box.setEnabled(True)
            self.bridge_label.clear()
            return
        # after the first paint
        from kvswitch.servers.protocols import bridged, describe, session_slots  # noqa: PLC0415

        self.session_slots_box.setEnabled(session_slots(profile.model_copy(update={"slot_affinity": True})))
        lines = [describe(profile, client) for client in ("claude", "codex")
                 if any(t == client or t.startswith(f"{client}-") for t in profile.targets)
                 and bridged(profile, client)]
        if lines and not profile.via_gateway:
            lines.append(self.tr("A bridge works only through the gateway: tick the box above."))
        if profile.stable_prefix and not profile.is_local:
            lines.append(self.tr("The stabiliser never runs for a cloud backend."))
        self.bridge_label.setText("\n".join(lines))
        self.bridge_label.setVisible(bool(lines))

    def _on_box_toggled(self, _on: bool) -> None:
        self.changed.emit()
