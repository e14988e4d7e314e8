"""The KV Switch gateway for ``benchmarks/gateway.py``, set up as a user would have it, in a temp HOME.

With ``kvswitch gateway run`` present: one profile pointed at the scripted upstream (gateway mode,
protocol ``openai_chat`` for the bridge), Claude Code routed to it, and the local token the gateway
issued; requests go to ``/claude/v1/messages`` as Claude Code's would. Without it (an older
checkout): ``kvswitch record``, the gateway's pass-through mode, which also stores a masked capture of
every request.
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


def version(env: dict[str, str]) -> str:
    done = _kvswitch(env, "--version")
    text = (done.stdout or done.stderr).strip().split()
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, timeout=30, check=False).stdout.strip()
    return (text[-1] if text else "?") + (f" ({commit})" if commit else "")


def setup_gateway(home: str, env: dict[str, str], upstream_port: int, protocol: str, upstream_key: str,
                  port: int, other_profiles: int = 0, kind: str = "custom") -> GatewaySetup:
    """``other_profiles``: profiles besides the routed one, as a user who switches has them; ``kind``: the
    routed profile's (a local kind adds the gateway's per-request work for local servers, such as its
    ``/metrics`` reading for answers without counts)."""
    upstream = f"http://127.0.0.1:{upstream_port}"
    if _kvswitch(env, "gateway", "run", "--help").returncode != 0:
        if protocol != "anthropic":
            raise RuntimeError("no `kvswitch gateway run` in this checkout, so no bridge to measure")
        return GatewaySetup([sys.executable, "-m", "kvswitch", "record", "--listen", f"127.0.0.1:{port}",
                             "--upstream", upstream, "--captures", str(Path(home) / "captures")],
                            port, version(env), "/v1/messages", {"x-api-key": upstream_key},
                            mode="record")
    # the profile as `profile add --via-gateway [--protocol P]` stores it (and the user's other ones),
    # and `kvswitch use` routing Claude Code to it; through the library, so the benchmark does not
    # depend on those flags' spelling
    script = (
        "import sys\n"
        "from kvswitch.core.gateway_config import ensure_token, route_clients\n"
        "from kvswitch.core.models import Profile\n"
        "from kvswitch.core.paths import AppPaths\n"
        "from kvswitch.core.store import ProfileStore\n"
        "paths = AppPaths.default()\n"
        "protocol = None if sys.argv[3] == 'anthropic' else sys.argv[3]\n"
        "import os\n"
        "log = None\n"
        "if sys.argv[5] == 'llama.cpp':  # a local profile follows its server's log (the server reason)\n"
        "    log = {'kind': 'file', 'path': os.path.join(os.environ['HOME'], 'llama-server.log')}\n"
        "    open(log['path'], 'a').close()\n"
        "ProfileStore(paths).add(Profile(name='bench', kind=sys.argv[5], base_url=sys.argv[1],\n"
        "    api_key=sys.stdin.read().strip(), key_env=sys.argv[2], model='bench-model',\n"
        "    via_gateway=True, protocol=protocol, log=log))\n"
        "for i in range(int(sys.argv[4])):\n"
        "    ProfileStore(paths).add(Profile(name=f'other-{i}', kind='custom',\n"
        "        base_url=f'http://127.0.0.1:{9000 + i}', api_key='sk-other-0123456789',\n"
        "        model=f'model-{i}', via_gateway=True))\n"
        "route_clients(paths, 'bench', ['claude'])\n"
        "print(ensure_token(paths))\n"
    )
    key_env = "ANTHROPIC_API_KEY"
    argv = [sys.executable, "-c", script, upstream, key_env, protocol, str(other_profiles), kind]
    done = subprocess.run(argv,
                          env=env, text=True,
                          input=upstream_key, capture_output=True, timeout=60, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"profile set-up failed: {done.stderr.strip()[-300:]}")
    token = done.stdout.strip().splitlines()[-1]
    return GatewaySetup([sys.executable, "-m", "kvswitch", "gateway", "run", "--listen", f"127.0.0.1:{port}"],
                        port, version(env), "/claude/v1/messages",
                        {"x-api-key": token, "Authorization": f"Bearer {token}"})
