"""Detection against real processes: stand-ins with real servers' command lines, and an empty machine."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from pathlib import Path

import psutil
import pytest
from platform_helpers import Spawner

from kvswitch.cli import main
from kvswitch.core.models import ProfileKind
from kvswitch.core.paths import AppPaths
from kvswitch.core.store import ProfileStore
from kvswitch.platform.detect import DetectedServer, detect_servers, detect_tools
from kvswitch.platform.procscan import iter_processes
from support.net import free_port
from support.require import not_applicable


def own(*procs: subprocess.Popen[bytes]) -> list:
    """Only the processes this test started (other servers may run on this machine)."""
    return list(iter_processes(pids=[proc.pid for proc in procs]))


def by_kind(servers: list[DetectedServer]) -> dict[ProfileKind, DetectedServer]:
    return {server.kind: server for server in servers}


def test_finds_each_server_from_its_process_and_its_answers(spawn: Spawner, fake_home: Path) -> None:
    (fake_home / ".lmstudio" / "server-logs").mkdir(parents=True)
    ports = {kind: free_port() for kind in ("ollama", "vllm", "sglang", "lmstudio")}
    procs = [
        spawn(["ollama", "serve"], ports["ollama"], {"OLLAMA_HOST": f"127.0.0.1:{ports['ollama']}",
                                                     "OLLAMA_CONTEXT_LENGTH": "16384"}),
        spawn(["python3", "-m", "vllm.entrypoints.openai.api_server",
               "--model", "Qwen/Qwen2.5-Coder-7B-Instruct", "--port", str(ports["vllm"]),
               "--max-model-len", "32768", "--max-num-seqs", "8"], ports["vllm"]),
        spawn(["python3", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B-Instruct",
               "--port", str(ports["sglang"]), "--context-length", "8192"], ports["sglang"]),
        spawn(["/opt/LM Studio/lm-studio", "lmstudio_main.py"], ports["lmstudio"]),
    ]

    servers = by_kind(detect_servers([], processes=own(*procs), unit_dirs=[]))

    assert set(servers) == {ProfileKind.OLLAMA, ProfileKind.VLLM, ProfileKind.SGLANG, ProfileKind.LM_STUDIO}
    ollama = servers[ProfileKind.OLLAMA]
    assert (ollama.base_url, ollama.pid, ollama.version, ollama.model, ollama.context) == (
        f"http://127.0.0.1:{ports['ollama']}", procs[0].pid, "0.34.3", "qwen2.5-coder:7b", 16384)
    assert ollama.answering
    assert ollama.sources == ("process", "port")
    assert ollama.log is None  # `ollama serve` by hand, no systemd unit: its log is its terminal
    vllm = servers[ProfileKind.VLLM]
    assert (vllm.port, vllm.model, vllm.context, vllm.parallel, vllm.version) == (
        ports["vllm"], "Qwen/Qwen2.5-Coder-7B-Instruct", 32768, 8, "0.11.1")
    sglang = servers[ProfileKind.SGLANG]
    assert (sglang.port, sglang.model, sglang.context, sglang.parallel) == (
        ports["sglang"], "meta-llama/Llama-3.1-8B-Instruct", 8192, 16)
    lmstudio = servers[ProfileKind.LM_STUDIO]
    # LM Studio's command line names no port: the listening socket of the process does.
    assert (lmstudio.port, lmstudio.model, lmstudio.context) == (
        ports["lmstudio"], "qwen2.5-7b-instruct", 8192)
    assert lmstudio.log is not None
    assert lmstudio.log.kind == "directory"
    assert lmstudio.log.path == str(fake_home / ".lmstudio" / "server-logs")


def test_lm_studio_port_comes_from_its_helper_process(spawn: Spawner, fake_home: Path) -> None:
    port = free_port()
    app = spawn(["/opt/LM Studio/lm-studio", "lmstudio_app.py"], port)
    helpers = [child.pid for child in psutil.Process(app.pid).children()]
    assert helpers  # the helper listens, the app does not

    [server] = detect_servers([], processes=list(iter_processes(pids=[app.pid, *helpers])), unit_dirs=[])

    assert (server.kind, server.pid, server.port, server.answering) == (
        ProfileKind.LM_STUDIO, app.pid, port, True)


def test_identifies_servers_by_port_alone(spawn: Spawner) -> None:
    """A server in a container or run by another user shows no process, only its answers."""
    ports = {kind: free_port() for kind in ("ollama", "vllm", "sglang", "lmstudio")}
    spawn(["python3", "standin.py", "ollama"], ports["ollama"],
          {"OLLAMA_HOST": f"127.0.0.1:{ports['ollama']}"})
    for kind in ("vllm", "sglang", "lmstudio"):
        spawn(["python3", "standin.py", kind], ports[kind])

    servers = detect_servers(list(ports.values()), processes=[])

    found = {server.kind: server.port for server in servers}
    assert found == {ProfileKind.OLLAMA: ports["ollama"], ProfileKind.VLLM: ports["vllm"],
                     ProfileKind.SGLANG: ports["sglang"], ProfileKind.LM_STUDIO: ports["lmstudio"]}
    assert all(server.pid is None and server.sources == ("port",) for server in servers)


def test_nothing_is_found_on_an_empty_machine(spawn: Spawner, standin_dir: Path) -> None:
    """Look-alikes must not count: a shell naming llama-server, a plain web server, closed ports."""
    web_port, closed_port = free_port(), free_port()
    web = spawn(["python3", "web.py", "--port", str(web_port)], web_port)
    shell = subprocess.Popen(["bash", "-c", "sleep 30 # llama-server --port 8080; ollama serve"])
    module = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "vllm", "serve"])
    try:
        servers = detect_servers([web_port, closed_port], processes=own(web, shell, module), timeout=0.5)
    finally:
        shell.kill()
        module.kill()
        shell.wait()
        module.wait()
    assert servers == []


def test_ollama_log_is_journald_when_systemd_runs_it(spawn: Spawner, tmp_path: Path) -> None:
    if not sys.platform.startswith("linux"):
        not_applicable("journald exists on Linux only")
    (tmp_path / "ollama.service").write_text("[Service]\nExecStart=/usr/local/bin/ollama serve\n")
    port = free_port()
    proc = spawn(["ollama", "serve"], port, {"OLLAMA_HOST": f"127.0.0.1:{port}"})
    [server] = detect_servers([], processes=own(proc), unit_dirs=[tmp_path])
    assert server.log is not None
    assert (server.log.kind, server.log.unit) == ("journald", "ollama")
    profile = server.to_profile()
    assert profile.log == server.log
    assert profile.env["CLAUDE_CODE_ATTRIBUTION_HEADER"] == "0"
    assert profile.kind == ProfileKind.OLLAMA
    assert profile.model == "qwen2.5-coder:7b"


def test_detect_tools_finds_binaries_and_config_dirs(tmp_path: Path, fake_home: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    claude = bin_dir / "claude"
    claude.write_text("#!/bin/sh\n")
    claude.chmod(0o755)
    (fake_home / ".codex").mkdir()
    (fake_home / ".codex" / "config.toml").write_text('model = "gpt-5"\n')
    opencode = bin_dir / "opencode"
    opencode.write_text("#!/bin/sh\n")
    opencode.chmod(0o755)
    env = {"HOME": str(fake_home), "PATH": str(bin_dir)}

    tools = {tool.name: tool for tool in detect_tools(env)}

    assert tools["claude"].binary == claude
    assert tools["claude"].found
    assert not tools["claude"].has_config
    assert tools["codex"].binary is None
    assert tools["codex"].found
    assert tools["codex"].has_config
    assert tools["opencode"].binary == opencode
    assert tools["opencode"].config_file == fake_home / ".config" / "opencode" / "opencode.json"
    assert not tools["opencode"].has_config
    xdg = {tool.name: tool for tool in detect_tools({**env, "XDG_CONFIG_HOME": str(tmp_path / "xdg")})}
    assert xdg["opencode"].config_dir == tmp_path / "xdg" / "opencode"
    empty = {tool.name: tool.found for tool in detect_tools({"HOME": str(tmp_path / "nobody"), "PATH": ""})}
    assert empty == {"claude": False, "codex": False, "opencode": False}


def test_detect_command_json(spawn: Spawner, capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    spawn(["python3", "standin.py", "vllm", "--model", "Qwen/Qwen3-8B"], port)
    closed = free_port()

    assert main(["detect", "--json", "--no-processes", "--port", str(port), "--port", str(closed)]) == 0

    document = json.loads(capsys.readouterr().out)
    assert [tool["name"] for tool in document["tools"]] == ["claude", "codex", "opencode"]
    [server] = document["servers"]
    assert (server["kind"], server["base_url"], server["models"]) == (
        "vllm", f"http://127.0.0.1:{port}", ["Qwen/Qwen3-8B"])


def test_detect_command_text_when_nothing_runs(capsys: pytest.CaptureFixture[str]) -> None:
    closed = free_port()
    assert main(["detect", "--no-processes", "--port", str(closed)]) == 0
    out = capsys.readouterr().out
    assert f"none running (probed ports {closed}" in out
    assert "Claude Code" in out
    assert "not found" in out


def test_a_port_that_never_answers_is_asked_once() -> None:
    """Something accepts connections but never speaks HTTP: nothing is reported, and after one timeout
    the port is given up (one connection to see it is open, one HTTP attempt), not once per route."""
    connections: list[socket.socket] = []
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.settimeout(0.1)
        port = listener.getsockname()[1]
        stop = threading.Event()

        def accept() -> None:
            while not stop.is_set():
                try:
                    connections.append(listener.accept()[0])
                except OSError:
                    continue

        acceptor = threading.Thread(target=accept)
        acceptor.start()
        try:
            assert detect_servers([port], processes=[], timeout=0.3) == []
        finally:
            stop.set()
            acceptor.join()
            for conn in connections:
                conn.close()
    assert len(connections) == 2


def test_detect_add_creates_profiles_once(spawn: Spawner, capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    spawn(["python3", "standin.py", "sglang", "--model-path", "Qwen/Qwen3-8B"], port)
    args = ["detect", "--add", "--no-processes", "--port", str(port)]

    assert main(args) == 0
    assert f"added profiles: SGLang :{port}" in capsys.readouterr().out
    profile = ProfileStore(AppPaths.default()).get(f"SGLang :{port}")
    assert (profile.kind, profile.base_url, profile.model) == (
        ProfileKind.SGLANG, f"http://127.0.0.1:{port}", "Qwen/Qwen3-8B")
    assert profile.env["CLAUDE_CODE_ATTRIBUTION_HEADER"] == "0"
    assert main(args) == 0
    assert "no new profiles added" in capsys.readouterr().out
