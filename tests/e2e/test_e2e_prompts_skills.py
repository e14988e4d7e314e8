"""Memory-file presets and skills written by the real ``kvswitch`` CLI are what the real clients send.

Each client runs once against a scripted loopback upstream that records its request (the assertion is
about what the client sends, so no model is needed): Claude Code 2.1.332 with a ``CLAUDE.md`` preset and
two skills installed from a local git repository and from a zip; Codex 0.171.0 and OpenCode 1.18.33
with an ``AGENTS.md`` preset and a skill enabled for them. ``undo`` then puts every memory file back
byte for byte.
"""

from __future__ import annotations

import json
import os
import subprocess
import zipfile
from pathlib import Path

import pytest

from kvswitch.cli import main
from support.claude import claude_binary
from support.clients import CODEX_NEW_VERSION, codex_binary, opencode_binary
from support.scripted_upstream import ScriptedUpstream, scripted_upstream

pytestmark = pytest.mark.real_server


def _skill(folder: Path, name: str, marker: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {marker} when asked\n---\nSteps.\n")
    return folder


def _git_repo(root: Path) -> Path:
    _skill(root, "from-git", "MARK-GIT-SKILL")
    git = ["git", "-C", str(root), "-c", "user.email=t@example.invalid", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "skill"], check=True)
    return root


def _zip(tmp_path: Path) -> Path:
    folder = _skill(tmp_path / "zipsrc" / "from-zip", "from-zip", "MARK-ZIP-SKILL")
    archive = tmp_path / "from-zip.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in sorted(folder.rglob("*")):
            zipped.write(path, str(path.relative_to(folder.parent)))
    return archive


def _ok(*args: str) -> None:
    assert main(list(args)) == 0, args


def _run(argv: list[str], home: Path, cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
           "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local" / "share"),
           **extra}
    return subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=300)


def _sent(upstream: ScriptedUpstream, suffix: str) -> str:
    bodies = upstream.bodies(suffix)
    assert bodies, [path for path, _ in upstream.requests]
    return json.dumps(bodies)


def test_claude_code_sends_the_preset_and_the_skills_from_git_and_zip(
    fake_home: Path, tmp_path: Path
) -> None:
    binary = claude_binary()
    project = tmp_path / "project"
    project.mkdir()
    claude_md = fake_home / ".claude" / "CLAUDE.md"
    claude_md.parent.mkdir()
    claude_md.write_bytes(b"the user's own memory\n")
    (tmp_path / "preset.md").write_text("MARK-MEMORY-PRESET: answer tersely.\n")
    with scripted_upstream() as upstream:
        _ok("profile", "add", "scripted", "--kind", "custom", "--base-url", upstream.url, "--model", "tiny",
            "--small-fast-model", "tiny", "--api-key", "dummy-key-0001", "--target", "claude")
        _ok("use", "scripted")
        _ok("prompt", "import", "--client", "claude")
        _ok("prompt", "add", "terse", str(tmp_path / "preset.md"))
        _ok("prompt", "use", "terse", "--client", "claude")
        _ok("skill", "install", f"file://{_git_repo(tmp_path / 'repo')}", "--client", "claude")
        _ok("skill", "install", str(_zip(tmp_path)), "--client", "claude")
        done = _run([str(binary), "-p", "say hi"], fake_home, project)
        assert done.returncode == 0, done.stderr[-2000:]
        sent = _sent(upstream, "/messages")

    assert "MARK-MEMORY-PRESET: answer tersely." in sent
    assert "the user's own memory" not in sent
    # the skill list Claude Code puts in its request names both, with their descriptions
    assert "- from-git: MARK-GIT-SKILL when asked" in sent
    assert "- from-zip: MARK-ZIP-SKILL when asked" in sent

    _ok("undo")  # the preset switch
    assert claude_md.read_bytes() == b"the user's own memory\n"


def test_codex_and_opencode_send_the_preset_and_the_skill(fake_home: Path, tmp_path: Path) -> None:
    codex, opencode = codex_binary(CODEX_NEW_VERSION), opencode_binary()
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "preset.md").write_text("MARK-AGENTS-PRESET: be brief.\n")
    _ok("prompt", "add", "brief", str(tmp_path / "preset.md"))
    _ok("prompt", "use", "brief", "--client", "codex", "--client", "opencode")
    _ok("skill", "install", str(_skill(tmp_path / "src" / "both", "both-clients", "MARK-BOTH-SKILL")),
        "--client", "codex", "--client", "opencode")
    with scripted_upstream() as upstream:
        (fake_home / ".codex" / "config.toml").write_text(
            f'model = "tiny"\nmodel_provider = "scripted"\n[model_providers.scripted]\nname = "scripted"\n'
            f'base_url = "{upstream.url}/v1"\nwire_api = "responses"\nenv_key = "SCRIPTED_KEY"\n')
        done = _run([str(codex), "exec", "--skip-git-repo-check", "say hi"], fake_home, project,
                    SCRIPTED_KEY="dummy")
        assert done.returncode == 0, done.stderr[-2000:]
        codex_sent = _sent(upstream, "/responses")
        (fake_home / ".config" / "opencode" / "opencode.json").write_text(json.dumps({
            "model": "scripted/tiny",
            "provider": {"scripted": {"npm": "@ai-sdk/openai-compatible", "name": "scripted",
                                      "options": {"baseURL": f"{upstream.url}/v1", "apiKey": "dummy"},
                                      "models": {"tiny": {"name": "tiny"}}}}}))
        done = _run([str(opencode), "run", "say hi"], fake_home, project)
        assert done.returncode == 0, done.stderr[-2000:]
        opencode_sent = _sent(upstream, "/chat/completions")

    for sent in (codex_sent, opencode_sent):
        assert "MARK-AGENTS-PRESET: be brief." in sent
        assert "MARK-BOTH-SKILL when asked" in sent
    _ok("undo")
    assert not (fake_home / ".codex" / "AGENTS.md").exists()
    assert not (fake_home / ".config" / "opencode" / "AGENTS.md").exists()
