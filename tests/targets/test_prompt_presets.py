"""``kvswitch prompt``: presets written to the real memory files of a temporary HOME, through the
switching transaction, and taken back byte for byte by ``kvswitch undo``."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from support.cli import ok, run


def files(home: Path) -> dict[str, bytes | None]:
    """Every memory file's bytes (None: absent)."""
    paths = {"claude": home / ".claude" / "CLAUDE.md", "codex": home / ".codex" / "AGENTS.md",
             "opencode": home / ".config" / "opencode" / "AGENTS.md"}
    return {client: path.read_bytes() if path.exists() else None for client, path in paths.items()}


def test_switch_copy_and_undo_every_file_byte_for_byte(
    fake_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claude_md = fake_home / ".claude" / "CLAUDE.md"
    claude_md.parent.mkdir()
    claude_md.write_bytes(b"# mine\r\nno trailing newline")
    claude_md.chmod(0o640)
    start = files(fake_home)
    preset = tmp_path / "review.md"
    preset.write_text("Review carefully.\n\u00e9t\u00e9\n")

    out = ok(capsys, "prompt", "import")
    assert "claude: imported as preset 'claude'" in out
    ok(capsys, "prompt", "add", "review", str(preset))
    ok(capsys, "prompt", "use", "review", "--client", "claude", "--client", "codex", "--dry-run")
    assert files(fake_home) == start  # a dry run writes nothing
    out = ok(capsys, "prompt", "use", "review", "--client", "claude", "--client", "codex")
    assert "'kvswitch undo' takes it back" in out
    after_use = files(fake_home)
    assert after_use["claude"] == after_use["codex"] == preset.read_bytes()
    assert claude_md.stat().st_mode & 0o777 == 0o640  # the file keeps its mode
    ok(capsys, "prompt", "copy", "--from", "codex", "--to", "opencode")
    assert files(fake_home)["opencode"] == preset.read_bytes()

    listing = json.loads(ok(capsys, "prompt", "list", "--json"))
    by_client = {f["client"]: f for f in listing["memory_files"]}
    assert by_client["claude"]["preset"] == by_client["opencode"]["preset"] == "review"
    assert listing["counted_by"] is None
    assert listing["why_unknown"] == "no profile is in use"
    assert all(p["tokens"] is None for p in listing["presets"])  # no local server: never a guess
    assert "unknown (no profile is in use)" in ok(capsys, "prompt", "list")

    ok(capsys, "undo")
    assert files(fake_home) == after_use
    ok(capsys, "undo")
    assert files(fake_home) == start
    assert claude_md.stat().st_mode & 0o777 == 0o640


def test_a_hand_edited_memory_file_is_never_overwritten_silently(
    fake_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agents = fake_home / ".codex" / "AGENTS.md"
    (fake_home / "one.md").write_text("one\n")
    (fake_home / "two.md").write_text("two\n")
    ok(capsys, "prompt", "add", "one", str(fake_home / "one.md"))
    ok(capsys, "prompt", "add", "two", str(fake_home / "two.md"))
    ok(capsys, "prompt", "use", "one", "--client", "codex")
    agents.write_text("one\nmy own line\n")
    code, out, _ = run(capsys, "doctor")
    assert code == 1
    assert f"{agents}: edited by hand since KV Switch wrote preset 'one' there" in out

    code, out, err = run(capsys, "prompt", "use", "two", "--client", "codex")
    assert code == 4, (out, err)
    assert "edited by hand" in err
    assert "--force" in err
    assert "Traceback" not in err
    assert agents.read_text() == "one\nmy own line\n"

    ok(capsys, "prompt", "use", "two", "--client", "codex", "--force")
    assert agents.read_text() == "two\n"
    ok(capsys, "undo")  # the hand-edited text comes back from the backup
    assert agents.read_text() == "one\nmy own line\n"


def test_a_file_kvswitch_never_saw_needs_import_or_force(
    fake_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    opencode = fake_home / ".config" / "opencode" / "AGENTS.md"
    opencode.parent.mkdir(parents=True)
    opencode.write_text("hand made\n")
    (fake_home / "p.md").write_text("preset\n")
    ok(capsys, "prompt", "add", "p", str(fake_home / "p.md"))
    code, _, err = run(capsys, "prompt", "use", "p", "--client", "opencode")
    assert code == 4
    assert "did not write" in err
    assert "prompt import --client opencode" in err
    assert opencode.read_text() == "hand made\n"
    ok(capsys, "prompt", "import", "--client", "opencode", "--name", "saved")
    ok(capsys, "prompt", "use", "p", "--client", "opencode")  # its text is a preset now: nothing is lost
    assert opencode.read_text() == "preset\n"


def test_a_symlinked_memory_file_stays_a_symlink(
    fake_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dotfiles = fake_home / "dotfiles" / "CLAUDE.md"
    dotfiles.parent.mkdir()
    dotfiles.write_text("from dotfiles\n")
    link = fake_home / ".claude" / "CLAUDE.md"
    link.parent.mkdir()
    link.symlink_to(dotfiles)
    ok(capsys, "prompt", "import", "--client", "claude")
    (tmp_path / "x.md").write_text("x\n")
    ok(capsys, "prompt", "add", "x", str(tmp_path / "x.md"))
    ok(capsys, "prompt", "use", "x", "--client", "claude")
    assert link.is_symlink()
    assert dotfiles.read_text() == "x\n"
    ok(capsys, "undo")
    assert link.is_symlink()
    assert dotfiles.read_text() == "from dotfiles\n"


def test_claude_config_dir_is_honoured(
    fake_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "claude-elsewhere"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(other))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    (tmp_path / "x.md").write_text("x\n")
    ok(capsys, "prompt", "add", "x", str(tmp_path / "x.md"))
    ok(capsys, "prompt", "use", "x", "--client", "claude", "--client", "codex")
    assert (other / "CLAUDE.md").read_text() == "x\n"
    assert (tmp_path / "codex-home" / "AGENTS.md").read_text() == "x\n"
    assert not (fake_home / ".claude").exists()
    assert os.listdir(tmp_path / "codex-home") == ["AGENTS.md"]


def test_remove_forgets_the_preset_and_keeps_the_files(
    fake_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "x.md").write_text("x\n")
    ok(capsys, "prompt", "add", "x", str(tmp_path / "x.md"))
    ok(capsys, "prompt", "use", "x", "--client", "claude")
    assert json.loads(ok(capsys, "prompt", "remove", "x", "--json")) == {"removed": "x"}
    assert (fake_home / ".claude" / "CLAUDE.md").read_text() == "x\n"
    code, _, err = run(capsys, "prompt", "use", "x", "--client", "claude")
    assert code == 2
    assert "no prompt preset named 'x'" in err


def _cc_switch_home(home: Path) -> Path:
    """A CC Switch 4.x database in the temporary HOME (tables as its schema.rs creates them)."""
    folder = home / ".cc-switch"
    folder.mkdir()
    sql = Path(__file__).resolve().parents[1] / "fixtures" / "cc-switch-4.0" / "prompts_skills.sql"
    with sqlite3.connect(folder / "cc-switch.db") as conn:
        conn.executescript(sql.read_text())
    return folder


def test_import_cc_switch_prompts_and_skills(fake_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _cc_switch_home(fake_home)
    for name, description in (("pdf", "Work with PDF files"), ("changelog", "Write a changelog")):
        (folder / "skills" / name).mkdir(parents=True)
        skill_md = f"---\nname: {name}\ndescription: {description}\n---\n"
        (folder / "skills" / name / "SKILL.md").write_text(skill_md)
    before = (folder / "cc-switch.db").read_bytes()

    imported = json.loads(ok(capsys, "prompt", "import", "--cc-switch", "--json"))["imported"]
    assert [(i["app"], i["preset"], i["new"]) for i in imported] == [
        ("claude", "Terse", True), ("codex", "Reviewer", True), ("gemini", "Terse", False),
        ("opencode", "cc-switch-opencode", True)]  # a name that is a path is not used as one
    ok(capsys, "prompt", "use", "Reviewer", "--client", "codex")
    assert (fake_home / ".codex" / "AGENTS.md").read_text() == "# Review rules\n- Read the diff twice.\n"

    out = ok(capsys, "skill", "import", "--cc-switch")
    assert "pdf: installed (CC Switch had it on for claude, codex)" in out
    assert "changelog: installed (CC Switch had it on for opencode)" in out
    found = {s["name"]: s for s in json.loads(ok(capsys, "skill", "list", "--json"))["skills"]}
    assert found["pdf"]["owner"] == "kvswitch-store"
    assert "pdf: not installed (installed already)" in ok(capsys, "skill", "import", "--cc-switch")
    assert (folder / "cc-switch.db").read_bytes() == before  # CC Switch's database is only read


def test_a_cc_switch_skill_folder_outside_its_store_is_refused(
    fake_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _cc_switch_home(fake_home)
    with sqlite3.connect(folder / "cc-switch.db") as conn:
        conn.execute("INSERT INTO skills (id, name, directory) VALUES ('x', 'x', '../../etc')")
    code, _, err = run(capsys, "skill", "import", "--cc-switch")
    assert code == 1
    assert "is not a folder under" in err
