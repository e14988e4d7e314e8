"""Stand-in inference servers for detection tests: the HTTP answers each real server gives.

Started by the tests under the command lines the real servers have (``ollama serve``,
``python -m vllm.entrypoints.openai.api_server --model ...``), so detection sees real processes
with real listening sockets and real HTTP on loopback. Shapes follow each server's documented routes.
"""

from __future__ import annotations

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def option(name: str, default: str) -> str:
    argv = sys.argv
    for index, arg in enumerate(argv):
        if arg == name and index + 1 < len(argv):
            return argv[index + 1]
    return default


def routes(kind: str) -> dict[str, object]:
    model = option("--model", option("--model-path", os.environ.get("STANDIN_MODEL", "standin-model")))
    context = int(option("--max-model-len", option("--context-length", "4096")))
    if kind == "ollama":
        return {
            "/api/version": {"version": "0.34.3"},
            "/api/tags": {"models": [{"name": "qwen2.5-coder:7b", "model": "qwen2.5-coder:7b"}]},
            "/v1/models": {"object": "list", "data": [{"id": "qwen2.5-coder:7b", "owned_by": "library"}]},
        }
    if kind == "vllm":
        return {
            "/version": {"version": "0.11.1"},
            "/health": "",
            "/v1/models": {"object": "list",
                           "data": [{"id": model, "owned_by": "vllm", "max_model_len": context}]},
        }
    if kind == "sglang":
        return {
            "/get_server_info": {"model_path": model, "context_length": context, "version": "0.5.3",
                                 "max_running_requests": 16},
            "/health": "",
            "/v1/models": {"object": "list", "data": [{"id": model, "owned_by": "sglang"}]},
        }
    if kind == "lmstudio":
        return {
            "/api/v0/models": {"object": "list", "data": [
                {"id": "text-embedding-nomic-embed-text-v1.5", "type": "embeddings", "state": "not-loaded"},
                {"id": "qwen2.5-7b-instruct", "type": "llm", "state": "loaded", "max_context_length": 32768,
                 "loaded_context_length": 8192},
            ]},
            "/v1/models": {"object": "list",
                           "data": [{"id": "qwen2.5-7b-instruct", "owned_by": "organization_owner"}]},
        }
    if kind == "web":  # an unrelated web server: answers every path with a page, never JSON
        return {}
    raise SystemExit(f"unknown stand-in kind {kind!r}")


def serve(kind: str, port: int) -> None:
    table = routes(kind)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            path = self.path.split("?")[0]
            if kind == "web":
                self._send(200, b"<html><body>hello</body></html>", "text/html")
            elif path in table:
                body = table[path]
                self._send(200, json.dumps(body).encode() if body != "" else b"", "application/json")
            else:
                self._send(404, b'{"detail":"Not Found"}', "application/json")

        def _send(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def main(kind: str) -> None:
    port = int(option("--port", os.environ.get("STANDIN_PORT", "0")))
    if kind == "ollama":
        host = os.environ.get("OLLAMA_HOST", "127.0.0.1:11434")
        port = int(host.rsplit(":", 1)[1])
    serve(kind, port)


if __name__ == "__main__":
    main(sys.argv[1])
