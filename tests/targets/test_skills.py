"""``kvswitch skill``: skills installed from a real folder, a real zip and a real git repository (real
``git``) into a temporary HOME, enabled per client by link or copy, updated, disabled and removed; the
user's own skills are discovered and never touched."""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from support.cli import ok, run


def write_skill(folder: Path, name: str, description: str, body: str = "Do the thing.\n") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}")
    return folder


def git_repo(root: Path, name: str, description: str) -> Path:
    """A real git repository holding one skill at its top, with one commit."""
    write_skill(root, name, description)
    (root / "scripts").mkdir()
    (root / "scripts" / "run.sh").write_text("echo hi\n")
    commit(root, "first")
    return root


def commit(root: Path, message: str) -> None:
    git = ["git", "-C", str(root), "-c", "user.email=t@example.invalid", "-c", "user.name=t"]
    if not (root / ".git").exists():
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", message], check=True)


def zip_of(folder: Path, archive: Path) -> Path:
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in sorted(folder.rglob("*")):
            zipped.write(path, str(path.relative_to(folder.parent)))
    return archive


def skills_json(capsys: pytest.CaptureFixture[str]) -> dict[str, list[dict[str, object]]]:
    listing = json.loads(ok(capsys, "skill", "list", "--json"))
    found: dict[str, list[dict[str, object]]] = {}
    for entry in listing["skills"]:
        found.setdefault(str(entry["name"]), []).append(entry)
    return found


def test_install_from_git_zip_and_folder_enable_update_remove(
    fake_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = git_repo(tmp_path / "repo", "git-skill", "Came from git")
    zipped = write_skill(tmp_path / "z" / "zip-skill", "zip-skill", "Came in a zip")
    archive = zip_of(zipped, tmp_path / "s.zip")
    folder = write_skill(tmp_path / "plain", "folder-skill", "Came from a folder")
    own = write_skill(fake_home / ".claude" / "skills" / "users-own", "users-own", "The user's")
    shared = write_skill(fake_home / ".agents" / "skills" / "shared-one", "shared-one", "Shared")

    ok(capsys, "skill", "install", f"file://{repo}", "--client", "claude", "--client", "codex")
    ok(capsys, "skill", "install", str(archive), "--client", "claude", "--copy")
    ok(capsys, "skill", "install", str(folder))
    claude_skills = fake_home / ".claude" / "skills"
    assert (claude_skills / "git-skill").is_symlink()
    assert (claude_skills / "git-skill" / "scripts" / "run.sh").read_text() == "echo hi\n"
    assert not (claude_skills / "git-skill" / ".git").exists()
    assert (fake_home / ".codex" / "skills" / "git-skill").is_symlink()
    assert (claude_skills / "zip-skill").is_dir()
    assert not (claude_skills / "zip-skill").is_symlink()

    found = skills_json(capsys)
    assert {e["owner"] for e in found["git-skill"]} == {"kvswitch-link"}
    assert found["zip-skill"][0]["owner"] == "kvswitch-copy"
    assert found["folder-skill"][0]["owner"] == "kvswitch-store"  # installed, enabled nowhere
    assert found["users-own"][0]["owner"] == "user"  # discovered, not only what KV Switch installed
    assert found["users-own"][0]["readers"] == ["claude", "opencode"]
    assert found["shared-one"][0]["readers"] == ["codex", "opencode"]
    assert found["zip-skill"][0]["tokens"] is None  # no local server in use: unknown, never guessed

    # update re-fetches the git source; the link shows the new text at once
    write_skill(repo, "git-skill", "Came from git, second version")
    commit(repo, "second")
    ok(capsys, "skill", "update", "git-skill")
    assert "second version" in (claude_skills / "git-skill" / "SKILL.md").read_text()

    ok(capsys, "skill", "disable", "git-skill", "--client", "codex")
    assert not (fake_home / ".codex" / "skills" / "git-skill").exists()
    ok(capsys, "skill", "remove", "git-skill")
    ok(capsys, "skill", "remove", "zip-skill")
    assert sorted(p.name for p in claude_skills.iterdir()) == ["users-own"]
    assert (own / "SKILL.md").read_text().startswith("---\nname: users-own")
    assert shared.is_dir()

    code, _, err = run(capsys, "skill", "remove", "users-own")
    assert code == 2
    assert "is not a skill KV Switch installed" in err
    assert (own / "SKILL.md").exists()


def test_an_edited_copy_is_kept_aside_never_deleted(
    fake_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_skill(tmp_path / "s", "copied", "Copied one")
    ok(capsys, "skill", "install", str(source), "--client", "claude", "--client", "opencode", "--copy")
    copy = fake_home / ".claude" / "skills" / "copied"
    (copy / "notes.md").write_text("my notes\n")

    code, _, err = run(capsys, "skill", "remove", "copied")
    assert code == 2
    assert "edited since KV Switch copied it" in err
    assert (fake_home / ".config" / "opencode" / "skills" / "copied").is_dir()  # nothing touched
    assert (copy / "notes.md").exists()

    ok(capsys, "skill", "remove", "copied", "--force")
    assert not copy.exists()
    kept = list((fake_home / ".config" / "kvswitch" / "data" / "skills-kept").iterdir())
    assert [(k / "notes.md").read_text() for k in kept] == ["my notes\n"]


def test_a_folder_of_several_skills_and_a_chosen_path(
    fake_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "many"
    write_skill(repo / "skills" / "one", "one", "First")
    write_skill(repo / "skills" / "two", "two", "Second")
    commit(repo, "two skills")
    out = json.loads(ok(capsys, "skill", "install", str(repo), "--git", "--json"))
    assert out["installed"] == ["one", "two"]
    code, _, err = run(capsys, "skill", "install", str(repo), "--git", "--path", "skills/two")
    assert code == 2
    assert "installed already" in err
    ok(capsys, "skill", "install", str(repo), "--git", "--path", "skills/two", "--replace",
       "--client", "claude")
    assert (fake_home / ".claude" / "skills" / "two").is_symlink()
