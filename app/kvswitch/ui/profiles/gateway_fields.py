"""The editor's gateway fields: through the gateway or direct, the prefix stabiliser, and whether a
client reaches the backend through a protocol bridge.

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
    """Two switches and one line of explanation; ``changed`` when the user flips a switch."""

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
        self.bridge_label = QLabel()
        self.bridge_label.setWordWrap(True)
        self.bridge_label.setObjectName("secondaryText")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.via_gateway_box)
        layout.addWidget(self.stable_prefix_box)
        layout.addWidget(self.bridge_label)
        self.via_gateway_box.toggled.connect(self._on_box_toggled)
        self.stable_prefix_box.toggled.connect(self._on_box_toggled)

    def set_values(self, profile: Profile | None) -> None:
        """Show ``profile``'s switches (``None``: a new profile, both off)."""
        for box, on in ((self.via_gateway_box, bool(profile and profile.via_gateway)),
                        (self.stable_prefix_box, bool(profile and profile.stable_prefix))):
            box.blockSignals(True)
            box.setChecked(on)
            box.blockSignals(False)

    def values(self) -> dict[str, Any]:
        return {"via_gateway": self.via_gateway_box.isChecked(),
                "stable_prefix": self.stable_prefix_box.isChecked()}

    def show_for(self, profile: Profile | None) -> None:
        """Which clients of ``profile`` go through a bridge, and the stabiliser's reach."""
        self.stable_prefix_box.setEnabled(profile is None or profile.is_local)
        if profile is None:
            self.bridge_label.clear()
            return
        from kvswitch.servers.protocols import bridged, describe  # noqa: PLC0415 - after the first paint

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
