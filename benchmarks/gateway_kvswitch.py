"""Setting up the KV Switch gateway for ``benchmarks/gateway.py`` the way a user would, in a throwaway HOME.

With ``kvswitch gateway run`` present: one profile pointed at the scripted upstream (``--via-gateway``,
``--protocol openai_chat`` for the bridge), routed for Claude Code with ``kvswitch use``, and the local
token the gateway issued. Without it (an older checkout): ``kvswitch record``, the gateway's
pass-through mode, which also stores a masked capture of every request.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


@dataclass
class GatewaySetup:
    argv: list[str]
    port: int
    version: str
    messages_path: str
    headers: dict[str, str] = field(default_factory=dict)
    mode: str = "gateway run"


def _kvswitch(env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kvswitch", *args], env=env, input=stdin, text=True,
                          capture_output=True, timeout=120, check=False)


def _checked(env: dict[str, str], *args: str, stdin: str | None = None) -> str:
    done = _kvswitch(env, *args, stdin=stdin)
    if done.returncode != 0:
        raise RuntimeError(f"kvswitch {' '.join(args[:2])}: exit {done.returncode}: "
                           f"{(done.stderr or done.stdout).strip()[:300]}")
    return done.stdout


def version(env: dict[str, str]) -> str:
    done = _kvswitch(env, "--version")
    text = (done.stdout or done.stderr).strip().split()
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, timeout=30, check=False).stdout.strip()
    return (text[-1] if text else "?") + (f" ({commit})" if commit else "")


def setup_gateway(home: str, env: dict[str, str], upstream_port: int, protocol: str, upstream_key: str,
                  port: int) -> GatewaySetup:
    upstream = f"http://127.0.0.1:{upstream_port}"
    if _kvswitch(env, "gateway", "run", "--help").returncode != 0:
        if protocol != "anthropic":
            raise RuntimeError("no `kvswitch gateway run` in this checkout, so no bridge to measure")
        return GatewaySetup([sys.executable, "-m", "kvswitch", "record", "--listen", f"127.0.0.1:{port}",
                             "--upstream", upstream, "--captures", str(Path(home) / "captures")],
                            port, version(env), "/v1/messages", {"x-api-key": upstream_key},
                            mode="record")
    name = "bench-chat" if protocol == "openai_chat" else "bench"
    flags = ["profile", "add", name, "--kind", "custom", "--base-url", upstream, "--api-key-stdin",
             "--model", "bench-model", "--via-gateway"]
    if protocol != "anthropic":
        flags += ["--protocol", protocol]
    _checked(env, *flags, stdin=upstream_key + "\n")
    _checked(env, "use", name)
    # the token the gateway issues on first use, read as the client writer reads it
    token = subprocess.run(
        [sys.executable, "-c", "from kvswitch.core.gateway_config import ensure_token; "
         "from kvswitch.core.paths import AppPaths; print(ensure_token(AppPaths.default()))"],
        env=env, text=True, capture_output=True, timeout=60, check=True).stdout.strip()
    return GatewaySetup([sys.executable, "-m", "kvswitch", "gateway", "run", "--listen", f"127.0.0.1:{port}"],
                        port, version(env), "/claude/v1/messages",
                        {"x-api-key": token, "Authorization": f"Bearer {token}"})
