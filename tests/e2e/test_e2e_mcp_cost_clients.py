"""What an MCP server costs every request of Codex 0.169.0 and OpenCode 1.18.33 (issue 36), measured on
the real clients against a real llama-server b11434 (the tiny model) and checked with the server's own
counters, read by the test.

``kvswitch mcp measure --client codex|opencode`` runs the client through its recorder without MCP
servers, with the server alone, without again, and keeps the difference in the server's own prompt
counts. The independent check: llama-server's ``/metrics`` counters (prompt tokens processed plus
cached), read at the start of each run, move by exactly the figure more in the server's run than in
the runs without it (each run's side requests, such as OpenCode's title, are the same in every run).
A server the client cannot start gives no figure and says how to check.

The server renders each request's tools into the prompt with the tiny model's tool-rendering template
(the one vLLM serves it with; the GGUF's own template drops tools, so on it an MCP server costs
nothing): the figure is what the tools weigh in the served model's tokens. One llama-server for the
module (65,536 tokens: OpenCode's tools rendered take ~25k, and OpenCode compacts a session whose prompt
and output reservation no longer fit), answers ended at once by a logit bias on the end-of-turn token.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kvswitch.cli import main
from support.claude import eos_token_id
from support.clients import CODEX_VERSION, OPENCODE_VERSION, codex_binary, opencode_binary
from support.llama import REPO, RunningServer, llama_server
from support.require import require_module

SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_server.py"
CONTEXT = 65536
#: (client, its label and version as the figure names it, its tool's name in its own requests)
CLIENTS = {
    "codex": (f"Codex {CODEX_VERSION}", "mcp__kvs_stdio__kvswitch_echo"),
    "opencode": (f"OpenCode {OPENCODE_VERSION}", "kvs-stdio_kvswitch_echo"),
}
HINTS = {"codex": "'codex mcp list' shows what Codex would start; run the server's command yourself",
         "opencode": "'opencode mcp list' says why"}

pytestmark = [pytest.mark.real_server, pytest.mark.timeout(1200)]


def _tool_template(path: Path) -> Path:
    """The tiny model's tool-rendering chat template (``make_tiny_model.HF_CHAT_TEMPLATE``) in a file."""
    spec = importlib.util.spec_from_file_location("make_tiny_model", REPO / "scripts" / "make_tiny_model.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path.write_text(module.HF_CHAT_TEMPLATE)
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    work = tmp_path_factory.mktemp("llama-mcp-cost")
    template = _tool_template(work / "tools.jinja")
    with llama_server(work, "--jinja", "--chat-template-file", str(template), "-l", f"{eos_token_id()}+100",
                      "--cache-ram", "0", context=CONTEXT) as running:
        yield running


def _prompt_total(server: RunningServer) -> float:
    """Every prompt token the server took so far, by its own counters: processed plus cached."""
    text = httpx.get(f"{server.url}/metrics", timeout=10).text
    found = re.findall(r"^llamacpp:prompt_tokens(?:_cached)?_total (\S+)$", text, re.M)
    assert len(found) == 2, text
    return sum(float(value) for value in found)


def _binary(client: str) -> Path:
    return codex_binary(CODEX_VERSION) if client == "codex" else opencode_binary()


def _measure(client: str, name: str, server: RunningServer, monkeypatch: pytest.MonkeyPatch,
             capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str, dict[str, float]]:
    """``kvswitch mcp measure NAME --client CLIENT --json``: exit code, stdout, stderr, and per run (by its
    label; a repeated run's last) the prompt tokens the server's counters moved by during it."""
    from kvswitch.commands import mcp_cost  # noqa: PLC0415 - with the test's HOME set

    marks: list[tuple[str, float]] = []
    said = mcp_cost.err

    def step(text: str) -> None:  # the command says each run before it starts it
        marks.append((text, _prompt_total(server)))
        said(text)

    monkeypatch.setattr(mcp_cost, "err", step)
    capsys.readouterr()
    code = main(["mcp", "measure", name, "--client", client, f"--{client}-bin", str(_binary(client)),
                 "--json"])
    marks.append(("end", _prompt_total(server)))
    done = capsys.readouterr()
    return code, done.out, done.err, {a[0]: b[1] - a[1] for a, b in zip(marks, marks[1:], strict=False)}


@pytest.mark.parametrize("client", list(CLIENTS))
def test_measured_cost_is_the_servers_own_difference_and_a_server_not_started_is_said(
        client: str, server: RunningServer, fake_home: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    require_module("mcp", "pip install -e '.[test]' (the official MCP Python SDK)")
    version, tool = CLIENTS[client]
    label = version.split(" ")[0]
    # the profile's own targets play no part: the runs write their client's files in a throw-away home
    assert main(["profile", "add", "local", "--kind", "llama.cpp", "--base-url", server.url, "--model",
                 "tiny", "--target", "bash", "--context-window", str(CONTEXT)]) == 0
    assert main(["use", "local"]) == 0
    assert main(["mcp", "add", "kvs-stdio", "--", sys.executable, str(SERVER), "stdio"]) == 0
    assert main(["mcp", "add", "broken", "--", sys.executable, "-c", "import sys; sys.exit(3)"]) == 0

    code, said, steps, moved = _measure(client, "kvs-stdio", server, monkeypatch, capsys)
    assert code == 0, said + steps
    (cost,) = json.loads(said)
    assert cost["server"] == "kvs-stdio"
    assert cost["client"] == client
    assert cost["client_version"] == version
    assert cost["tools"] == [tool]
    assert cost["tokens"] == cost["with_tokens"] - cost["without_tokens"] > 0, cost
    # the independent check: the server's own counters, read at each run's start
    without = moved[f"running {label} without MCP servers..."]
    alone = moved[f"running {label} with 'kvs-stdio'..."]
    again = moved[f"running {label} without MCP servers, again..."]
    assert without == again, moved
    assert alone - without == cost["tokens"], (moved, cost)
    # only the run's own throw-away files held the server: the user's client files were never written
    assert not (fake_home / ".codex").exists()
    assert not (fake_home / ".config" / "opencode").exists()

    capsys.readouterr()
    assert main(["mcp", "list"]) == 0
    listed = capsys.readouterr().out
    assert f"{client} ~{cost['tokens']:,} tokens a request" in listed, listed
    assert f"with {version} on llama.cpp at" in listed, listed
    assert "claude unknown" in listed, listed

    # a server the client cannot start: no figure, and how to check
    code, out, said, _moved = _measure(client, "broken", server, monkeypatch, capsys)
    assert code == 4, out + said
    assert f"{label} sent no tool of MCP server 'broken'" in said, said
    assert "it did not connect to it, so its cost is not measured" in said, said
    assert HINTS[client] in said, said
    assert "Traceback" not in said
    capsys.readouterr()
    assert main(["mcp", "list", "--json"]) == 0
    listing = {row["name"]: row["cost"] for row in json.loads(capsys.readouterr().out)}
    assert listing["broken"][client] is None
    assert listing["kvs-stdio"][client]["tokens"] == cost["tokens"]
