"""A real MCP server written with the official ``mcp`` Python SDK, for the MCP end-to-end tests.

``python mcp_server.py stdio`` speaks MCP over stdin/stdout (what Claude Code, Codex and OpenCode start
as a subprocess); ``python mcp_server.py http PORT`` serves streamable HTTP on ``127.0.0.1:PORT/mcp``.
Its one tool answers with a fixed marker and the text it was given, so a test can tell its answer from
anything a model makes up. The script imports nothing of the test suite: the clients run it as a plain
file with the test venv's Python.
"""

from __future__ import annotations

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

    @server.tool()
    def kvswitch_echo(text: str) -> str:
        """Answer with the test marker and the text given (used to prove the tool was called)."""
        return f"{MARKER}: {text}"

    return server


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
