"""The window's Cache log and Verify tabs: built after the window is ready, or when first needed.

Neither tab is the one shown at start, and together they are a good part of the start-up (the log
panel's highlighter and worker, the verify card's history and charts). ``build_tabs`` puts them in
place of two empty pages on the next event-loop turn; anything that needs one before then (a verify
from the tray, a click on the tab) builds them at once. A mixin of ``MainWindow``: the texts stay in
its translation context.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, Slot
from PySide6.QtWidgets import QWidget

from kvswitch.ui.qtcompat import connect_for

if TYPE_CHECKING:
    from kvswitch.ui.control.controller import AppController
    from kvswitch.ui.logs.log_panel import LogPanel
    from kvswitch.ui.sessions.sessions_view import SessionsView
    from kvswitch.ui.verify.verify_card import VerifyCard
    from kvswitch.verify.result import VerifyResult

LOG_TAB, VERIFY_TAB = 1, 2


class WindowTabsMixin:
    """``MainWindow`` supplies the controller, the tab widget and the fix slot."""

    controller: AppController
    tabs: Any
    _on_verify_triggered: Callable[..., None]
    _on_verify_fix_requested: Callable[[str, dict[str, str]], None]
    show_editor: Callable[[], None]

    log_panel: LogPanel
    sessions_view: SessionsView
    verify_card: VerifyCard
    tabs_built = False

    def _add_tab_placeholders(self) -> None:
        self.tabs.addTab(QWidget(), QCoreApplication.translate("MainWindow", "Cache log"))
        self.tabs.addTab(QWidget(), QCoreApplication.translate("MainWindow", "Verify"))
        self.tabs.currentChanged.connect(self._on_tabs_current_changed)

    def build_tabs(self) -> None:
        """Put the log panel and the verify card in their tabs and follow the active profile's log."""
        if self.tabs_built:
            return
        from kvswitch.ui.library.library_view import add_library_tab  # noqa: PLC0415
        from kvswitch.ui.logs.log_panel import LogPanel  # noqa: PLC0415
        from kvswitch.ui.mcp.mcp_page import add_mcp_tab  # noqa: PLC0415
        from kvswitch.ui.profiles.diff_dialog import ApplyDialog  # noqa: PLC0415
        from kvswitch.ui.sessions.sessions_view import add_sessions_tab  # noqa: PLC0415
        from kvswitch.ui.usage.usage_view import add_usage_tab  # noqa: PLC0415
        from kvswitch.ui.verify.ablate_view import add_ablate_view  # noqa: PLC0415
        from kvswitch.ui.verify.sweep_chart import add_sweep_view  # noqa: PLC0415
        from kvswitch.ui.verify.verify_card import VerifyCard  # noqa: PLC0415
        from kvswitch.ui.verify.verify_clients import add_client_buttons  # noqa: PLC0415

        self.tabs_built = True
        self.log_panel = LogPanel()
        self.verify_card = VerifyCard()
        current = self.tabs.currentIndex()
        self.tabs.blockSignals(True)
        for index, widget in ((LOG_TAB, self.log_panel), (VERIFY_TAB, self.verify_card)):
            title = self.tabs.tabText(index)
            placeholder = self.tabs.widget(index)
            self.tabs.removeTab(index)
            self.tabs.insertTab(index, widget, title)
            placeholder.deleteLater()
        self.tabs.setCurrentIndex(current)
        self.tabs.blockSignals(False)
        c = self.controller
        card = self.verify_card
        connect_for(card, c.verify_started, self._on_controller_verify_started)
        connect_for(card, c.verify_progressed, card.show_progress)
        connect_for(card, c.verify_finished, self._on_controller_verify_finished)
        connect_for(card, c.verify_failed, self._on_controller_verify_failed)
        self.verify_card.cancel_requested.connect(c.cancel_verify)
        self.verify_card.verify_requested.connect(self._on_verify_triggered)
        self.verify_card.fix_requested.connect(self._on_verify_fix_requested)
        self.verify_card.edit_requested.connect(self.show_editor)  # the profile form
        self.verify_card.attach(c)  # "Verify with Claude Code" and the verify history
        add_client_buttons(self.verify_card, c)  # "Verify with Codex / OpenCode" (verify_clients)
        add_ablate_view(self.verify_card, c)  # "Which settings matter?" (ablate_view)
        add_sweep_view(self.verify_card, c)  # the newest `kvswitch sweep` as a chart (sweep_chart)
        add_usage_tab(self)  # the gateway's usage per day and per profile (usage_view)
        add_sessions_tab(self)  # every client's past sessions from its own files (sessions_view)
        add_mcp_tab(self)  # MCP servers × clients, with what each costs every request (mcp_page)
        add_library_tab(self, ApplyDialog)  # prompt presets and skills per client (library_view)
        self.log_panel.requests_seen.connect(c.note_log_requests)  # a verify's own requests are told apart
        self.log_panel.attach_alerts(c)  # low reuse inside a conversation → a tray notification
        # the requests the gateway relayed take its verdict in the Cache log, and the tray follows
        c.gateway_rows_recorded.connect(self.log_panel.take_gateway_rows)
        self.log_panel.verdict_revised.connect(c.note_gateway_verdict)
        self.log_panel.events_added.connect(c.poll_gateway_usage_soon)
        self.bind_log_to_active()

    def bind_log_to_active(self) -> None:
        """Follow the active profile's server log (nothing to do until the log tab exists)."""
        if not self.tabs_built:
            return
        profile = self.controller.active_profile()
        from kvswitch.ui.logs.metrics_follower import metrics_url  # noqa: PLC0415

        self.log_panel.bind(profile.log if profile is not None else None,
                            profile.kind.value if profile is not None else None, metrics_url(profile))

    def stop_tabs(self) -> None:
        if self.tabs_built:
            self.log_panel.stop()
            self.sessions_view.stop()

    @Slot(int)
    def _on_tabs_current_changed(self, index: int) -> None:
        if index in (LOG_TAB, VERIFY_TAB) and not self.tabs_built:
            self.build_tabs()

    @Slot(str)
    def _on_controller_verify_started(self, name: str) -> None:
        self.verify_card.show_started(name)

    @Slot(object)
    def _on_controller_verify_finished(self, result: VerifyResult) -> None:
        self.verify_card.show_result(result, self.controller.verifying)

    @Slot(str)
    def _on_controller_verify_failed(self, message: str) -> None:
        self.verify_card.show_failure(message)
