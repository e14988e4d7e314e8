"""The real Claude Code 2.1.332, Codex 0.171 and OpenCode 1.18.33 against a real llama-server b11434, in
this test's HOME (a KV Switch profile applied to all three, as a user does): what ``kvswitch sessions``
reads from each client's own files equals, session by session, what the server's ``/metrics`` counted
for that session's runs; ``ccusage session --json --offline`` (18.0.11) is compared on the Claude side;
and ``kvswitch session resume ID --run`` resumes the real Claude Code session (its next request is
written under the same session id).

The runs are those of ``scripts/capture_sessions.py`` (the fixtures' capture), without the idle run.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections import defaultdict
from types import ModuleType
from typing import Any

import pytest

from kvswitch.cli import main
from kvswitch.core.paths import AppPaths
from kvswitch.sessions import ClientHomes, index_sessions, list_sessions
from support.claude import claude_binary
from support.clients import codex_binary, opencode_binary
from support.llama import CACHE, REPO, llama_server_binary
from support.require import require_binary

pytestmark = pytest.mark.real_server


def _capture() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "capture_sessions", REPO / "scripts" / "capture_sessions.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    capture = _capture()
    root = tmp_path_factory.mktemp("sessions-e2e")
    home, project = root / "home", root / "project"
    home.mkdir()
    binaries = {"claude": claude_binary(), "codex": codex_binary("0.171.0"), "opencode": opencode_binary()}
    server = llama_server_binary()
    with capture.start_server(server, root / "server") as url:
        capture.apply_profile(home, url)
        runs = capture.run_all(binaries, home, project, url)
        failed = [(run.run.client, run.run.label, run.stderr_tail) for run in runs if run.returncode]
        assert not failed, failed
        paths = AppPaths.default(root / "kvswitch")
        env = capture.client_env(home)
        report = index_sessions(paths, ClientHomes.from_env(env))
        yield {
            "capture": capture,
            "home": home,
            "project": project,
            "runs": runs,
            "paths": paths,
            "env": env,
            "report": report,
            "url": url,
            "binaries": binaries,
        }


def test_each_session_has_the_servers_own_numbers(captured: dict[str, Any]) -> None:
    assert not captured["report"].notes, captured["report"].notes
    server: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for run in captured["runs"]:
        totals = server[run.session]
        totals[0] += run.new
        totals[1] += run.cached
        totals[2] += run.output
    found = {item.session_id: item for item in list_sessions(captured["paths"])}
    assert {found[session].client for session in server} == {"claude", "codex", "opencode"}
    for session, (new, cached, output) in server.items():
        item = found[session]
        assert (item.fresh + item.cache_write_5m + item.cache_write_1h, item.cache_read, item.output) == (
            new,
            cached,
            output,
        ), (item.client, session)


def test_ccusage_agrees_on_the_claude_side(captured: dict[str, Any]) -> None:
    ccusage = require_binary(
        "ccusage",
        "KVSWITCH_CCUSAGE",
        CACHE / "ccusage" / "18.0.11" / "node_modules" / "ccusage" / "dist" / "index.js",
        "install it with scripts/install_ccusage.sh, which needs npm",
    )
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(captured["home"]),
        "CLAUDE_CONFIG_DIR": str(captured["home"] / ".claude"),
    }
    done = subprocess.run(
        [str(ccusage), "session", "--json", "--offline"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found = json.loads(done.stdout)
    theirs = found.get("sessions", []) if isinstance(found, dict) else found
    mine = [item for item in list_sessions(captured["paths"]) if item.client == "claude"]
    server_prompt = sum(run.new + run.cached for run in captured["runs"] if run.run.client == "claude")
    assert sum(item.prompt for item in mine) == server_prompt  # KV Switch: the server's own numbers
    # ccusage 18.0.11 counts only assistant lines with usage; Claude Code 2.1.332 writes none for an empty
    # answer (every answer here), so it finds no session where the server processed every request
    # (measured: an empty list); where it finds one, it can only have counted less than the server
    counted = sum(entry.get("inputTokens", 0) + entry.get("cacheReadTokens", 0)
                  + entry.get("cacheCreationTokens", 0) for entry in theirs)
    assert counted < server_prompt, (counted, server_prompt)


def test_session_resume_run_resumes_the_real_claude_session(
    captured: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    capture = captured["capture"]
    for name, value in captured["env"].items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("KVSWITCH_CLAUDE_BIN", str(captured["binaries"]["claude"]))
    transcript = next((captured["home"] / ".claude" / "projects").rglob(f"{capture.SESSION_B}.jsonl"))
    before = transcript.read_text(encoding="utf-8").count('"type":"api-request"')
    config = ["--config-dir", str(captured["paths"].config_dir)]
    assert main([*config, "session", "resume", capture.SESSION_B, "--run", "--", "-p", "and now?"]) == 0
    after = transcript.read_text(encoding="utf-8")
    assert after.count('"type":"api-request"') > before
    assert f'"sessionId":"{capture.SESSION_B}"' in after.splitlines()[-1]
