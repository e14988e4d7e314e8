"""The setup assistant: what is installed, what is running, and ready profiles for it in one click.

Shown on the first start (no profiles yet) and from the menu later as "Detect servers". Detection
probes ports and reads the process list, which can take a second, so it runs on the task pool and the
dialog stays responsive; results come back through ``detection_finished``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from kvswitch import servers as known_servers
from kvswitch.commands.platform import describe_server
from kvswitch.core.errors import KvSwitchError
from kvswitch.core.paths import home_dir
from kvswitch.platform.detect import (
    PROBE_PORTS,
    DetectedServer,
    DetectedTool,
    Detection,
    detect,
    detect_tools,
)
from kvswitch.ui.shell.first_run_imports import FirstRunImportsMixin
from kvswitch.ui.shell.first_run_text import searched_text

if TYPE_CHECKING:
    from kvswitch.core.store import ProfileStore
    from kvswitch.ui.control.controller import AppController

log = logging.getLogger("kvswitch.ui.shell.first_run")

SERVER_ROLE = Qt.ItemDataRole.UserRole + 1


def should_show(controller: AppController) -> bool:
    """First start: no profiles yet and the assistant was never finished or dismissed."""
    return not controller.store.profiles() and not controller.settings.first_run_done


class FirstRunDialog(FirstRunImportsMixin, QDialog):
    """Find Claude Code, Codex and local servers; import or create profiles from what was found.

    Args:
        controller: the app's controller: its profile store receives the profiles, its settings
            remember that setup was done.
        parent: the owning window.
        detector: returns a :class:`Detection`; tests pass one limited to their own servers.

    Signals:
        detection_finished(object): the :class:`Detection` (on the GUI thread).
        profiles_added(list): names of the profiles this dialog added.
        gallery_requested(): "Browse presets and cloud vendors" (the window opens the gallery).
    """

    detection_finished = Signal(object)
    profiles_added = Signal(list)
    gallery_requested = Signal()

    def __init__(self, controller: AppController, parent: QWidget | None = None, *,
                 detector: Callable[[], Detection] | None = None, ports: tuple[int, ...] = PROBE_PORTS):
        super().__init__(parent)
        self.controller = controller
        self.store: ProfileStore = controller.store
        self._detector = detector or (lambda: detect(ports))
        self._task: Any = None
        self.detection: Detection | None = None
        self.added: list[str] = []
        #: the ticks the user set, by server address: a refill (after "Add selected profiles", a new
        #: scan) keeps a server the user unticked unticked, instead of ticking every answering one again
        self._ticks: dict[str, bool] = {}
        self.setWindowTitle(self.tr("Set up KV Switch"))
        self.setMinimumWidth(620)
        self._build()
        self._show_tools(detect_tools())
        QTimer.singleShot(0, self.start_detection)

    # -- layout ------------------------------------------------------------------------------------

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        intro = QLabel(self.tr("KV Switch looked for the coding tools and local model servers on this "
                               "computer. Pick what to turn into profiles; you can change everything later."))
        intro.setWordWrap(True)
        layout.addWidget(intro)
        # what to do first, when there is an obvious answer: CC Switch's providers, or today's settings
        self.lead_button = QPushButton()
        self.lead_button.hide()
        self.lead_button.clicked.connect(self._on_lead_button_clicked)
        from kvswitch.ui.widgets import appearance  # noqa: PLC0415

        appearance.style_primary(self.lead_button)
        self._lead_source: str | None = None
        layout.addWidget(self.lead_button)

        tools_box = QGroupBox(self.tr("Coding tools"))
        tools_layout = QVBoxLayout(tools_box)
        self.tools_label = QLabel()
        self.tools_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tools_label.setWordWrap(True)
        tools_layout.addWidget(self.tools_label)
        buttons = QHBoxLayout()
        self.import_claude_button = QPushButton(self.tr("Import Claude Code's current settings"))
        self.import_claude_button.clicked.connect(self._on_import_claude_clicked)
        self.import_cc_switch_button = QPushButton(self.tr("Import CC Switch providers"))
        self.import_cc_switch_button.clicked.connect(self._on_import_cc_switch_clicked)
        buttons.addWidget(self.import_claude_button)
        buttons.addWidget(self.import_cc_switch_button)
        buttons.addStretch(1)
        tools_layout.addLayout(buttons)
        # the diagnostics (where each tool and file is, where detection looked) under a Details fold
        self.details_button = QPushButton(self.tr("Details"))
        self.details_button.setCheckable(True)
        self.details_button.setFlat(True)
        self.details_button.toggled.connect(self._on_details_button_toggled)
        self.details_box = tools_box
        tools_box.setVisible(False)
        layout.addWidget(self.details_button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(tools_box)

        servers_box = QGroupBox(self.tr("Local servers"))
        servers_layout = QVBoxLayout(servers_box)
        self.servers_status = QLabel()
        self.servers_status.setWordWrap(True)
        servers_layout.addWidget(self.servers_status)
        self.server_list = QListWidget()
        # room for three servers (each two or three lines) whatever else the dialog shows: opening
        # "Details" grows the dialog instead of squeezing the list to one row
        self.server_list.setMinimumHeight(3 * 3 * self.server_list.fontMetrics().lineSpacing() + 16)
        self.server_list.itemChanged.connect(self._on_server_list_item_changed)
        servers_layout.addWidget(self.server_list, 1)
        self.searched_label = QLabel()  # where detection looked, shown when it found nothing
        self.searched_label.setObjectName("searched")
        self.searched_label.setWordWrap(True)
        self.searched_label.setTextFormat(Qt.TextFormat.RichText)
        self.searched_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.searched_label.hide()
        tools_layout.addWidget(self.searched_label)  # a diagnostic: in the Details fold
        servers_layout.addStretch(0)  # takes the list's room while the list is hidden
        self._servers_layout = servers_layout
        row = QHBoxLayout()
        self.detect_button = QPushButton(self.tr("Detect servers"))
        self.detect_button.clicked.connect(self.start_detection)
        self.gallery_button = QPushButton(self.tr("Browse presets and cloud vendors…"))
        self.gallery_button.setToolTip(self.tr("Start from a local server's defaults or a cloud vendor"))
        self.gallery_button.clicked.connect(self._on_gallery_button_clicked)
        self.add_button = QPushButton(self.tr("Add selected profiles"))
        self.add_button.setEnabled(False)
        self.add_button.clicked.connect(self._on_add_button_clicked)
        row.addWidget(self.detect_button)
        row.addWidget(self.gallery_button)
        row.addStretch(1)
        row.addWidget(self.add_button)
        servers_layout.addLayout(row)
        layout.addWidget(servers_box, 1)

        self.result_label = QLabel()
        self.result_label.setWordWrap(True)
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.result_label)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        box.rejected.connect(self.reject)
        box.accepted.connect(self.accept)
        layout.addWidget(box)

    def _show_tools(self, tools: list[DetectedTool] | tuple[DetectedTool, ...]) -> None:
        lines = []
        for tool in tools:
            if not tool.found:
                lines.append(self.tr("%1: not found").replace("%1", tool.label))
                continue
            where = str(tool.binary) if tool.binary else self.tr("not on PATH")
            config = str(tool.config_file) if tool.has_config else self.tr("no configuration yet")
            lines.append(self.tr("%1: %2 — %3").replace("%1", tool.label).replace("%2", where)
                         .replace("%3", config))
        self.tools_label.setText("\n".join(lines))
        claude = next((tool for tool in tools if tool.name == "claude"), None)
        self.import_claude_button.setEnabled(claude is not None and claude.has_config)
        self.import_cc_switch_button.setEnabled((home_dir() / ".cc-switch").is_dir())
        self._lead_with(claude is not None and claude.has_config)

    @Slot()
    def _on_lead_button_clicked(self) -> None:
        if self._lead_source is not None and self.import_from(self._lead_source):
            self.lead_button.hide()

    @Slot(bool)
    def _on_details_button_toggled(self, shown: bool) -> None:
        self.details_box.setVisible(shown)
        self.details_button.setText(self.tr("Hide details") if shown else self.tr("Details"))
        if shown:  # the fold gets its own room: the dialog grows by it, the server list keeps its size
            wanted = self.height() + self.details_box.sizeHint().height() + 8  # one grid unit between
            self.resize(self.width(), max(self.height(), min(wanted, self._screen_height())))

    def _screen_height(self) -> int:
        screen = self.screen()
        return screen.availableGeometry().height() if screen is not None else 10_000

    # -- detection ---------------------------------------------------------------------------------

    @Slot()
    def start_detection(self) -> None:
        """Run detection in the background (again); the list refills when it finishes."""
        if self._task is not None and self._task.running:
            return
        from kvswitch.ui.control.tasks import run_in_background  # noqa: PLC0415 - keeps import of this module light

        self.detect_button.setEnabled(False)
        self.servers_status.setText(self.tr("Looking for running servers…"))
        detector = self._detector

        def work(cancel: threading.Event, progress: Callable[[str, float], None]) -> Detection:
            return detector()

        self._task = run_in_background(self, work, on_success=self._on_detection_succeeded,
                                       on_failure=self._on_detection_failed)

    @Slot(object)
    def _on_detection_succeeded(self, detection: Detection) -> None:
        self.detection = detection
        self.detect_button.setEnabled(True)
        self.detect_button.setText(self.tr("Scan again"))
        self._show_tools(detection.tools)
        self._fill_servers(detection.servers)
        self.detection_finished.emit(detection)

    @Slot(object)
    def _on_detection_failed(self, exc: BaseException) -> None:
        log.warning("server detection failed: %s", exc)
        self.detect_button.setEnabled(True)
        self.servers_status.setText(self.tr("Detection failed: %1").replace("%1", str(exc)))
        self.detection_finished.emit(None)

    def _fill_servers(self, servers: tuple[DetectedServer, ...]) -> None:
        self.server_list.blockSignals(True)
        self.server_list.clear()
        taken = self._taken_names()
        for server in servers:
            text = f"{server.label} — {server.base_url}\n{describe_server(server)}"
            exists = server.profile_name().casefold() in taken
            if exists:
                note = self.tr("(a profile named “%1” already exists)")
                text += "\n" + note.replace("%1", server.profile_name())
            item = QListWidgetItem(text)
            item.setData(SERVER_ROLE, server)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            checked = not exists and self._ticks.get(server.base_url, server.answering)
            item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
            self.server_list.addItem(item)
        self.server_list.blockSignals(False)
        if servers:
            self.servers_status.setText(self.tr("Found %n server(s). Checked ones become profiles with the "
                                                "cache-safe settings and their log already set.", "",
                                                len(servers)))
        else:
            names = ", ".join(server.short_label for server in known_servers.local())
            self.servers_status.setText(self.tr("No local server is running. Start one (%1) and press "
                                                "“Scan again”, or start from a preset.").replace("%1", names))
        self.server_list.setVisible(bool(servers))  # not a large empty box: where it looked instead
        self._servers_layout.setStretch(self._servers_layout.count() - 2, 0 if servers else 1)
        self.searched_label.setVisible(not servers and self.detection is not None)
        if self.detection is not None:
            self.searched_label.setText(searched_text(self.detection))
        self._on_server_list_item_changed()

    def checked_servers(self) -> list[DetectedServer]:
        servers = []
        for row in range(self.server_list.count()):
            item = self.server_list.item(row)
            if item.checkState() == Qt.CheckState.Checked:
                servers.append(item.data(SERVER_ROLE))
        return servers

    @Slot()
    def _on_server_list_item_changed(self, item: QListWidgetItem | None = None) -> None:
        server = item.data(SERVER_ROLE) if item is not None else None
        if item is not None and server is not None:
            self._ticks[server.base_url] = item.checkState() == Qt.CheckState.Checked
        self.add_button.setEnabled(bool(self.checked_servers()))

    # -- actions -----------------------------------------------------------------------------------

    def _taken_names(self) -> set[str]:
        return {profile.name.casefold() for profile in self.store.profiles()}

    def add_checked_servers(self) -> list[str]:
        """Add a profile for every checked server; names already taken get a number. Returns the names."""
        taken = self._taken_names()
        added: list[str] = []
        errors: list[str] = []
        for server in self.checked_servers():
            name = base = server.profile_name()
            number = 2
            while name.casefold() in taken:
                name, number = f"{base} ({number})", number + 1
            try:
                self.controller.add_profile(server.to_profile(name))
            except KvSwitchError as exc:
                errors.append(str(exc))
                continue
            taken.add(name.casefold())
            added.append(name)
        self._report(added, errors)
        return added

    def _report(self, added: list[str], errors: list[str]) -> None:
        parts = []
        if added:
            parts.append(self.tr("Added: %1.").replace("%1", ", ".join(added)))
            self.added.extend(added)
            self.profiles_added.emit(added)
        parts.extend(errors)
        self.result_label.setText(" ".join(parts))

    @Slot()
    def _on_add_button_clicked(self) -> None:
        if self.add_checked_servers() and self.detection is not None:
            self._fill_servers(self.detection.servers)

    @Slot()
    def _on_gallery_button_clicked(self) -> None:
        self.gallery_requested.emit()
        self.accept()

    @Slot()
    def _on_import_claude_clicked(self) -> None:
        self.import_from("claude")

    @Slot()
    def _on_import_cc_switch_clicked(self) -> None:
        self.import_from("cc-switch")

    def _remember_done(self) -> None:
        try:
            settings = self.controller.settings
            if not settings.first_run_done:
                self.controller.save_settings(settings.model_copy(update={"first_run_done": True}))
        except KvSwitchError as exc:
            log.warning("could not remember that setup ran: %s", exc)

    # -- Qt overrides ------------------------------------------------------------------------------

    def done(self, result: int) -> None:
        if self._task is not None and self._task.running:
            self._task.cancel()
            self._task.finished.disconnect()
            self._task.failed.disconnect()
        self._remember_done()
        super().done(result)
