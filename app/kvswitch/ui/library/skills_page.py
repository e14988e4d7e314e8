"""The Skills page: every skill a client reads and every skill KV Switch installed, × the clients, with
the tokens each skill's listing line adds to every request; install from a folder, a zip or a git URL,
enable or disable per client (a check box: a link, or a copy), update and remove.

A skill KV Switch did not install is listed (where it is, who reads it) but its cells are not check
boxes: only what KV Switch put there is ever changed. Everything goes through ``LibraryController``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from kvswitch.ui.control.clients import client_label
from kvswitch.ui.i18n import fill
from kvswitch.ui.library import library_dialogs as dialogs
from kvswitch.ui.library.prompts_page import cost_text

if TYPE_CHECKING:
    from kvswitch.ui.control.controller_library import LibraryController
    from kvswitch.ui.control.library_state import SkillRow

# the columns before the clients': name, tokens, source
FIXED_COLUMNS = 3


class SkillsPage(QWidget):
    """The skills × clients matrix and the install row (see the module docstring)."""

    def __init__(self, controller: LibraryController, parent: QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self._filling = False
        self.rows: list[SkillRow] = []
        self.source = QLineEdit(self)
        self.source.setPlaceholderText(self.tr("A folder, a .zip, or a git URL (https://…, file://…, git@…)"))
        self.kind = QComboBox(self)
        for kind, label in ((None, self.tr("Detect")), ("folder", self.tr("Folder")), ("zip", self.tr("Zip")),
                            ("git", self.tr("Git repository"))):
            self.kind.addItem(label, kind)
        folder = QPushButton(self.tr("Folder…"), self)
        folder.clicked.connect(self._on_folder_clicked)
        archive = QPushButton(self.tr("Zip…"), self)
        archive.clicked.connect(self._on_zip_clicked)
        self.install_button = QPushButton(self.tr("Install"), self)
        self.install_button.clicked.connect(self._on_install_clicked)
        self.source.returnPressed.connect(self._on_install_clicked)
        self.install_for = {c: QCheckBox(client_label(c), self) for c in dialogs.CLIENTS}
        self.copy_box = QCheckBox(self.tr("Enable by copying (instead of a link)"), self)
        self.table = QTableWidget(self)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.itemChanged.connect(self._on_table_item_changed)
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.update_button = QPushButton(self.tr("Update"), self)
        self.update_button.clicked.connect(self._on_update_clicked)
        self.remove_button = QPushButton(self.tr("Remove"), self)
        self.remove_button.clicked.connect(self._on_remove_clicked)
        self.cc_switch_button = QPushButton(self.tr("Import from CC Switch"), self)
        self.cc_switch_button.clicked.connect(self.controller.import_cc_switch_skills)
        install_row = QHBoxLayout()
        install_row.addWidget(self.source, 1)
        install_row.addWidget(self.kind)
        install_row.addWidget(folder)
        install_row.addWidget(archive)
        install_row.addWidget(self.install_button)
        options = QHBoxLayout()
        options.addWidget(QLabel(self.tr("Enable for:"), self))
        for box in self.install_for.values():
            options.addWidget(box)
        options.addWidget(self.copy_box)
        options.addStretch(1)
        options.addWidget(self.cc_switch_button)
        options.addWidget(self.update_button)
        options.addWidget(self.remove_button)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(self.tr("Skills: a SKILL.md folder; each client lists every skill it reads "
                                        "in every request"), self))
        layout.addLayout(install_row)
        layout.addLayout(options)
        layout.addWidget(self.table, 1)
        controller.skills_changed.connect(self._on_controller_skills_changed)
        controller.busy_changed.connect(self._on_controller_busy_changed)
        self._update_buttons()

    # -- controller --------------------------------------------------------------------------------
    @Slot(object)
    def _on_controller_skills_changed(self, rows: list[SkillRow]) -> None:
        self._filling = True
        self.rows = rows
        self.table.clear()
        self.table.setColumnCount(FIXED_COLUMNS + len(dialogs.CLIENTS))
        self.table.setHorizontalHeaderLabels([self.tr("Skill"), self.tr("Tokens in every request"),
                                              self.tr("Source"), *map(client_label, dialogs.CLIENTS)])
        self.table.setRowCount(len(rows))
        for row, skill in enumerate(rows):
            name = QTableWidgetItem(skill.name)
            name.setToolTip(skill.problem or skill.description)
            self.table.setItem(row, 0, name)
            self.table.setItem(row, 1, QTableWidgetItem(cost_text(skill.cost) if not skill.problem
                                                        else fill(self.tr("not usable: %1"), skill.problem)))
            where = dialogs.short_path(skill.source)
            shown = where if skill.managed else fill(self.tr("not from KV Switch: %1"), where)
            source = QTableWidgetItem(shown)
            source.setToolTip(skill.source)
            self.table.setItem(row, 2, source)
            for offset, client in enumerate(dialogs.CLIENTS):
                self.table.setItem(row, FIXED_COLUMNS + offset, self._cell(skill, client))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self._filling = False
        self._update_buttons()

    def _cell(self, skill: SkillRow, client: str) -> QTableWidgetItem:
        state = skill.cells.get(client, "off")
        words = {"link": self.tr("link"), "copy": self.tr("copy"), "seen": self.tr("reads it"), "off": ""}
        item = QTableWidgetItem(words.get(state, state))
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if skill.managed:
            item.setFlags(flags | Qt.ItemFlag.ItemIsUserCheckable)
            on = state in ("link", "copy")
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
            item.setData(Qt.ItemDataRole.UserRole, (skill.name, client))
        else:
            item.setFlags(flags)
        if state == "seen":
            item.setToolTip(fill(self.tr("%1 reads it from %2"), client_label(client),
                                 skill.seen_in.get(client, "")))
        return item

    @Slot(bool)
    def _on_controller_busy_changed(self, busy: bool) -> None:
        self.setEnabled(not busy)
        if not busy:
            self._update_buttons()

    # -- user --------------------------------------------------------------------------------------
    def selected_skill(self) -> SkillRow | None:
        row = self.table.currentRow()
        return self.rows[row] if 0 <= row < len(self.rows) else None

    @Slot()
    def _update_buttons(self) -> None:
        skill = self.selected_skill()
        managed = skill is not None and skill.managed
        self.update_button.setEnabled(managed)
        self.remove_button.setEnabled(managed)

    @Slot(QTableWidgetItem)
    def _on_table_item_changed(self, item: QTableWidgetItem) -> None:
        data = item.data(Qt.ItemDataRole.UserRole)
        if self._filling or not data:
            return
        name, client = data
        self.controller.set_skill_enabled(name, client, item.checkState() == Qt.CheckState.Checked,
                                          copy=self.copy_box.isChecked())

    @Slot()
    def _on_install_clicked(self) -> None:
        source = self.source.text().strip()
        if not source:
            return
        clients = [c for c, box in self.install_for.items() if box.isChecked()]
        copy = self.copy_box.isChecked()
        self.controller.install_skill(source, self.kind.currentData(), clients, copy=copy)

    @Slot()
    def _on_folder_clicked(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, self.tr("Install a skill from a folder"))
        if folder:
            self.source.setText(folder)
            self.kind.setCurrentIndex(self.kind.findData("folder"))

    @Slot()
    def _on_zip_clicked(self) -> None:
        file, _ = QFileDialog.getOpenFileName(self, self.tr("Install a skill from a zip"), "",
                                              self.tr("Zip archives (*.zip)"))
        if file:
            self.source.setText(file)
            self.kind.setCurrentIndex(self.kind.findData("zip"))

    @Slot()
    def _on_update_clicked(self) -> None:
        skill = self.selected_skill()
        if skill is not None and skill.managed:
            self.controller.update_skill(skill.name)

    @Slot()
    def _on_remove_clicked(self) -> None:
        skill = self.selected_skill()
        if skill is not None and skill.managed:
            self.controller.remove_skill(skill.name)
