"""The system tray: switch profiles, verify, show the window, quit; the icon shows the cache state.

The menu is rebuilt on ``aboutToShow`` (Vorta's ``build_menu``) so it always lists the store's current
profiles: one section per client (Claude Code, Codex, OpenCode, each shell), each with a check on the
profile that client runs now, read from its own files in the background (``controller.live_snapshot``).
Picking a profile applies it at once (no diff dialog: the tray is for quick switching) and a
notification confirms the switch or says why it failed.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QAction, QActionGroup, QGuiApplication
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from kvswitch.core.errors import KvSwitchError
from kvswitch.ui.control.clients import clients_text, serves_client
from kvswitch.ui.control.controller import AppController
from kvswitch.ui.usage.gateway_status import status_line
from kvswitch.ui.verify.verify_clients import add_client_verify_actions
from kvswitch.ui.widgets import theme

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kvswitch.core.store_rows import ProfileSummary
    from kvswitch.targets.live import LiveClient

log = logging.getLogger("kvswitch.ui.shell.tray")

NOTIFY_MS = 4000


def client_sections(live: Sequence[LiveClient], profiles: Sequence[ProfileSummary]
                    ) -> list[tuple[LiveClient, list[ProfileSummary]]]:
    """Each live client with the profiles that switch it (a client no profile is for is left out)."""
    sections = []
    for client in live:
        members = [p for p in profiles if serves_client(p.targets, client.key, client.client)]
        if members or client.profile is not None:
            sections.append((client, members))
    return sections


class TrayIcon(QObject):
    """Owns the ``QSystemTrayIcon`` and its menu.

    Signals:
        show_window_requested(): "Show window" was chosen or the icon was clicked.
        verify_requested(): "Verify cache" was chosen.
        quit_requested(): "Quit" was chosen.
    """

    show_window_requested = Signal()
    verify_requested = Signal()
    quit_requested = Signal()

    def __init__(self, controller: AppController, parent: QObject | None = None):
        super().__init__(parent)
        self.controller = controller
        self.icon = QSystemTrayIcon(theme.state_icon(controller.cache_state), self)
        self.menu = QMenu()
        self.profile_group = QActionGroup(self.menu)
        self.profile_group.setExclusive(True)
        self.profile_actions: dict[str, QAction] = {}
        self.icon.setContextMenu(self.menu)
        self.menu.aboutToShow.connect(self._on_menu_about_to_show)
        self.menu.setToolTipsVisible(True)
        self.icon.activated.connect(self._on_icon_activated)
        controller.cache_state_changed.connect(self._on_controller_cache_state_changed)
        controller.profile_applied.connect(self._on_controller_profile_applied)
        controller.apply_failed.connect(self._on_controller_apply_failed)
        controller.verify_finished.connect(self._on_controller_verify_finished)
        controller.verify_failed.connect(self._on_controller_verify_failed)
        controller.client_verify_finished.connect(self._on_controller_client_verify_finished)
        controller.alert_raised.connect(self._on_controller_alert_raised)
        controller.verify_summary.changed.connect(self._update_tooltip)
        controller.gateway_status_changed.connect(self._update_tooltip)  # gateway_status.status_line
        hints = QGuiApplication.styleHints()
        if hints is not None:
            hints.colorSchemeChanged.connect(self._on_color_scheme_changed)
        self._update_tooltip()
        self.rebuild_menu(vendors=False)  # the catalog loads when the menu is first opened, not at start

    @staticmethod
    def available() -> bool:
        return QSystemTrayIcon.isSystemTrayAvailable()

    def show(self) -> None:
        self.icon.show()

    def hide(self) -> None:
        self.icon.hide()

    @Slot()
    def _on_menu_about_to_show(self) -> None:
        self.rebuild_menu()

    def rebuild_menu(self, vendors: bool = True) -> None:
        """Fill the menu from the store as it is now; with ``vendors``, each profile's vendor (or kind)
        logo, name and API too (``profiles.identity``)."""
        self.menu.clear()
        for action in self.profile_group.actions():
            self.profile_group.removeAction(action)
        self.profile_actions.clear()
        store = self.controller.store
        try:
            profiles = store.summaries()  # plain values: the menu needs no engine model
            active = store.active_name
        except KvSwitchError as exc:
            error = self.menu.addAction(self.tr("Profiles cannot be read: %1").replace("%1", str(exc)))
            error.setEnabled(False)
            profiles, active = [], None
        self.client_sections: dict[str, list[QAction]] = {}
        sections = client_sections(self.controller.live_snapshot(), profiles) if profiles else []
        if not sections:  # the clients' files not read yet: one list, the last apply checked
            header = self.menu.addAction(self.tr("Profiles") if profiles else self.tr("No profiles yet"))
            header.setEnabled(False)
            for profile in profiles:  # the user's order, as in the window
                action = self._profile_action(profile, profile.name == active, active, vendors)
                self.profile_group.addAction(action)
                self.profile_actions[profile.name] = action
        # while this app's own apply is read back, the clients it wrote go by that apply
        reading_back = self.controller.live_for("") is None
        written = next((p.targets for p in profiles if p.name == active), ()) if reading_back else ()
        for live, members in sections:
            current = active if serves_client(written, live.key, live.client) else live.profile
            self.menu.addSeparator()
            header = self.menu.addAction(self._section_title(live, current))
            header.setEnabled(False)
            group = QActionGroup(self.menu)
            group.setExclusive(True)
            actions = []
            for profile in members:
                action = self._profile_action(profile, profile.name == current, current, vendors)
                group.addAction(action)
                actions.append(action)
                self.profile_actions.setdefault(profile.name, action)
            self.client_sections[live.key] = actions
        self.menu.addSeparator()
        self.verify_action = self.menu.addAction(
            self.tr("Cancel verify") if self.controller.verify_running else self.tr("Verify cache"))
        self.verify_action.setEnabled(bool(active))
        self.verify_action.triggered.connect(self._on_verify_chosen)
        self.client_verify_action = self.menu.addAction(self.tr("Verify with Claude Code"))
        self.client_verify_action.setEnabled(bool(active) and not self.controller.verify_running)
        self.client_verify_action.triggered.connect(self._on_client_verify_chosen)
        self.more_client_actions = add_client_verify_actions(  # Codex, OpenCode (verify_clients)
            self.menu, self.controller, bool(active) and not self.controller.verify_running)
        self._add_gateway_line()
        self.show_action = self.menu.addAction(self.tr("Show window"))
        self.show_action.triggered.connect(self.show_window_requested)
        self.menu.addSeparator()
        self.quit_action = self.menu.addAction(self.tr("Quit"))
        self.quit_action.triggered.connect(self.quit_requested)

    def _profile_action(self, profile: ProfileSummary, checked: bool, current: str | None,
                        vendors: bool) -> QAction:
        action = QAction(self._profile_label(profile.name, current), self.menu)
        action.setCheckable(True)
        action.setChecked(checked)
        action.setToolTip(f"{profile.kind.value} · {profile.base_url}")
        if vendors:
            self._show_vendor(action, profile)
        action.triggered.connect(lambda _checked=False, name=profile.name: self._on_profile_chosen(name))
        self.menu.addAction(action)
        return action

    def _section_title(self, live: LiveClient, current: str | None) -> str:
        """``Claude Code — deepseek`` / ``Codex — no profile of yours`` / ``OpenCode — local (its file
        differs)``."""
        from kvswitch.ui.profiles.card_badges import client_badge_text  # noqa: PLC0415

        name = client_badge_text(live)
        if current is None:
            return self.tr("%1 — no profile of yours").replace("%1", name)
        differs = live.differs and current == live.profile
        text = self.tr("%1 — %2 (its file differs)") if differs else self.tr("%1 — %2")
        return text.replace("%1", name).replace("%2", current)

    def notify(self, title: str, message: str, error: bool = False) -> None:
        if not self.icon.isVisible() or not QSystemTrayIcon.supportsMessages():
            log.info("notification: %s: %s", title, message)
            return
        icon = QSystemTrayIcon.MessageIcon.Warning if error else QSystemTrayIcon.MessageIcon.Information
        self.icon.showMessage(title, message, icon, NOTIFY_MS)

    def _update_tooltip(self) -> None:
        active = self.controller.store.active_name
        states = {"unknown": self.tr("cache not checked yet"), "hit": self.tr("cache hit"),
                  "partial": self.tr("partial cache reuse"), "miss": self.tr("cache miss")}
        state = states.get(self.controller.cache_state.value, "")
        if active:
            text = self.tr("KV Switch: %1 (%2)").replace("%1", active).replace("%2", state)
            self.icon.setToolTip(f"{text}\n{self._last_verify_text(active)}")
        else:
            self.icon.setToolTip(self.tr("KV Switch: no profile applied"))
        gateway = status_line(self.controller.gateway_status)
        if gateway:
            self.icon.setToolTip(f"{self.icon.toolTip()}\n{gateway}")

    def _add_gateway_line(self) -> None:
        """The gateway's status and who serves each client, as a disabled line (when it was checked)."""
        gateway = status_line(self.controller.gateway_status)
        self.gateway_action = self.menu.addAction(gateway) if gateway else None
        if self.gateway_action is not None:
            self.gateway_action.setEnabled(False)

    @staticmethod
    def _show_vendor(action: QAction, profile: ProfileSummary) -> None:
        """The vendor's logo; its name after the profile's when the name does not say it already."""
        from kvswitch.ui.i18n import current  # noqa: PLC0415
        from kvswitch.ui.profiles.identity import identity  # noqa: PLC0415
        from kvswitch.ui.widgets.icons import logo_icon  # noqa: PLC0415

        who = identity(profile.base_url, profile.kind.value, current())
        logo = logo_icon(who.logo, 16)
        if logo is not None:
            action.setIcon(logo)
        if who.vendor_id is not None and who.name.casefold() not in profile.name.casefold():
            action.setText(f"{action.text()}  ({who.name})")
        action.setToolTip(f"{who.label} · {profile.base_url}")

    def _last_verify_text(self, name: str) -> str:
        from kvswitch.ui.profiles.profile_card import verdict_line  # noqa: PLC0415

        latest = self.controller.verify_summary.get(name)
        return self.tr("Last verify: %1").replace("%1", verdict_line(latest))

    def _profile_label(self, name: str, active: str | None) -> str:
        """The active profile's item also says its last verdict, so the menu answers "is it cached?"."""
        if name != active:
            return name
        from kvswitch.ui.profiles.profile_card import verdict_line  # noqa: PLC0415

        return f"{name} — {verdict_line(self.controller.verify_summary.get(name))}"

    # -- slots -------------------------------------------------------------------------------------

    def _on_profile_chosen(self, name: str) -> None:
        live = self.controller.live_for(name)
        if live is not None and live and not any(client.differs for client in live):
            targets = self._targets_of(name)
            if all(any(serves_client([t], c.key, c.client) for c in live) for t in targets):
                return  # every client it is for runs it already
        self.controller.apply(name)

    def _targets_of(self, name: str) -> tuple[str, ...]:
        try:
            return self.controller.store.summary(name).targets
        except KvSwitchError:
            return ()

    @Slot()
    def _on_verify_chosen(self) -> None:
        if self.controller.verify_running:
            self.controller.cancel_verify()
        else:
            self.verify_requested.emit()

    @Slot()
    def _on_client_verify_chosen(self) -> None:
        """Runs in the background; the window's Verify tab shows its progress and turns."""
        self.controller.start_client_verify()

    @Slot(QSystemTrayIcon.ActivationReason)
    def _on_icon_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.Trigger:
            self.show_window_requested.emit()

    @Slot()
    def _on_color_scheme_changed(self, *_args: object) -> None:
        self.icon.setIcon(theme.state_icon(self.controller.cache_state))

    @Slot(str)
    def _on_controller_cache_state_changed(self, state: str) -> None:
        self.icon.setIcon(theme.state_icon(state))
        self._update_tooltip()

    @Slot(str)
    def _on_controller_profile_applied(self, name: str) -> None:
        self._update_tooltip()
        if self.controller.switched_by_routing:
            detail = self.tr("Switched through the gateway: running sessions follow from their next request; "
                             "no file was rewritten.")
        else:
            detail = self.tr("New %1 sessions use this profile.").replace("%1", self._written_clients(name))
        self.notify(self.tr("Switched to %1").replace("%1", name), detail)

    def _written_clients(self, name: str) -> str:
        """The clients the apply wrote (its targets), named as the window names them."""
        return clients_text(self._targets_of(name)) or self.tr("the clients'")

    @Slot(str, str)
    def _on_controller_apply_failed(self, name: str, message: str) -> None:
        self.notify(self.tr("%1 was not applied").replace("%1", name), message, error=True)

    @Slot(object)
    def _on_controller_verify_finished(self, result: object) -> None:
        message = str(getattr(result, "message", "") or getattr(result, "verdict", ""))
        self.notify(self.tr("Verify cache"), message)

    @Slot(str)
    def _on_controller_verify_failed(self, message: str) -> None:
        self.notify(self.tr("Verify cache"), message, error=True)

    @Slot(object)
    def _on_controller_client_verify_finished(self, report: object) -> None:
        verdict = str(getattr(report, "verdict", "unknown"))
        self.notify(self.tr("Verify with Claude Code"),
                    self.tr("Claude Code through “%1”: %2").replace("%1", str(getattr(report, "profile", "")))
                    .replace("%2", verdict.upper()), error=verdict in ("miss", "partial"))

    @Slot(str, str)
    def _on_controller_alert_raised(self, title: str, message: str) -> None:
        self.notify(title, message, error=True)
