"""The "Prompts and skills" tab of a real window on real files in the temporary HOME, through its real
controller and engines: a preset used for Claude Code from the page writes CLAUDE.md after the diff was
shown, the message bar's Undo puts the file back byte for byte; a memory file only the user has is
replaced only after a confirmation; a skill installed from a real zip and from a real local git
repository is enabled for two clients from the page (links in their folders), and refusals reach the
message bar. The modal questions (which clients, replace?) are answered by patching the module-level
functions that ask them; everything else is the real widgets."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from PySide6.QtCore import Qt
from tests.ui.uihelpers import make_profile

from kvswitch.ui.library import library_dialogs
from kvswitch.ui.library.skills_page import FIXED_COLUMNS
from kvswitch.ui.profiles.diff_dialog import ApplyDialog
from support.llama import RunningServer
from support.llama import llama_server as start_llama_server

ORIGINAL = b"# my own rules\r\nkeep tabs\n\xe2\x9c\x93 done\n"  # CRLF, no final newline rule: bytes matter
RULES = "Answer in English.\nRun the tests before a commit.\n"


def _idle(qtbot: Any, window: Any) -> Any:
    view = window.library_view
    qtbot.waitUntil(lambda: not view.controller.busy, timeout=30_000)
    return view


def _select_preset(view: Any, name: str) -> None:
    table = view.prompts_page.presets
    rows = [r for r in range(table.rowCount()) if table.item(r, 0).text() == name]
    assert rows, f"no preset row {name}"
    table.setCurrentCell(rows[0], 0)


def _write_skill(folder: Path, name: str, description: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n")
    (folder / "notes.txt").write_text("helper file\n")
    return folder


@pytest.fixture
def reviewed(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[Any], str]]:
    """ApplyDialog.ask confirms and records (name, plans, rendered diff) of what it was shown."""
    shown: list[tuple[str, list[Any], str]] = []

    def ask(_parent: Any, name: str, plans: list[Any], render: Any) -> bool:
        shown.append((name, plans, render(plans)))
        return True

    monkeypatch.setattr(ApplyDialog, "ask", staticmethod(ask))
    return shown


def test_use_preset_for_claude_shows_the_diff_and_undo_restores_bytes(
        qtbot: Any, window: Any, fake_home: Path, monkeypatch: pytest.MonkeyPatch,
        reviewed: list[Any]) -> None:
    claude_md = fake_home / ".claude" / "CLAUDE.md"
    claude_md.parent.mkdir(parents=True)
    claude_md.write_bytes(ORIGINAL)
    view = _idle(qtbot, window)
    # the tab read the files as the window was built, which may be before CLAUDE.md was written: the
    # page shows what it last read, so read again (what the page's own reload does)
    view.controller.reload()
    view = _idle(qtbot, window)
    page = view.prompts_page
    assert page.files.rowCount() == 3
    assert "not written by KV Switch" in page.files.item(0, 2).text()

    # import what is there, then add a typed preset through the Add menu's dialog
    with qtbot.waitSignal(view.controller.action_finished, timeout=30_000) as done:
        view.controller.import_prompts("claude")
    assert "imported as preset 'claude'" in done.args[0]
    monkeypatch.setattr(library_dialogs, "ask_preset_text", lambda _parent: ("rules", RULES))
    with qtbot.waitSignal(view.controller.action_finished, timeout=30_000):
        page.add_button.menu().actions()[1].trigger()
    names = [page.presets.item(r, 0).text() for r in range(page.presets.rowCount())]
    assert names == ["claude", "rules"]
    assert page.presets.item(1, 1).text() == f"{len(RULES.encode())} bytes"
    assert page.presets.item(1, 2).text().startswith("unknown (")  # no profile in use: never guessed
    assert page.presets.item(0, 3).text() == "Claude Code"  # the imported text is in use there

    _select_preset(view, "rules")
    monkeypatch.setattr(library_dialogs, "choose_clients", lambda *_a, **_k: ["claude"])
    with qtbot.waitSignal(view.controller.preset_applied, timeout=30_000):
        page.use_button.click()
    assert len(reviewed) == 1
    name, plans, diff = reviewed[0]
    assert name == "rules"
    assert [p.target_id for p in plans] == ["prompt:claude"]
    assert "+Run the tests before a commit." in diff
    assert "-keep tabs" in diff
    assert claude_md.read_bytes() == RULES.encode()
    qtbot.waitUntil(lambda: "preset “rules”" in page.files.item(0, 2).text(), timeout=10_000)
    bar = window.message_bar
    assert bar.level == "success"
    assert "rules" in bar.text
    assert set(bar.action_buttons) == {"review", "undo"}

    bar.action_buttons["review"].click()  # the profiles' own dialog, read-only, with the same diff
    dialog = view.link.review_dialog
    assert dialog.apply_button is None
    assert dialog.tabs.count() == 1
    dialog.close()

    with qtbot.waitSignal(view.controller.prompts_changed, timeout=30_000):
        bar.action_buttons["undo"].click()
    assert claude_md.read_bytes() == ORIGINAL
    assert page.files.item(0, 2).text() == "preset “claude”'s text, not written by KV Switch"


def test_hand_edited_memory_file_is_replaced_only_after_confirmation(
        qtbot: Any, window: Any, fake_home: Path, monkeypatch: pytest.MonkeyPatch,
        reviewed: list[Any]) -> None:
    agents = fake_home / ".codex" / "AGENTS.md"
    agents.parent.mkdir(parents=True)
    agents.write_bytes(b"hand-written, in no preset\n")
    view = _idle(qtbot, window)
    with qtbot.waitSignal(view.controller.action_finished, timeout=30_000):
        view.controller.add_preset("rules", text=RULES)
    asked: list[str] = []
    answer = [False]

    def confirm(_parent: Any, reason: str) -> bool:
        asked.append(reason)
        return answer[0]

    monkeypatch.setattr(library_dialogs, "confirm_replace", confirm)
    with qtbot.waitSignal(view.controller.hand_edit_found, timeout=30_000):
        view.prompts_page.use_preset("rules", ["codex"])
    qtbot.waitUntil(lambda: not view.controller.busy)
    assert len(asked) == 1
    assert str(agents) in asked[0]
    assert reviewed == []  # refused before any diff was offered
    assert agents.read_bytes() == b"hand-written, in no preset\n"

    answer[0] = True
    with qtbot.waitSignal(view.controller.preset_applied, timeout=30_000):
        view.prompts_page.use_preset("rules", ["codex"])
    assert len(asked) == 2
    assert len(reviewed) == 1
    assert any("replaced" in w for p in reviewed[0][1] for w in p.warnings)
    assert agents.read_bytes() == RULES.encode()
    assert window.controller.undo()
    assert agents.read_bytes() == b"hand-written, in no preset\n"


def _cell(view: Any, name: str, client: str) -> Any:
    page = view.skills_page
    column = FIXED_COLUMNS + library_dialogs.CLIENTS.index(client)
    for row in range(page.table.rowCount()):
        if page.table.item(row, 0).text() == name:
            return page.table.item(row, column)
    raise AssertionError(f"no skill row {name}")


def test_install_skills_from_a_zip_and_a_git_repo_and_enable_them_for_two_clients(
        qtbot: Any, window: Any, fake_home: Path, tmp_path: Path) -> None:
    view = _idle(qtbot, window)
    page = view.skills_page
    finished = view.controller.action_finished

    archive = tmp_path / "notes.zip"
    source = _write_skill(tmp_path / "src" / "release-notes", "release-notes", "Write release notes")
    with zipfile.ZipFile(archive, "w") as zipped:
        for file in sorted(source.iterdir()):
            zipped.write(file, f"release-notes/{file.name}")
    page.source.setText(str(archive))
    page.install_for["claude"].setChecked(True)
    page.install_for["codex"].setChecked(True)
    with qtbot.waitSignal(finished, timeout=60_000) as done:
        page.install_button.click()
    assert "release-notes" in done.args[0]
    for folder in (fake_home / ".claude" / "skills", fake_home / ".codex" / "skills"):
        entry = folder / "release-notes"
        assert entry.is_symlink()
        assert (entry / "SKILL.md").read_text().startswith("---\nname: release-notes")
    assert _cell(view, "release-notes", "claude").checkState() == Qt.CheckState.Checked
    assert _cell(view, "release-notes", "claude").text() == "link"
    assert _cell(view, "release-notes", "opencode").text() == "reads it"  # OpenCode reads ~/.claude/skills

    repo = tmp_path / "repo"
    _write_skill(repo, "triage", "Sort new issues by area")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "skill"], check=True)
    for box in page.install_for.values():
        box.setChecked(False)
    page.source.setText(repo.as_uri())
    with qtbot.waitSignal(finished, timeout=60_000):
        page.install_button.click()
    assert not (fake_home / ".claude" / "skills" / "triage").exists()  # enabled for no client yet
    for client in ("codex", "opencode"):  # one check box each, as a user enables it
        with qtbot.waitSignal(finished, timeout=60_000):
            _cell(view, "triage", client).setCheckState(Qt.CheckState.Checked)
    assert (fake_home / ".codex" / "skills" / "triage" / "SKILL.md").is_file()
    assert (fake_home / ".config" / "opencode" / "skills" / "triage").is_symlink()
    assert not (fake_home / ".codex" / "skills" / "triage" / ".git").exists()
    assert _cell(view, "triage", "opencode").checkState() == Qt.CheckState.Checked
    assert _cell(view, "triage", "claude").checkState() == Qt.CheckState.Unchecked
    assert page.table.item(0, 1).text().startswith("unknown (")

    with qtbot.waitSignal(finished, timeout=60_000):
        _cell(view, "triage", "opencode").setCheckState(Qt.CheckState.Unchecked)
    assert not (fake_home / ".config" / "opencode" / "skills" / "triage").exists()
    assert (fake_home / ".codex" / "skills" / "triage").is_symlink()

    # Update fetches the repository again (a new commit); Remove takes every link and KV Switch's copy
    _write_skill(repo, "triage", "Sort new issues by area and severity")
    subprocess.run([*git, "commit", "-q", "-am", "clearer"], check=True)
    row = [r.name for r in page.rows].index("triage")
    page.table.setCurrentCell(row, 0)
    assert page.update_button.isEnabled()
    with qtbot.waitSignal(finished, timeout=60_000) as updated:
        page.update_button.click()
    assert "Updated skill “triage”" in updated.args[0]
    assert "and severity" in (fake_home / ".codex" / "skills" / "triage" / "SKILL.md").read_text()
    assert "and severity" in _cell(view, "triage", "codex").tableWidget().item(row, 0).toolTip()
    page.table.setCurrentCell([r.name for r in page.rows].index("triage"), 0)
    with qtbot.waitSignal(finished, timeout=60_000):
        page.remove_button.click()
    assert not (fake_home / ".codex" / "skills" / "triage").exists()
    assert "triage" not in [r.name for r in page.rows]
    assert (fake_home / ".claude" / "skills" / "release-notes").is_symlink()  # the other one untouched


def test_a_skill_of_the_users_own_is_listed_not_offered_and_refusals_reach_the_message_bar(
        qtbot: Any, window: Any, fake_home: Path, tmp_path: Path) -> None:
    _write_skill(fake_home / ".agents" / "skills" / "mine", "mine", "The user's own skill")
    view = _idle(qtbot, window)
    with qtbot.waitSignal(view.controller.skills_changed, timeout=30_000):
        view.controller.reload()
    cell = _cell(view, "mine", "codex")
    assert cell.text() == "reads it"
    assert not cell.flags() & Qt.ItemFlag.ItemIsUserCheckable
    assert "not from KV Switch" in view.skills_page.table.item(0, 2).text()

    bad = _write_skill(tmp_path / "bad", "../escape", "A name that is a path")
    with qtbot.waitSignal(view.controller.action_failed, timeout=30_000) as failed:
        view.controller.install_skill(str(bad), "folder", ["claude"])
    assert "refused" in failed.args[0]
    assert window.message_bar.level == "error"
    assert "Nothing was changed" in window.message_bar.text
    assert not (fake_home / ".claude" / "skills").exists()


def test_a_memory_file_changed_while_the_diff_was_open_is_not_written(
        qtbot: Any, window: Any, fake_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another KV Switch write meanwhile: nothing is written and the fresh diff is shown, the file
    flagged; the user's own text meanwhile: the replace question comes first, and No writes nothing."""
    from kvswitch.targets.memory_switch import MemoryWrite, MemoryWriter

    opencode_md = fake_home / ".config" / "opencode" / "AGENTS.md"
    view = _idle(qtbot, window)
    with qtbot.waitSignal(view.controller.action_finished, timeout=30_000):
        view.controller.add_preset("rules", text=RULES)
    shown: list[list[Any]] = []

    def ask(_parent: Any, _name: str, plans: list[Any], _render: Any) -> bool:
        shown.append(plans)
        if len(shown) == 1:  # another KV Switch process writes the same file while the diff is open
            writer = MemoryWriter(window.controller.paths, os.environ, {RULES})
            writer.apply(MemoryWrite("other", "other text\n", ("opencode",)))
        return True

    monkeypatch.setattr(ApplyDialog, "ask", staticmethod(ask))
    with qtbot.waitSignal(view.controller.preset_applied, timeout=30_000):
        view.prompts_page.use_preset("rules", ["opencode"])
    assert len(shown) == 2
    assert shown[1][0].warnings[0].startswith("This file changed after the preview you confirmed")
    assert shown[1][0].before == "other text\n"
    assert opencode_md.read_text() == RULES

    asked: list[str] = []
    monkeypatch.setattr(library_dialogs, "confirm_replace", lambda _p, reason: asked.append(reason) or False)

    def ask_then_edit(_parent: Any, _name: str, _plans: list[Any], _render: Any) -> bool:
        opencode_md.write_text("typed by the user while the diff was open\n")
        return True

    monkeypatch.setattr(ApplyDialog, "ask", staticmethod(ask_then_edit))
    with qtbot.waitSignal(view.controller.hand_edit_found, timeout=30_000):
        view.controller.add_preset("other", text="second\n")
        qtbot.waitUntil(lambda: not view.controller.busy, timeout=30_000)
        view.prompts_page.use_preset("other", ["opencode"])
    qtbot.waitUntil(lambda: not view.controller.busy, timeout=30_000)
    assert len(asked) == 1
    assert str(opencode_md) in asked[0]
    assert opencode_md.read_text() == "typed by the user while the diff was open\n"


def test_copy_to_clients_and_cc_switch_imports_from_the_page(
        qtbot: Any, window: Any, fake_home: Path, monkeypatch: pytest.MonkeyPatch,
        reviewed: list[Any]) -> None:
    folder = fake_home / ".cc-switch"
    folder.mkdir()
    sql = Path(__file__).resolve().parents[1] / "fixtures" / "cc-switch-4.0" / "prompts_skills.sql"
    with sqlite3.connect(folder / "cc-switch.db") as conn:
        conn.executescript(sql.read_text())
    for name, description in (("pdf", "Work with PDF files"), ("changelog", "Write a changelog")):
        _write_skill(folder / "skills" / name, name, description)
    view = _idle(qtbot, window)
    page = view.prompts_page
    with qtbot.waitSignal(view.controller.action_finished, timeout=30_000) as done:
        page.import_button.menu().actions()[4].trigger()  # From CC Switch
    assert "'Reviewer'" in done.args[0]
    names = [page.presets.item(r, 0).text() for r in range(page.presets.rowCount())]
    assert names == ["Terse", "Reviewer", "cc-switch-opencode"]  # a name that is a path is not used

    monkeypatch.setattr(library_dialogs, "choose_clients", lambda *_a, **_k: ["claude"])
    _select_preset(view, "Reviewer")
    with qtbot.waitSignal(view.controller.preset_applied, timeout=30_000):
        page.use_button.click()
    review_rules = (fake_home / ".claude" / "CLAUDE.md").read_bytes()
    assert review_rules == b"# Review rules\n- Read the diff twice.\n"

    page.files.setCurrentCell(0, 0)  # Claude Code's memory file
    assert page.copy_button.isEnabled()
    chosen: list[str] = []

    def choose(_parent: Any, _title: str, _text: str, exclude: str = "") -> list[str]:
        chosen.append(exclude)
        return ["codex", "opencode"]

    monkeypatch.setattr(library_dialogs, "choose_clients", choose)
    with qtbot.waitSignal(view.controller.preset_applied, timeout=30_000):
        page.copy_button.click()
    assert chosen == ["claude"]  # the source is not offered as a target
    assert [p.target_id for p in reviewed[-1][1]] == ["prompt:codex", "prompt:opencode"]
    for path in (fake_home / ".codex" / "AGENTS.md", fake_home / ".config" / "opencode" / "AGENTS.md"):
        assert path.read_bytes() == review_rules
    assert [page.files.item(r, 2).text() for r in range(3)] == ["preset “Reviewer”"] * 3

    with qtbot.waitSignal(view.controller.prompts_changed, timeout=30_000):
        window.message_bar.action_buttons["undo"].click()
    assert not (fake_home / ".codex" / "AGENTS.md").exists()  # absent before the copy: absent again
    assert not (fake_home / ".config" / "opencode" / "AGENTS.md").exists()
    assert (fake_home / ".claude" / "CLAUDE.md").read_bytes() == review_rules  # only the last change

    skills = view.skills_page
    with qtbot.waitSignal(view.controller.action_finished, timeout=60_000) as imported:
        skills.cc_switch_button.click()
    assert "CC Switch had it on for claude, codex" in imported.args[0]
    assert {r.name for r in skills.rows if r.managed} == {"pdf", "changelog"}
    assert all(r.cells == {"claude": "off", "codex": "off", "opencode": "off"} for r in skills.rows)


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with start_llama_server(tmp_path_factory.mktemp("llama-library"), context=4096, metrics=False) as server:
        yield server


def _prompt_tokens(server: RunningServer, system: str) -> int:
    answer = httpx.post(f"{server.url}/v1/chat/completions", timeout=60, json={
        "model": "tiny", "max_tokens": 1, "messages": [{"role": "system", "content": system},
                                                       {"role": "user", "content": "hi"}]})
    answer.raise_for_status()
    return int(answer.json()["usage"]["prompt_tokens"])


@pytest.mark.real_server
def test_token_costs_are_the_real_servers_own(qtbot: Any, window: Any, store: Any, llama: RunningServer,
                                              fake_home: Path, tmp_path: Path) -> None:
    """With a local llama.cpp profile in use, the page's numbers are the server's: each equals the rise
    of its own prompt_tokens when that text is added to a request (memory file 77, skill line 57 on
    b11434 with the test model)."""
    memory = ("# House rules\n- Answer in English.\n- Run the tests before you commit.\n"
              "- Never push to main.\n")
    store.add(make_profile("local", base_url=llama.url, model="tiny", context_window=32768,
                           env={"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}))
    assert window.controller.apply("local")
    view = _idle(qtbot, window)
    with qtbot.waitSignal(view.controller.action_finished, timeout=60_000):
        view.controller.add_preset("rules", text=memory)
    skill = _write_skill(tmp_path / "release-notes", "release-notes",
                         "Write release notes from the git log since the last tag")
    with qtbot.waitSignal(view.controller.action_finished, timeout=60_000):
        view.controller.install_skill(str(skill), None, ["claude"])

    base = "You are a coding assistant.\n"
    without = _prompt_tokens(llama, base)
    preset_tokens = _prompt_tokens(llama, base + memory) - without
    line_tokens = _prompt_tokens(llama, base + "- release-notes: Write release notes from the git log since "
                                 "the last tag") - without
    by = f"(counted by llama.cpp at {llama.url})"
    assert (preset_tokens, line_tokens) == (77, 57)  # as docs/prompts-and-skills.md says (b11434)
    assert view.prompts_page.presets.item(0, 2).text() == f"~{preset_tokens} tokens {by}"
    assert view.skills_page.table.item(0, 1).text() == f"~{line_tokens} tokens {by}"
