"""Models in Claude Code's own picker, measured with the real components: two gateway profiles' models
written as ``modelPicker`` rows, and ``claude -p --model kvs-b-5f34fe16--tiny-b`` (the real Claude Code
2.1.332)
through a real ``kvswitch gateway run`` reaching the second real llama-server b11434 with its real
model id, while the routing state still names the first profile and no client file is rewritten. The
server's own counters say where the prompt went; the usage row says which profile served it."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import httpx
import pytest

from kvswitch.cli import main
from kvswitch.core.gateway_config import read_routes, usage_db
from kvswitch.core.paths import AppPaths, claude_config_dir
from kvswitch.usage.queries import query
from support.claude import claude_binary, eos_token_id
from support.gateway import gateway_process
from support.llama import RunningServer, llama_server
from support.net import free_port

pytestmark = pytest.mark.real_server


def _prompt_tokens(server: RunningServer) -> int:
    text = httpx.get(f"{server.url}/metrics", timeout=10).text
    found = re.search(r"^llamacpp:prompt_tokens_total (\S+)$", text, re.M)
    assert found is not None, text[:500]
    return int(float(found.group(1)))


def _add(name: str, server: RunningServer, model: str) -> None:
    assert main(["profile", "add", name, "--kind", "llama.cpp", "--base-url", server.url, "--model", model,
                 "--small-fast-model", model, "--target", "claude", "--via-gateway"]) == 0


def test_claude_code_picks_the_second_profile_by_model_id(fake_home: Path, tmp_path: Path) -> None:
    binary = claude_binary()
    paths = AppPaths.default()
    project = tmp_path / "project"
    project.mkdir()
    port = free_port()
    bias = ("-l", f"{eos_token_id()}+100", "--cache-ram", "0")
    with (
        llama_server(tmp_path / "one", *bias) as one,
        llama_server(tmp_path / "two", *bias) as two,
        gateway_process(fake_home, port, tmp_path / "gateway.log"),
    ):
        _add("A", one, "tiny")
        _add("B", two, "tiny-b")
        assert main(["use", "A"]) == 0
        settings_file = claude_config_dir() / "settings.json"
        settings = settings_file.read_bytes()
        picker = json.loads(settings)["modelPicker"]
        assert picker["replaceBuiltInOptions"] is True
        assert [row["model"] for row in picker["options"]] == ["kvs-a-af3c7293--tiny",
                                                               "kvs-b-5f34fe16--tiny-b"]
        assert read_routes(paths).clients == {"claude": "A"}

        one_before, two_before = _prompt_tokens(one), _prompt_tokens(two)
        argv = [str(binary), "-p", "say hi", "--max-turns", "1", "--model", "kvs-b-5f34fe16--tiny-b"]
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(fake_home), "LANG": "C.UTF-8"}
        done = subprocess.run(argv, cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]

        assert settings_file.read_bytes() == settings, "choosing a model rewrote no client file"
        assert read_routes(paths).clients == {"claude": "A"}, "nor the routing state"
        rows = query(usage_db(paths))
        picked = [r for r in rows if r.model == "tiny-b"]
        assert picked, [(r.profile, r.model) for r in rows]
        assert {r.profile for r in picked} == {"B"}, "the usage row names the profile that served it"
        main_turn = max(picked, key=lambda r: r.input_tokens or 0)
        assert (main_turn.input_tokens or 0) > 10000  # Claude Code's real prompt reached server two
        main_new = (main_turn.input_tokens or 0) - (main_turn.cached_tokens or 0)
        assert _prompt_tokens(two) - two_before >= main_new
        assert all(r.profile == "A" for r in rows if r.model == "tiny"), "helper requests follow the route"
        assert _prompt_tokens(one) - one_before < (main_turn.input_tokens or 0), "the main prompt skipped one"
