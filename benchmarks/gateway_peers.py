"""Starting and stopping the proxies that ``benchmarks/gateway.py`` puts between client and upstream.

Each proxy runs in a throwaway HOME with a config that points it at the scripted upstream, is waited
for until it answers, and is stopped by its own process id (its whole process tree). The peers come
from ``scripts/install_bench_peers.sh`` (cached under ``~/.cache/kvswitch/peers``); a peer that does
not install or start is skipped with one line saying why.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent
LOCAL_KEY = "sk-bench-local-0123456789"  # what the load generator presents to a proxy
UPSTREAM_KEY = "sk-bench-upstream-9876543210"  # what a proxy must present to the upstream


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Proxy:
    """One running proxy: where to send requests and which process tree to measure."""

    name: str
    version: str
    port: int
    upstream_protocol: str  # "anthropic" (pass-through) or "openai_chat" (the proxy converts)
    headers: dict[str, str]
    process: subprocess.Popen[bytes] | None = None
    home: tempfile.TemporaryDirectory[str] | None = None
    messages_path: str = "/v1/messages"
    log: Path | None = None
    extra: dict[str, str] = field(default_factory=dict)

    def tree(self) -> list[psutil.Process]:
        if self.process is None:
            return []
        try:
            root = psutil.Process(self.process.pid)
            return [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def rss(self) -> int:
        total = 0
        for proc in self.tree():
            with contextlib.suppress(psutil.NoSuchProcess):
                total += proc.memory_info().rss
        return total

    def cpu_seconds(self) -> float:
        """User + system CPU time of the process tree so far (children that ended are not counted)."""
        total = 0.0
        for proc in self.tree():
            try:
                times = proc.cpu_times()
                total += times.user + times.system
            except psutil.NoSuchProcess:
                pass
        return total

    def stop(self) -> None:
        procs = self.tree()
        for proc in reversed(procs):
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.terminate()
        _, alive = psutil.wait_procs(procs, timeout=5)
        for proc in alive:
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()
        if self.process is not None:
            self.process.wait(timeout=5)
        if self.home is not None:
            self.home.cleanup()


def wait_listening(proxy: Proxy, timeout: float) -> str | None:
    """``None`` once the proxy accepts connections, else why not."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proxy.process is not None and proxy.process.poll() is not None:
            tail = proxy.log.read_text(errors="replace")[-400:] if proxy.log else ""
            return f"exited with {proxy.process.returncode}: {tail.strip()}"
        try:
            with socket.create_connection(("127.0.0.1", proxy.port), timeout=0.5):
                return None
        except OSError:
            time.sleep(0.1)
    return f"not listening after {timeout:.0f} s"


def _spawn(proxy: Proxy, argv: list[str], env: dict[str, str], timeout: float) -> Proxy | str:
    assert proxy.home is not None
    proxy.log = Path(proxy.home.name) / "proxy.log"
    with open(proxy.log, "wb") as log:
        proxy.process = subprocess.Popen(argv, cwd=proxy.home.name, env=env, stdout=log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    why = wait_listening(proxy, timeout)
    if why is not None:
        proxy.stop()
        return f"{proxy.name}: {why}"
    return proxy


def _base_env(home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "KVSWITCH_"))}
    env["HOME"] = home
    return env


def peer_paths() -> dict[str, str]:
    """What ``install_bench_peers.sh`` reports: peer name → entry point, or ``skip`` → reasons."""
    script = REPO / "scripts" / "install_bench_peers.sh"
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=1800, check=False)
    found: dict[str, str] = {}
    for line in done.stdout.splitlines():
        name, _, rest = line.partition(" ")
        if name == "skip":
            found.setdefault("skip", "")
            found["skip"] += line + "\n"
        elif rest:
            found[name] = rest
    return found


def start_ccr(cli_js: str, upstream_port: int) -> Proxy | str:
    """claude-code-router 2.x: Anthropic Messages in, chat completions out (it always converts)."""
    version = json.loads((Path(cli_js).parent.parent / "package.json").read_text())["version"]
    node = shutil.which("node")
    if node is None:
        return "ccr: node is missing"
    proxy = Proxy("claude-code-router", version, free_port(), "openai_chat",
                  {"x-api-key": LOCAL_KEY}, home=tempfile.TemporaryDirectory(prefix="bench-ccr-"))
    assert proxy.home is not None
    conf = Path(proxy.home.name) / ".claude-code-router"
    conf.mkdir()
    (conf / "config.json").write_text(json.dumps({
        "LOG": False, "HOST": "127.0.0.1", "PORT": proxy.port, "APIKEY": LOCAL_KEY,
        "NON_INTERACTIVE_MODE": True,
        "Providers": [{"name": "bench", "api_key": UPSTREAM_KEY, "models": ["bench-model"],
                       "api_base_url": f"http://127.0.0.1:{upstream_port}/v1/chat/completions"}],
        "Router": {"default": "bench,bench-model"},
    }))
    return _spawn(proxy, [node, cli_js, "start"], _base_env(proxy.home.name), 60)


def start_litellm(binary: str, upstream_port: int) -> Proxy | str:
    """LiteLLM proxy: its ``/v1/messages`` to an ``anthropic/`` model on the upstream (pass-through)."""
    venv_python = str(Path(binary).parent / "python")
    query = "import importlib.metadata as m; print(m.version('litellm'))"
    version = subprocess.run([venv_python, "-c", query], capture_output=True, text=True, timeout=60,
                             check=False).stdout.strip()
    proxy = Proxy("LiteLLM", version or "?", free_port(), "anthropic",
                  {"Authorization": f"Bearer {LOCAL_KEY}"},
                  home=tempfile.TemporaryDirectory(prefix="bench-litellm-"))
    assert proxy.home is not None
    config = Path(proxy.home.name) / "config.yaml"
    # JSON is YAML: no YAML writer needed
    config.write_text(json.dumps({
        "model_list": [{"model_name": "claude-bench", "litellm_params": {
            "model": "anthropic/claude-bench", "api_base": f"http://127.0.0.1:{upstream_port}",
            "api_key": UPSTREAM_KEY}}],
        "general_settings": {"master_key": LOCAL_KEY},
        "litellm_settings": {"telemetry": False, "set_verbose": False},
    }))
    env = _base_env(proxy.home.name)
    # no downloads at start (the cost map lives on GitHub) and no telemetry: loopback only
    env.update({"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOG": "ERROR",
                "LITELLM_TELEMETRY": "False", "NO_PROXY": "*"})
    proxy.extra["model"] = "claude-bench"
    started = _spawn(proxy, [binary, "--config", str(config), "--host", "127.0.0.1", "--port",
                             str(proxy.port), "--num_workers", "1"], env, 180)
    return started


def start_kvswitch(upstream_port: int, protocol: str, other_profiles: int = 0, *,
                   without_record: bool = False, kind: str = "custom") -> Proxy | str:
    """``kvswitch gateway run`` in a throwaway HOME with one profile of ``kind`` pointed at the upstream;
    ``without_record``: with the live cache record switched off (``benchmarks/norecord``)."""
    from gateway_kvswitch import setup_gateway  # benchmarks/, next to this file

    label = "KV Switch gateway" + ("" if protocol == "anthropic" else " (bridge)")
    home = tempfile.TemporaryDirectory(prefix="bench-kvswitch-")
    env = _base_env(home.name)
    env["PYTHONPATH"] = str(REPO / "app")
    if without_record:
        label += " (no record)"
        env["PYTHONPATH"] = str(REPO / "benchmarks" / "norecord") + os.pathsep + env["PYTHONPATH"]
    try:
        setup = setup_gateway(home.name, env, upstream_port, protocol, UPSTREAM_KEY, free_port(),
                              other_profiles, kind)
    except (RuntimeError, subprocess.SubprocessError, OSError) as error:
        home.cleanup()
        return f"{label}: {error}"
    if setup.mode != "gateway run":
        label = f"KV Switch {setup.mode}"
    proxy = Proxy(label, setup.version, setup.port, protocol, setup.headers, home=home,
                  messages_path=setup.messages_path)
    return _spawn(proxy, setup.argv, env, 60)


def python_version() -> str:
    return sys.version.split()[0]
