"""The editor's line under the API key: which catalog vendor and API the URL belongs to, its logo, and where
to get a key ("Key required — get one at …"), so a new user does not guess whether the key is optional."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QWidget

from kvswitch.ui.i18n import current
from kvswitch.ui.profiles.identity import identity
from kvswitch.ui.widgets import icons


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


class VendorKeyHint(QWidget):
    """Shown for a URL of a catalog vendor: logo, vendor name, and the vendor's key page as a link."""

    def __init__(self, key_edit: QLineEdit, parent: QWidget | None = None):
        super().__init__(parent)
        self._key_edit = key_edit
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        self.logo = QLabel()
        self.text = QLabel()
        self.text.setObjectName("vendor_key_hint")
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setOpenExternalLinks(True)
        self.text.setWordWrap(True)
        layout.addWidget(self.logo)
        layout.addWidget(self.text, 1)
        self.vendor_id: str | None = None
        self.hide()

    def update_for(self, base_url: str) -> None:
        from kvswitch.core.catalog import vendor  # noqa: PLC0415

        self.vendor_id = icons.vendor_id_for(base_url.strip())
        optional = QCoreApplication.translate("ProfileEditor", "optional")
        if self.vendor_id is None:
            self._key_edit.setPlaceholderText(optional)
            self.hide()
            return
        entry = vendor(self.vendor_id)
        name = _escape(identity(base_url.strip(), "", current()).label)  # "<vendor> · <API>"
        self._key_edit.setPlaceholderText(QCoreApplication.translate("ProfileEditor", "required"))
        if entry.keys_url:
            text = QCoreApplication.translate("ProfileEditor",
                                              "%1: a key is required — <a href=\"%2\">get one</a>")
            self.text.setText(text.replace("%1", f"<b>{name}</b>").replace("%2", _escape(entry.keys_url)))
        else:
            text = QCoreApplication.translate("ProfileEditor", "%1: a key is required")
            self.text.setText(text.replace("%1", f"<b>{name}</b>"))
        logo = icons.logo_icon(icons.VENDOR_LOGOS.get(self.vendor_id), 20)
        self.logo.setPixmap(logo.pixmap(20, 20) if logo is not None else QPixmap())
        self.logo.setVisible(logo is not None)
        self.show()

