"""Models in Codex's own model choice, measured with the real Codex 0.169.0 and 0.171.0: two gateway
profiles' models written as a ``model_catalog_json`` catalog, listed by the real ``codex debug models``
and the real TUI's ``/model`` under ids and names that say profile and model, and ``codex exec -m
kvs-b-5f34fe16--tiny-b`` through a real ``kvswitch gateway run`` reaching the second real llama-server b11434
with its real model id, while the routing state still names the first profile and no client file is
rewritten. The server's own counters say where the prompt went; the usage row says which profile
served it; a plain ``codex exec`` still follows the route (with Codex's own, longer prompt); ``undo``
takes the catalog back."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kvswitch.cli import main
from kvswitch.core.gateway_config import read_routes, usage_db
from kvswitch.core.paths import AppPaths
from kvswitch.usage.queries import query
from support.claude import eos_token_id
from support.clients import CODEX_VERSIONS, codex_binary
from support.gateway import gateway_process
from support.llama import RunningServer, llama_server
from support.net import free_port

pytestmark = pytest.mark.real_server


def _prompt_tokens(server: RunningServer) -> int:
    text = httpx.get(f"{server.url}/metrics", timeout=10).text
    found = re.search(r"^llamacpp:prompt_tokens_total (\S+)$", text, re.M)
    assert found is not None, text[:500]
    return int(float(found.group(1)))


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningServer, RunningServer]]:
    bias = ("-l", f"{eos_token_id()}+100", "--cache-ram", "0")
    with (
        llama_server(tmp_path_factory.mktemp("one"), *bias) as one,
        llama_server(tmp_path_factory.mktemp("two"), *bias) as two,
    ):
        yield one, two


def _add(name: str, server: RunningServer, model: str) -> None:
    assert main(["profile", "add", name, "--kind", "llama.cpp", "--base-url", server.url, "--model", model,
                 "--target", "codex", "--via-gateway", "--context-window", "32768"]) == 0


def _codex(argv: list[str], home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8"}
    return subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=600)


@pytest.mark.parametrize("codex_version", CODEX_VERSIONS)
def test_codex_lists_and_picks_the_second_profile_by_model_id(
    servers: tuple[RunningServer, RunningServer], fake_home: Path, tmp_path: Path, codex_version: str
) -> None:
    binary = codex_binary(codex_version)
    one, two = servers
    paths = AppPaths.default()
    project = tmp_path / "project"
    project.mkdir()
    with gateway_process(fake_home, free_port(), tmp_path / "gateway.log"):
        _add("A", one, "tiny")
        _add("B", two, "tiny-b")
        assert main(["use", "A"]) == 0
        config_file = fake_home / ".codex" / "config.toml"
        catalog_file = fake_home / ".codex" / "kvswitch-models.json"
        config, catalog = config_file.read_bytes(), catalog_file.read_bytes()
        assert read_routes(paths).clients == {"codex": "A"}

        listed = _codex([str(binary), "debug", "models"], fake_home, project)
        assert listed.returncode == 0, listed.stderr[-2000:]
        models = json.loads(listed.stdout)["models"]
        assert [(m["slug"], m["display_name"]) for m in models] == [
            ("kvs-a-af3c7293--tiny", "A: tiny"), ("kvs-b-5f34fe16--tiny-b", "B: tiny-b")]
        assert all(m["visibility"] == "list" and m["context_window"] == 32768 for m in models)

        one_before, two_before = _prompt_tokens(one), _prompt_tokens(two)
        done = _codex([str(binary), "exec", "--skip-git-repo-check", "-m", "kvs-b-5f34fe16--tiny-b",
                       "say hi"], fake_home, project)
        assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]

        assert config_file.read_bytes() == config, "choosing a model rewrote no client file"
        assert catalog_file.read_bytes() == catalog
        assert read_routes(paths).clients == {"codex": "A"}, "nor the routing state"
        rows = query(usage_db(paths))
        assert rows, "the gateway recorded the request"
        assert {(r.profile, r.model) for r in rows} == {("B", "tiny-b")}, "the profile that served it"
        main_turn = max(rows, key=lambda r: r.input_tokens or 0)
        assert (main_turn.input_tokens or 0) > 1000  # Codex's tools and instructions reached server two
        new = (main_turn.input_tokens or 0) - (main_turn.cached_tokens or 0)
        assert _prompt_tokens(two) - two_before >= new
        assert _prompt_tokens(one) == one_before, "nothing went to the first profile's server"

        # without -m: the route's profile, and Codex's own prompt (its fallback for a model it does not
        # know), where a catalog record carries KV Switch's short instructions
        plain = _codex([str(binary), "exec", "--skip-git-repo-check", "say hi"], fake_home, project)
        assert plain.returncode == 0, plain.stderr[-2000:] + plain.stdout[-2000:]
        routed = [r for r in query(usage_db(paths)) if r.profile == "A"]
        assert [r.model for r in routed] == ["tiny"]
        assert (routed[0].input_tokens or 0) > 10_000 > (main_turn.input_tokens or 0)

    assert main(["undo"]) == 0
    assert not catalog_file.exists(), "undo takes the catalog back"


def _screen_until(fd: int, wanted: bytes, seen: bytearray, deadline: float) -> bool:
    """Read the TUI's output (escape sequences dropped) until ``wanted`` shows or the deadline passes;
    a cursor-position query is answered, as a terminal would."""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return False
        if b"\x1b[6n" in chunk:
            os.write(fd, b"\x1b[1;1R")
        seen += re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b" ", chunk)
        if wanted in re.sub(rb"\s+", b" ", bytes(seen)):
            return True
    return False


@pytest.mark.parametrize("codex_version", CODEX_VERSIONS)
def test_the_tui_model_command_shows_the_gateway_profiles_models(fake_home: Path, tmp_path: Path,
                                                                 codex_version: str) -> None:
    binary = codex_binary(codex_version)
    project = tmp_path / "project"
    project.mkdir()
    for name, model in (("A", "tiny"), ("B", "tiny-b")):
        assert main(["profile", "add", name, "--kind", "llama.cpp", "--base-url", "http://127.0.0.1:9",
                     "--model", model, "--target", "codex", "--via-gateway"]) == 0
    assert main(["use", "A"]) == 0
    trust = f'projects."{project}".trust_level="trusted"'  # no trust question before the composer
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(fake_home), "TERM": "xterm-256color",
           "LANG": "C.UTF-8"}
    pid, fd = pty.fork()
    if pid == 0:  # the child: the real Codex TUI on a pseudo-terminal
        os.chdir(project)
        os.execve(str(binary), [str(binary), "-c", trust], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))  # 40 rows of 120 columns
    seen = bytearray()
    try:
        deadline = time.monotonic() + 120
        # the session header ends start-up (0.171.0 refuses /model before: "Model selection is disabled
        # until startup completes")
        assert _screen_until(fd, b"To get started", seen, deadline), bytes(seen)[-3000:]
        seen.clear()  # the start-up text names /model too: wait for what typing it shows
        os.write(fd, b"/model")  # the composer's command popup, then Enter runs /model
        assert _screen_until(fd, b"choose what model", seen, deadline), bytes(seen)[-3000:]
        seen.clear()
        os.write(fd, b"\r")
        shown = _screen_until(fd, b"2. B: tiny-b", seen, deadline)
        screen = re.sub(rb"\s+", b" ", bytes(seen)).decode("utf-8", "replace")
        assert shown, screen[-3000:]
        assert "1. A: tiny" in screen
        assert "gpt-" not in screen.partition("Select Model")[2], "the bundled OpenAI models are replaced"
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
