"""The tokens ``kvswitch prompt list`` and ``kvswitch skill list`` show are the real llama-server's.

With a local llama.cpp profile in use, each preset and each skill's listing line is counted by the
server's ``/tokenize``; the number must match what the server itself charges for adding that text to a
request: the difference of its own ``prompt_tokens`` between a chat request with and without it (the
texts here start after a newline, so no token merges across the boundary). With the server gone the
count is ``unknown``.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from kvswitch.cli import main
from support.llama import RunningServer

pytestmark = pytest.mark.real_server

BASE = "You are a coding assistant.\n"
MEMORY = "# House rules\n- Answer in English.\n- Run the tests before you commit.\n- Never push to main.\n"


def _prompt_tokens(server: RunningServer, system: str) -> int:
    answer = httpx.post(f"{server.url}/v1/chat/completions", timeout=60, json={
        "model": "tiny", "max_tokens": 1, "messages": [{"role": "system", "content": system},
                                                       {"role": "user", "content": "hi"}]})
    answer.raise_for_status()
    return int(answer.json()["usage"]["prompt_tokens"])


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert main(list(args)) == 0
    return dict(json.loads(capsys.readouterr().out))


def test_preset_and_skill_tokens_are_the_servers_own(
    real_server: RunningServer, fake_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["profile", "add", "local", "--kind", "llama.cpp", "--base-url", real_server.url,
                 "--model", "tiny", "--target", "claude", "--context-window", "32768"]) == 0
    assert main(["use", "local"]) == 0
    (tmp_path / "rules.md").write_text(MEMORY)
    assert main(["prompt", "add", "rules", str(tmp_path / "rules.md")]) == 0
    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: release-notes\ndescription: Write release notes from the "
                                    "git log since the last tag\n---\nSteps.\n")
    assert main(["skill", "install", str(skill), "--client", "claude"]) == 0
    capsys.readouterr()

    prompts = _json(capsys, "prompt", "list", "--json")
    skills = _json(capsys, "skill", "list", "--json")
    assert str(prompts["counted_by"]).startswith("llama.cpp at http://127.0.0.1:")
    preset_tokens = next(p["tokens"] for p in prompts["presets"] if p["name"] == "rules")  # type: ignore[attr-defined]
    line_tokens = next(s["tokens"] for s in skills["skills"] if s["name"] == "release-notes")  # type: ignore[attr-defined]
    assert isinstance(preset_tokens, int)
    assert isinstance(line_tokens, int)

    without = _prompt_tokens(real_server, BASE)
    with_memory = _prompt_tokens(real_server, BASE + MEMORY)
    with_line = _prompt_tokens(real_server, BASE + "- release-notes: Write release notes from the git log "
                               "since the last tag")
    # measured on b11434 with the tiny model: 77 and 57 tokens, equal to the differences exactly
    assert with_memory - without == preset_tokens
    assert with_line - without == line_tokens

    out = (main(["prompt", "list"]), capsys.readouterr().out)[1]
    assert f"~{preset_tokens:,} tokens (counted by llama.cpp at http://127.0.0.1:" in out


def test_without_a_reachable_local_server_the_cost_is_unknown(
    fake_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["profile", "add", "gone", "--kind", "llama.cpp", "--base-url", "http://127.0.0.1:9",
                 "--model", "tiny", "--target", "claude", "--context-window", "32768"]) == 0
    assert main(["use", "gone"]) == 0
    (tmp_path / "rules.md").write_text(MEMORY)
    assert main(["prompt", "add", "rules", str(tmp_path / "rules.md")]) == 0
    capsys.readouterr()
    listing = _json(capsys, "prompt", "list", "--json")
    assert listing["counted_by"] is None
    assert "did not answer /tokenize" in str(listing["why_unknown"])
    assert all(p["tokens"] is None for p in listing["presets"])  # type: ignore[attr-defined]
