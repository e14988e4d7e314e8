"""``kvswitch mcp`` on real files in the temporary HOME: imports (each client, CC Switch's database, pasted
JSON and TOML with per-name choices), ownership (a hand-made server is never overwritten without
--replace, and comes back when KV Switch lets go), formats kept (TOML comments, JSONC), secrets masked
and 0600. The real clients reading what is written are in tests/e2e/test_e2e_mcp.py."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tomllib
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cc-switch-3.20"


def kvswitch(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(APP)}
    return subprocess.run(
        [sys.executable, "-m", "kvswitch", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        input=stdin,
    )


def ok(*args: str, stdin: str | None = None) -> str:
    done = kvswitch(*args, stdin=stdin)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def listed() -> dict[str, dict[str, object]]:
    return {row["name"]: row for row in json.loads(ok("mcp", "list", "--json"))}


FIVE = {
    "mcpServers": {
        "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]},
        "memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
        "docs": {
            "type": "http",
            "url": "https://example.net/mcp",
            "headers": {"Authorization": "Bearer tok-0123456789"},
        },
        "events": {"type": "sse", "url": "https://example.net/sse"},
        "git": {"command": "uvx", "args": ["mcp-server-git"], "env": {"GIT_TOKEN": "git-secret-0123"}},
    }
}
THREE = """# pasted from a Codex config
[mcp_servers.fetch]
command = "uvx"
args = ["mcp-server-fetch", "--ignore-robots-txt"]

[mcp_servers.time]
command = "uvx"
args = ["mcp-server-time"]

[mcp_servers.remote]
url = "https://example.org/mcp"
http_headers = { "X-Api-Key" = "key-0123456789" }
"""


def test_paste_five_json_then_three_toml_with_a_choice_per_name(fake_home: Path) -> None:
    out = ok("mcp", "import", "paste", stdin=json.dumps(FIVE))
    assert out.count("added") == 5
    servers = listed()
    assert servers["events"]["transport"] == "sse"
    assert servers["docs"]["headers"] == {"Authorization": "••••••••"}
    out = ok("mcp", "import", "paste", "--replace", "fetch", stdin=THREE)
    assert "replaced 'fetch'" in out
    assert "added 'time'" in out
    assert "added 'remote'" in out
    servers = listed()
    assert servers["fetch"]["args"] == ["mcp-server-fetch", "--ignore-robots-txt"]
    # the same paste again without --replace: the known, different 'memory' definition is kept
    changed = {"mcpServers": {"memory": {"command": "node", "args": ["other.js"]}}}
    out = ok("mcp", "import", "paste", stdin=json.dumps(changed))
    assert "skipped 'memory'" in out
    assert listed()["memory"]["command"] == "npx"
    store = fake_home / ".config" / "kvswitch" / "mcp.json"
    assert (store.stat().st_mode & 0o777) == 0o600
    assert "git-secret-0123" in store.read_text()  # kept in clear only in the 0600 store
    shown = ok("mcp", "list") + ok("mcp", "list", "--json")
    for secret in ("git-secret-0123", "tok-0123456789", "key-0123456789"):
        assert secret not in shown


def test_import_from_each_client_marks_it_enabled_there(fake_home: Path) -> None:
    (fake_home / ".claude.json").write_text(
        json.dumps(
            {
                "numStartups": 2,
                "mcpServers": {
                    "fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"], "env": {}}
                },
            }
        )
    )
    codex = fake_home / ".codex" / "config.toml"
    codex.parent.mkdir()
    codex.write_text(
        '[mcp_servers.fetch]\ncommand = "uvx"\nargs = ["mcp-server-fetch"]\n\n'
        '[mcp_servers.web]\nurl = "http://127.0.0.1:9/mcp"\n'
    )
    opencode = fake_home / ".config" / "opencode" / "opencode.json"
    opencode.parent.mkdir(parents=True)
    opencode.write_text(
        '{\n  // mine\n  "mcp": {\n    "fetch": {"type": "local", "command": ["uvx", "mcp-server-fetch"]},\n'
        '    "off": {"type": "local", "command": ["x"], "enabled": false},\n  },\n}\n'
    )
    project = fake_home / "src" / "app"
    project.mkdir(parents=True)
    (project / ".mcp.json").write_text(
        '{"mcpServers": {"proj": {"type": "http", "url": "http://127.0.0.1:8/mcp"}}}'
    )
    for source in ("claude", "codex", "opencode", f"claude-project:{project}"):
        ok("mcp", "import", source)
    servers = listed()
    assert servers["fetch"]["clients"] == ["claude", "codex", "opencode"]
    assert servers["web"]["clients"] == ["codex"]
    assert servers["off"]["clients"] == []
    assert servers["proj"]["clients"] == [f"claude-project:{project}"]
    before = {p: p.read_bytes() for p in (fake_home / ".claude.json", codex, opencode)}
    ok("mcp", "sync")  # what is there already is what KV Switch would write: adopted, not duplicated
    assert (fake_home / ".claude.json").read_bytes() == before[fake_home / ".claude.json"]
    assert codex.read_bytes() == before[codex]
    adopted = opencode.read_text()  # the same server, written in KV Switch's form ("enabled": true)
    assert "// mine" in adopted
    assert adopted.count('"fetch"') == 1
    ok("mcp", "disable", "fetch")  # now KV Switch's: removed from every client, the rest kept
    assert "fetch" not in json.loads((fake_home / ".claude.json").read_text()).get("mcpServers", {})
    assert "fetch" not in tomllib.loads(codex.read_text()).get("mcp_servers", {})
    assert "// mine" in opencode.read_text()
    assert '"off"' in opencode.read_text()


def test_cc_switch_database(fake_home: Path) -> None:
    db = fake_home / ".cc-switch" / "cc-switch.db"
    db.parent.mkdir()
    with sqlite3.connect(db) as conn:
        conn.executescript((FIXTURES / "mcp_servers.sql").read_text())
    done = kvswitch("mcp", "import", "cc-switch")
    assert done.returncode == 0, done.stderr
    assert "'../evil'" in done.stderr  # refused by name, the others imported
    servers = listed()
    assert set(servers) == {"fetch", "context7", "memory"}
    assert servers["fetch"]["clients"] == ["claude", "codex"]
    assert servers["context7"]["clients"] == ["claude", "opencode"]
    assert servers["memory"]["env"] == {"MEMORY_FILE_PATH": "••••••••"}
    assert "ctx7-fixture" not in done.stdout + done.stderr


def test_a_hand_made_server_is_not_overwritten_without_replace(fake_home: Path) -> None:
    codex = fake_home / ".codex" / "config.toml"
    codex.parent.mkdir()
    mine = '# my settings\nmodel = "o3"  # keep\n\n[mcp_servers.fetch]\ncommand = "my-fetch"\n'
    codex.write_text(mine)
    done = kvswitch("mcp", "add", "fetch", "--client", "codex", "--", "uvx", "mcp-server-fetch")
    assert done.returncode == 2, done
    assert str(codex) in done.stderr
    assert "--replace" in done.stderr
    assert codex.read_text() == mine
    assert not (fake_home / ".config" / "kvswitch" / "mcp.json").exists()
    ok("mcp", "add", "fetch", "--client", "codex", "--replace", "fetch", "--", "uvx", "mcp-server-fetch")
    text = codex.read_text()
    assert text.startswith('# my settings\nmodel = "o3"  # keep\n')
    assert tomllib.loads(text)["mcp_servers"]["fetch"]["command"] == "uvx"
    ok("mcp", "disable", "fetch")  # KV Switch lets go: the user's own server comes back
    assert codex.read_text() == mine


def test_sse_for_codex_and_unknown_clients_are_refused(fake_home: Path) -> None:
    done = kvswitch("mcp", "add", "ev", "--url", "http://127.0.0.1:9/sse", "--sse", "--client", "codex")
    assert done.returncode == 2, done
    assert "SSE" in done.stderr
    done = kvswitch("mcp", "add", "x", "--client", "vim", "--", "echo")
    assert done.returncode == 2
    assert "unknown MCP client" in done.stderr
    assert not (fake_home / ".codex").exists()


def test_project_scope_and_edit_rewrite_every_enabled_client(fake_home: Path) -> None:
    project = fake_home / "work"
    project.mkdir()
    ok(
        "mcp",
        "add",
        "srv",
        "--env",
        "TOKEN=t-0123456789",
        "--client",
        f"claude-project:{project}",
        "--client",
        "opencode",
        "--",
        "echo",
        "one",
    )
    dry = ok("mcp", "edit", "srv", "--dry-run", "--", "echo", "two")
    assert "t-0123456789" not in dry
    assert '"two"' in dry
    ok("mcp", "edit", "srv", "--", "echo", "two")
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["srv"]["args"] == ["two"]
    opencode = json.loads((fake_home / ".config" / "opencode" / "opencode.json").read_text())
    assert opencode["mcp"]["srv"] == {
        "type": "local",
        "command": ["echo", "two"],
        "environment": {"TOKEN": "t-0123456789"},
        "enabled": True,
    }
    preview = json.loads(ok("mcp", "remove", "srv", "--dry-run", "--json"))
    assert preview["files"] == [
        str(project / ".mcp.json"),
        str(fake_home / ".config" / "opencode" / "opencode.json"),
    ]
    assert "t-0123456789" not in json.dumps(preview)
    done = json.loads(ok("mcp", "remove", "srv", "--json"))
    assert done["written"] == preview["files"]
    assert not (project / ".mcp.json").exists()  # KV Switch created it and nothing else is in it
