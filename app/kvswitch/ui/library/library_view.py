"""The window's "Prompts and skills" tab: the Prompts page and the Skills page side by side in sub-tabs,
over one ``LibraryController``, speaking through the window's message bar.

A preset written from here is one more entry in the switching journal, so the message after it offers
the same "Review changes" (what was written, file by file) and "Undo" (the window's, which takes back
the last apply of any kind) as a profile's Use. The review dialog is the profiles' own, handed in by the
shell: feature packages never import each other.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication, Slot
from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget

from kvswitch.ui.control.clients import client_label
from kvswitch.ui.control.controller_library import LibraryController
from kvswitch.ui.i18n import fill
from kvswitch.ui.library.prompts_page import PromptsPage, Review
from kvswitch.ui.library.skills_page import SkillsPage
from kvswitch.ui.qtcompat import connect_for


class LibraryView(QWidget):
    """Prompts and Skills in one tab (see the module docstring)."""

    def __init__(self, controller: LibraryController, review: Review, parent: QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.link: _WindowLink | None = None  # set by ``add_library_tab``
        self.tabs = QTabWidget(self)
        # no pane frame, as the window's own tabs: flush with the window's edges it drew a 3:1 border
        # there, a light strip along the dark window's bottom and sides
        self.tabs.setDocumentMode(True)
        self.prompts_page = PromptsPage(controller, review, self.tabs)
        self.skills_page = SkillsPage(controller, self.tabs)
        self.tabs.addTab(self.prompts_page, self.tr("Prompts"))
        self.tabs.addTab(self.skills_page, self.tr("Skills"))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)


class _WindowLink:
    """What the window does with the library's outcomes: messages, Review changes, Undo, reloads."""

    def __init__(self, window: Any, view: LibraryView, dialog_class: Any):
        self.window = window
        self.view = view
        self.dialog_class = dialog_class
        self.review_dialog: Any = None
        self._applied: tuple[str, list[Any]] | None = None
        c = view.controller
        c.action_finished.connect(self._on_library_action_finished)
        c.action_failed.connect(self._on_library_action_failed)
        c.preset_applied.connect(self._on_library_preset_applied)
        connect_for(view, window.controller.undo_finished, self._on_app_undo_finished)
        connect_for(view, window.controller.profile_applied, self._on_app_undo_finished)

    @Slot(str)
    def _on_library_action_finished(self, message: str) -> None:
        from kvswitch.ui.control import engine_text  # noqa: PLC0415

        self.window.message_bar.show_success(engine_text.translate(message))

    @Slot(str)
    def _on_library_action_failed(self, message: str) -> None:
        from kvswitch.ui.control import engine_text  # noqa: PLC0415

        text = QCoreApplication.translate("LibraryView", "Nothing was changed: %1")
        self.window.message_bar.show_error(fill(text, engine_text.translate(message)))

    @Slot(str, object)
    def _on_library_preset_applied(self, preset: str, plans: list[Any]) -> None:
        written = [p for p in plans if p.changed]
        clients = ", ".join(client_label(p.target_id.split(":", 1)[-1]) for p in written)
        if written:
            text = QCoreApplication.translate(
                "LibraryView", "Wrote preset “%1” to %2. Each client's next request re-processes its prompt "
                "from the memory file on.")
        else:
            text = QCoreApplication.translate("LibraryView", "Preset “%1” is there already; nothing changed.")
        notes = " ".join(self.view.controller.applied_notes)
        self._applied = (preset, plans)
        actions = []
        if written:
            review = QCoreApplication.translate("MainWindow", "Review changes")
            actions.append(("review", review, self.show_review))
            if self.window.controller.can_undo():
                actions.append(("undo", QCoreApplication.translate("MainWindow", "Undo"),
                                self.window.controller.undo))
        message = fill(text, preset, clients) + (f" {notes}" if notes else "")
        self.window.message_bar.show_success(message, actions)
        update = getattr(self.window, "_update_actions", None)
        if callable(update):
            update()  # the toolbar's Undo

    def show_review(self) -> None:
        """What the last preset write changed, read-only (modeless), as after a profile's Use."""
        if self._applied is None:
            return
        name, plans = self._applied
        self.review_dialog = self.dialog_class(name, plans, self.view.controller.render_diff, self.window,
                                               applied=True)
        self.review_dialog.show()

    @Slot()
    def _on_app_undo_finished(self, *_args: object) -> None:
        self.view.controller.reload()


def add_library_tab(window: Any, dialog_class: Any) -> LibraryView:
    """The window's hook: a "Prompts and skills" tab after the others. ``dialog_class`` is the profiles'
    ``ApplyDialog`` (its ``ask`` confirms a plan; an instance with ``applied=True`` reviews one)."""

    def review(parent: QWidget | None, name: str, plans: list[Any], render: Any) -> bool:
        return bool(dialog_class.ask(parent, name, plans, render))

    controller = LibraryController(window.controller, window)
    view = LibraryView(controller, review)
    view.link = _WindowLink(window, view, dialog_class)
    window.library_view = view
    window.tabs.addTab(view, QCoreApplication.translate("MainWindow", "Prompts and skills"))
    controller.reload()
    return view
