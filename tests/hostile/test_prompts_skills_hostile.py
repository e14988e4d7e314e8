"""Hostile input to ``kvswitch prompt`` and ``kvswitch skill``: names that are paths, zip-slip, symlink
entries, a huge zip and a zip bomb, a client skills folder linked outside the home, memory files that
cannot be read (a FIFO, a directory, not UTF-8, too big). Each gets one clear line and exit code, in
bounded time, and nothing anywhere is lost or written outside where it belongs.

The real CLI runs as a child process (``child_env``: this test's temporary HOME), so a hang or a
traceback is seen as the user would see it. Running as root, a chmod cannot make a file unreadable;
the unreadable cases are the kinds of file KV Switch refuses to open instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest


def kvswitch(env: dict[str, str], *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "kvswitch", *args], env=env, input=stdin.decode(),
                          capture_output=True, text=True, timeout=90)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode != 70, done.stderr
    return done


def refused(env: dict[str, str], *args: str, says: str, stdin: bytes = b"") -> str:
    done = kvswitch(env, *args, stdin=stdin)
    assert done.returncode != 0, done.stdout
    assert says in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr  # one line, no dump
    return done.stderr


def tree(root: Path) -> dict[str, bytes]:
    """Every regular file under ``root`` with its bytes (what must not change)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()}


def skill_md(name: str) -> str:
    return f"---\nname: {name}\ndescription: hostile\n---\nbody\n"


@pytest.mark.parametrize("name", ["../x", "a/b", "..", "a\\b", "", "-rf", "x" * 65])
def test_a_preset_name_that_is_a_path_is_refused(
    child_env: dict[str, str], fake_home: Path, name: str
) -> None:
    refused(child_env, "prompt", "add", "--", name, "-", says="name", stdin=b"text\n")
    assert not (fake_home / ".config" / "kvswitch" / "prompts.json").exists()


@pytest.mark.parametrize("name", ["../evil", "a/b", "has space", ".hidden"])
def test_a_skill_whose_frontmatter_name_is_a_path_is_refused(
    child_env: dict[str, str], fake_home: Path, tmp_path: Path, name: str
) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "SKILL.md").write_text(skill_md(name))
    refused(child_env, "skill", "install", str(source), "--client", "claude", says="refused")
    assert not (fake_home / ".claude").exists()
    assert not (tmp_path / "evil").exists()
    assert not any((fake_home / ".config" / "kvswitch" / "data" / "skills").glob("*"))


@pytest.mark.parametrize("entry", ["../../evil.txt", "/tmp/kvswitch-zip-slip-evil.txt", "ok/../../evil.txt",
                                   "C:/evil.txt", "ok/./../evil.txt"])
def test_zip_slip_is_refused_and_nothing_is_written_outside(
    child_env: dict[str, str], fake_home: Path, tmp_path: Path, entry: str
) -> None:
    archive = tmp_path / "slip.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("ok/SKILL.md", skill_md("ok"))
        zipped.writestr(entry, "pwned\n")
    refused(child_env, "skill", "install", str(archive), "--client", "claude",
            says="outside the skill's folder")
    assert not Path("/tmp/kvswitch-zip-slip-evil.txt").exists()
    data = fake_home / ".config" / "kvswitch" / "data"
    assert not list(data.rglob("evil.txt"))
    assert not list(tmp_path.rglob("evil.txt"))
    assert not any((data / "skills-staging").iterdir())  # the staging folder is cleaned up
    assert not (fake_home / ".claude" / "skills").exists()


def test_a_symlink_entry_in_a_zip_is_refused(child_env: dict[str, str], tmp_path: Path) -> None:
    archive = tmp_path / "link.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("s/SKILL.md", skill_md("s"))
        link = zipfile.ZipInfo("s/passwd")
        link.external_attr = (0o120777 << 16)
        zipped.writestr(link, "/etc/passwd")
    refused(child_env, "skill", "install", str(archive), says="is a symlink")


def test_a_huge_zip_is_refused_by_its_size_unread(child_env: dict[str, str], tmp_path: Path) -> None:
    archive = tmp_path / "huge.zip"
    with open(archive, "wb") as handle:
        handle.truncate(2 << 30)  # 2 GiB, sparse: refused before a byte is read
    refused(child_env, "skill", "install", str(archive), "--zip", says="may be at most 50 MiB")


def test_a_zip_bomb_is_refused_before_it_is_unpacked(
    child_env: dict[str, str], fake_home: Path, tmp_path: Path
) -> None:
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr("b/SKILL.md", skill_md("b"))
        zipped.writestr("b/zeros.bin", b"\0" * (101 << 20))
    assert archive.stat().st_size < 1 << 20
    refused(child_env, "skill", "install", str(archive), says="more than 100 MiB")
    assert not list((fake_home / ".config" / "kvswitch" / "data").rglob("zeros.bin"))


def test_a_skills_folder_linked_outside_the_home_is_never_written_through(
    child_env: dict[str, str], fake_home: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "theirs").mkdir()
    (outside / "theirs" / "SKILL.md").write_text(skill_md("theirs"))
    before = tree(outside)
    (fake_home / ".claude").mkdir()
    (fake_home / ".claude" / "skills").symlink_to(outside)
    source = tmp_path / "src"
    source.mkdir()
    (source / "SKILL.md").write_text(skill_md("mine"))
    assert kvswitch(child_env, "skill", "install", str(source)).returncode == 0
    refused(child_env, "skill", "enable", "mine", "--client", "claude", says="outside your home folder")
    refused(child_env, "skill", "enable", "mine", "--client", "claude", "--copy", says="does not write")
    assert tree(outside) == before
    assert sorted(os.listdir(outside)) == ["theirs"]
    listing = kvswitch(child_env, "skill", "list")  # reading through it is fine: it is listed
    assert "theirs" in listing.stdout


def test_a_skills_folder_relinked_outside_after_enable_is_not_touched_by_disable(
    child_env: dict[str, str], fake_home: Path, tmp_path: Path
) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "SKILL.md").write_text(skill_md("mine"))
    assert kvswitch(child_env, "skill", "install", str(source), "--client", "claude").returncode == 0
    skills = fake_home / ".claude" / "skills"
    outside = tmp_path / "outside"
    skills.rename(outside)  # the user moves the folder out of the home and links it back
    skills.symlink_to(outside)
    refused(child_env, "skill", "disable", "mine", "--client", "claude", says="outside your home folder")
    refused(child_env, "skill", "remove", "mine", says="outside your home folder")
    assert (outside / "mine").is_symlink()
    assert (outside / "mine" / "SKILL.md").exists()


def test_memory_files_that_cannot_be_read_are_refused_and_kept(
    child_env: dict[str, str], fake_home: Path, tmp_path: Path
) -> None:
    (tmp_path / "p.md").write_text("preset\n")
    assert kvswitch(child_env, "prompt", "add", "p", str(tmp_path / "p.md")).returncode == 0
    claude_md = fake_home / ".claude" / "CLAUDE.md"
    claude_md.parent.mkdir()
    os.mkfifo(claude_md)  # would block a naive open() for ever
    refused(child_env, "prompt", "import", "--client", "claude", says="FIFO")
    refused(child_env, "prompt", "use", "p", "--client", "claude", "--force", says="FIFO")
    assert kvswitch(child_env, "prompt", "list").returncode == 0  # listed as unreadable, not a crash
    claude_md.unlink()
    claude_md.mkdir()
    refused(child_env, "prompt", "use", "p", "--client", "claude", "--force", says="is a directory")
    assert claude_md.is_dir()

    agents = fake_home / ".codex" / "AGENTS.md"
    agents.parent.mkdir()
    agents.write_bytes(b"latin-1 \xe9t\xe9\n")
    refused(child_env, "prompt", "import", "--client", "codex", says="not UTF-8")
    (fake_home / ".config" / "opencode").mkdir(parents=True)
    (fake_home / ".config" / "opencode" / "AGENTS.md").write_text("readable\n")
    both = kvswitch(child_env, "prompt", "import")  # the unreadable one does not stop the other
    assert both.returncode == 1
    assert "opencode: imported as preset 'opencode'" in both.stdout
    assert "not imported:" in both.stderr
    refused(child_env, "prompt", "use", "p", "--client", "codex", says="--force")
    assert kvswitch(child_env, "prompt", "use", "p", "--client", "codex", "--force").returncode == 0
    assert agents.read_bytes() == b"preset\n"
    assert kvswitch(child_env, "undo").returncode == 0
    assert agents.read_bytes() == b"latin-1 \xe9t\xe9\n"  # byte for byte

    agents.write_bytes(b"x" * ((1 << 20) + 1))
    refused(child_env, "prompt", "use", "p", "--client", "codex", "--force", says="larger than")
    assert agents.stat().st_size == (1 << 20) + 1


def test_bad_preset_and_skill_sources_are_refused(
    child_env: dict[str, str], fake_home: Path, tmp_path: Path
) -> None:
    refused(child_env, "prompt", "add", "big", "-", says="more than", stdin=b"y" * ((1 << 20) + 10))
    refused(child_env, "prompt", "add", "nul", "-", says="NUL", stdin=b"a\0b")
    no_front = tmp_path / "nofront"
    no_front.mkdir()
    (no_front / "SKILL.md").write_text("just text\n")
    refused(child_env, "skill", "install", str(no_front), says="no frontmatter")
    fifo_skill = tmp_path / "fifo"
    fifo_skill.mkdir()
    (fifo_skill / "SKILL.md").write_text(skill_md("fifo"))
    os.mkfifo(fifo_skill / "pipe")
    refused(child_env, "skill", "install", str(fifo_skill), says="not a regular file")
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "SKILL.md").write_text(skill_md("linked"))
    (linked / "secrets").symlink_to("/etc/passwd")
    refused(child_env, "skill", "install", str(linked), says="a symlink inside the skill")
    refused(child_env, "skill", "install", f"file://{tmp_path}/no-such-repo", says="git clone")
    refused(child_env, "skill", "install", "--git", "--", "--upload-pack=touch /tmp/x",
            says="not a repository")
    refused(child_env, "skill", "install", str(tmp_path / "missing"), says="no such folder")
    (fake_home / ".config" / "kvswitch").mkdir(parents=True, exist_ok=True)
    (fake_home / ".config" / "kvswitch" / "prompts.json").write_text("{not json")
    refused(child_env, "prompt", "list", says="damaged")
    (fake_home / ".config" / "kvswitch" / "skills.json").write_text('{"skills": [{"name": "../x"}]}')
    refused(child_env, "skill", "list", says="damaged")
