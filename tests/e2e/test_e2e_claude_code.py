"""A KV Switch local profile applied with the real CLI, then real `claude -p` twice through the
recorder to a real llama-server: the log engine must see the second run reuse >= 99% of its prompt."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from kvswitch.cli import main
from kvswitch.core.paths import claude_config_dir
from kvswitch.logs.scan import scan_file
from kvswitch.verify.diagnose import diagnose_requests
from kvswitch.verify.recorder import Capture, Recorder
from support.claude import claude_binary, eos_token_id
from support.llama import llama_server

pytestmark = pytest.mark.real_server


def _run_claude(binary: Path, home: Path, project: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8"}
    return subprocess.run(
        [str(binary), "-p", "say hi"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_second_claude_run_reuses_the_prompt(fake_home: Path, tmp_path: Path) -> None:
    binary = claude_binary()
    project = tmp_path / "project"
    project.mkdir()
    captures: list[Capture] = []
    # random weights never pick <|im_end|> on their own; a server-side bias ends every answer at once,
    # so each run is one short turn instead of thousands of garbage tokens
    with (
        llama_server(tmp_path / "server", "-l", f"{eos_token_id()}+100") as server,
        Recorder(server.url, tmp_path / "captures", on_capture=captures.append) as recorder,
    ):
        assert (
            main(
                [
                    "profile",
                    "add",
                    "local",
                    "--kind",
                    "llama.cpp",
                    "--base-url",
                    recorder.url,
                    "--model",
                    "tiny",
                    "--small-fast-model",
                    "tiny",
                    "--api-key",
                    "local-dummy-key-0001",
                    "--target",
                    "claude",
                    "--log-file",
                    str(server.log_file),
                ]
            )
            == 0
        )
        assert main(["use", "local"]) == 0
        settings = json.loads((claude_config_dir() / "settings.json").read_text())
        assert settings["env"]["ANTHROPIC_BASE_URL"] == recorder.url
        assert settings["env"]["CLAUDE_CODE_ATTRIBUTION_HEADER"] == "0"

        first = _run_claude(binary, fake_home, project)
        assert first.returncode == 0, first.stderr[-2000:]
        first_events = list(scan_file(server.log_file, "llama.cpp"))
        first_posts = [c for c in captures if c.method == "POST" and c.path.startswith("/v1/messages")]
        second = _run_claude(binary, fake_home, project)
        assert second.returncode == 0, second.stderr[-2000:]
        events = list(scan_file(server.log_file, "llama.cpp"))
        posts = [c for c in captures if c.method == "POST" and c.path.startswith("/v1/messages")]

    assert first_posts, "Claude Code sent nothing through the recorder"
    second_run = events[len(first_events) :]
    assert second_run, "the log engine saw no request from the second run"
    main_request = max(second_run, key=lambda e: e.prompt_tokens)
    assert main_request.prompt_tokens > 10000  # Claude Code's real prompt
    assert main_request.reuse_ratio >= 0.99, [e.to_json() for e in second_run]
    assert main_request.verdict == "hit"
    # the recorder saw the same prompt twice (no billing header), and the server said so too
    again = posts[len(first_posts)]
    diagnosis = diagnose_requests(first_posts[0].body, again.body)
    assert diagnosis.identical, diagnosis.describe()
    assert not any("x-anthropic-billing-header" in json.dumps(c.body) for c in posts)
    assert again.cache is not None
    assert again.cache.cached is not None
    assert again.cache.prompt is not None
    assert again.cache.cached >= 0.99 * again.cache.prompt
    assert "local-dummy-key-0001" not in "".join(c.file.read_text() for c in posts)
