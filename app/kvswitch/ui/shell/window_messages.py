"""What the window says after a switch or a save: the clients written, re-routed or left differing, with
Review changes and Undo; a warning when a local profile's server does not answer on its port.

A mixin of ``MainWindow`` (its message bar, model, controller and editor), kept apart so the window
module stays about wiring the parts together. Texts stay in the "MainWindow" translation context.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, Slot

from kvswitch.ui.control import engine_text

translate = QCoreApplication.translate

if TYPE_CHECKING:
    from kvswitch.core.store import ProfileStore
    from kvswitch.ui.control.controller import AppController
    from kvswitch.ui.profiles.profile_model import ProfileListModel
    from kvswitch.ui.widgets.message_bar import Action, MessageBar


class WindowMessagesMixin:
    """``MainWindow`` supplies the attributes below."""

    controller: AppController
    store: ProfileStore
    model: ProfileListModel
    message_bar: MessageBar
    _select: Callable[[str | None], None]
    _update_editor_title: Callable[[], None]
    _update_actions: Callable[[], None]
    bind_log_to_active: Callable[[], None]
    review_applied_changes: Callable[[], None]
    _save_outcome: Any = None
    _port_task: Any = None

    def _save_existing_profile(self, old_name: str, profile: object) -> bool:
        """A stored profile saved from the form: written through to the clients that run it (or left
        *differs*, per Settings), one journaled apply that Undo puts back."""
        self._save_outcome = self.controller.save_profile(old_name, profile)
        return self._save_outcome is not None

    @Slot(str)
    def _on_editor_profile_saved(self, name: str) -> None:
        self._select(name)
        self._update_editor_title()
        outcome, self._save_outcome = getattr(self, "_save_outcome", None), None
        if outcome is not None and (outcome.written or outcome.differs or outcome.rerouted):
            actions: list[Action] = []
            if outcome.written and outcome.result is not None:  # what the save wrote, as after Use
                self._applied_plans = (name, list(outcome.result.plans))
                actions.append(("review", translate("MainWindow", "Review changes"),
                                self.review_applied_changes))
            if outcome.written and self.controller.can_undo():
                actions.append(("undo", translate("MainWindow", "Undo"), self.controller.undo))
            if outcome.differs:
                actions.append(("apply", translate("MainWindow", "Apply to them"),
                                lambda: self.controller.apply_to_clients(name)))
            show = self.message_bar.show_warning if outcome.differs else self.message_bar.show_success
            show(engine_text.translate(self.controller.save_message(outcome)), actions)
            if name == self.store.active_name:
                self.bind_log_to_active()
            return
        self.message_bar.show_info(translate("MainWindow", "Saved “%1”.").replace("%1", name))
        if name == self.store.active_name:
            self.bind_log_to_active()

    @Slot(str)
    def _on_controller_profile_applied(self, name: str) -> None:
        from kvswitch.ui.control.clients import client_of_target, clients_text  # noqa: PLC0415

        actions: list[Action] = []
        applied = getattr(self, "_applied_plans", None)
        plans = applied[1] if applied is not None and applied[0] == name else None
        summary = self.model.profile_at(self.model.row_of(name))
        # the targets whose file the apply changed (a plan may leave a client's file as it was)
        written = [p.target_id for p in plans or [] if p.changes or p.before != (p.after or "")]
        targets = written or list(summary.targets if summary else ())
        clients = clients_text(t for t in targets if client_of_target(t) != "shell")
        if self.controller.switched_by_routing:  # nothing written: nothing to review, nor to undo
            text = translate("MainWindow", "Switched %2 to “%1” instantly through the gateway: no file "
                             "rewritten; running sessions follow from their next request.")
        else:
            text = translate("MainWindow", "Switched %2 to “%1”: files written; new sessions use it.")
            if any(client_of_target(t) == "shell" for t in targets):
                text += " " + translate("MainWindow", "Open shells need to re-read their rc file.")
            if plans is not None:
                review = translate("MainWindow", "Review changes")
                actions.append(("review", review, self.review_applied_changes))
            if self.controller.can_undo():
                actions.append(("undo", translate("MainWindow", "Undo"), self.controller.undo))
        shown = clients or clients_text(targets) or translate("MainWindow", "the clients")
        self.message_bar.show_success(text.replace("%1", name).replace("%2", shown), actions)
        self._warn_if_nothing_answers(name, summary, text.replace("%1", name).replace("%2", shown), actions)
        self.model.store_changed.emit()
        self.bind_log_to_active()
        self._update_actions()

    def _warn_if_nothing_answers(self, name: str, summary: object, said: str, actions: list[Action]) -> None:
        """A local profile whose port is closed: the switch is done, but the next request would fail;
        the message says so (the port is tried on a worker, a fraction of a second)."""
        from kvswitch.ui.shell.port_check import local_endpoint, port_open  # noqa: PLC0415

        endpoint = local_endpoint(summary)
        if endpoint is None:
            return

        def on_checked(is_open: object) -> None:
            if is_open or self.message_bar.text != said:
                return  # it answers, or another message came since
            warning = translate("MainWindow", "But nothing answers at %1:%2 yet: start the server before "
                                "the next request.")  # after the switch message, which names the clients
            warning = warning.replace("%1", endpoint[0]).replace("%2", str(endpoint[1]))
            self.message_bar.show_warning(f"{said} {warning}", actions)

        self._port_task = self.controller.run_task(lambda: port_open(*endpoint), on_checked,
                                                   lambda _exc: None)
