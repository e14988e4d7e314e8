"""A real MCP server written with the official ``mcp`` Python SDK, for the MCP end-to-end tests.

``python mcp_server.py stdio`` speaks MCP over stdin/stdout (what Claude Code, Codex and OpenCode start
as a subprocess); ``python mcp_server.py http PORT`` serves streamable HTTP on ``127.0.0.1:PORT/mcp``.
Its tool ``kvswitch_echo`` answers with a fixed marker and the text it was given, so a test can tell its
answer from anything a model makes up. With ``KVSWITCH_MCP_SHUFFLE=1`` in its environment it also has five
more tools and lists all six in a random order on each start, as some real servers do (their tools come
from a dict or a directory listing): what breaks a client's prompt prefix between two starts unless the
client sorts them (``KVSWITCH_MCP_ORDER_LOG=FILE`` appends each start's order to FILE). The
script imports nothing of the test suite: the clients run it as a plain file with the test venv's Python.
"""

from __future__ import annotations

import os
import random
import sys

#: the marker every answer of the tool starts with
MARKER = "kvswitch-mcp-test"


def build(name: str):  # noqa: ANN201 - the SDK class differs between majors
    """The server: mcp 2.x calls it ``MCPServer``, 1.x ``FastMCP`` (same decorator API)."""
    try:
        from mcp.server.mcpserver import MCPServer as Server  # noqa: PLC0415 - mcp >= 2
    except ImportError:
        from mcp.server.fastmcp import FastMCP as Server  # noqa: PLC0415 - mcp 1.x

    server = Server(name)

    def kvswitch_echo(text: str) -> str:
        """Answer with the test marker and the text given (used to prove the tool was called)."""
        return f"{MARKER}: {text}"

    tools = [kvswitch_echo]
    if os.environ.get("KVSWITCH_MCP_SHUFFLE") == "1":
        tools += [_extra(word) for word in ("alpha", "bravo", "charlie", "delta", "foxtrot")]
        random.shuffle(tools)  # a new order per process start (the SDK lists tools as registered)
        log = os.environ.get("KVSWITCH_MCP_ORDER_LOG")
        if log:  # the order this start lists, for a test to compare with what the client sent
            with open(log, "a", encoding="utf-8") as sink:
                sink.write(" ".join(tool.__name__ for tool in tools) + "\n")
    for tool in tools:
        server.tool()(tool)
    return server


def _extra(word: str):  # noqa: ANN202 - a tool function
    def tool(text: str) -> str:
        return f"{MARKER} {word}: {text}"

    tool.__name__ = f"kvswitch_{word}"
    tool.__doc__ = f"Answer with the test marker, the word {word!r} and the text given."
    return tool


def main(argv: list[str]) -> int:
    transport = argv[1] if len(argv) > 1 else "stdio"
    if transport == "stdio":
        build("kvswitch-test-stdio").run("stdio")
        return 0
    port = int(argv[2])
    server = build("kvswitch-test-http")
    try:
        server.run("streamable-http", host="127.0.0.1", port=port)
    except TypeError:  # mcp 1.x: host and port are settings
        server.settings.host, server.settings.port = "127.0.0.1", port
        server.run("streamable-http")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
