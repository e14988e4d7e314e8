"""``opencode.jsonc`` as OpenCode accepts it, edited by ``kvswitch use`` and read back by the real
OpenCode 1.18.33 (``opencode debug config`` prints the configuration it resolved): a ``//`` comment
ended by a bare CR (OpenCode ends it there, measured), and a ``"provider"`` member given twice
(OpenCode keeps the last one; the shadowed one is the user's bytes and stays as it was)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.clients import opencode_binary

BASE = "http://127.0.0.1:9"


def _kvswitch(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "kvswitch", *argv], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def _opencode_config(binary: Path, home: Path, cwd: Path) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local/share"), XDG_STATE_HOME=str(home / ".local/state"),
               XDG_CACHE_HOME=str(home / ".cache"))
    done = subprocess.run([str(binary), "debug", "config"], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.fixture
def jsonc(fake_home: Path) -> Path:
    folder = fake_home / ".config" / "opencode"
    folder.mkdir(parents=True)
    return folder / "opencode.jsonc"


@pytest.mark.parametrize("text", [
    # the comment ends at the bare CR: the member after it is live for OpenCode
    '{\n  // the user\'s note\r  "provider": {"mine": {"npm": "@ai-sdk/openai-compatible",'
    ' "options": {"baseURL": "http://127.0.0.1:7/v1"}}},\n  "share": "disabled"\n}\n',
    # the comment ends at the bare CR, then a block the old scanner read as the comment's rest
    '{\r  // note\r  "share": "disabled", /* a { brace */\r  "provider": {"mine": {"npm": "x"}}\r}\r',
], ids=["cr-then-member", "cr-line-endings"])
def test_a_comment_ended_by_a_bare_cr_stays_readable_to_opencode(
    child_env: dict[str, str], fake_home: Path, jsonc: Path, tmp_path: Path, text: str
) -> None:
    binary = opencode_binary()
    jsonc.write_bytes(text.encode())
    before = _opencode_config(binary, fake_home, tmp_path)
    assert "mine" in before["provider"]  # type: ignore[operator]
    jsonc.write_bytes(text.encode())  # OpenCode adds a "$schema" member to the file it read; start again
    _kvswitch(child_env, "profile", "add", "loc", "--kind", "llama.cpp", "--base-url", BASE, "--model", "qm",
              "--target", "opencode")
    _kvswitch(child_env, "use", "loc")
    after = _opencode_config(binary, fake_home, tmp_path)
    assert after["model"] == "kvswitch/qm"
    providers = after["provider"]
    assert isinstance(providers, dict)
    assert providers["kvswitch"]["options"]["baseURL"] == BASE + "/v1"
    assert "mine" in providers  # the user's provider, after the CR, is still there for OpenCode
    assert after["share"] == "disabled"
    written = jsonc.read_bytes().decode()
    assert "// the user's note\r" in written or "// note\r" in written  # the comment, CR and all


def test_a_shadowed_provider_member_keeps_its_bytes(
    child_env: dict[str, str], fake_home: Path, jsonc: Path, tmp_path: Path
) -> None:
    binary = opencode_binary()
    shadowed = '"provider": {"old": {"npm": "x", "models": {"b": {"name": "b"}}}}'
    jsonc.write_text('{\n  ' + shadowed + ',\n  "provider": {"c": {"npm": "y"}}\n}\n')
    _kvswitch(child_env, "profile", "add", "loc", "--kind", "llama.cpp", "--base-url", BASE, "--model", "qm",
              "--target", "opencode")
    _kvswitch(child_env, "use", "loc")
    written = jsonc.read_text()
    assert shadowed in written  # not re-shaped from the live member's data
    seen = _opencode_config(binary, fake_home, tmp_path)
    assert set(seen["provider"]) == {"c", "kvswitch"}  # type: ignore[arg-type]
    assert seen["model"] == "kvswitch/qm"
    _kvswitch(child_env, "undo")
    assert shadowed in jsonc.read_text()
    assert "kvswitch" not in json.dumps(_opencode_config(binary, fake_home, tmp_path).get("provider"))
