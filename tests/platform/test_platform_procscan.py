"""Command-line recognition: what each server's argv tells, and what must not be taken for a server."""

from __future__ import annotations

import pytest

from kvswitch.core.models import ProfileKind
from kvswitch.platform.procscan import ProcessInfo, classify, connect_host, option, server_kind


@pytest.mark.parametrize(("argv", "kind"), [
    (["/usr/local/bin/llama-server", "-m", "m.gguf"], ProfileKind.LLAMA_CPP),
    (["C:\\llama\\llama-server.exe", "-m", "m.gguf"], ProfileKind.LLAMA_CPP),
    (["ollama", "serve"], ProfileKind.OLLAMA),
    (["/usr/bin/vllm", "serve", "Qwen/Qwen3-8B"], ProfileKind.VLLM),
    (["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "x"], ProfileKind.VLLM),
    (["/usr/bin/python3.11", "-u", "-m", "sglang.launch_server", "--model-path", "x"], ProfileKind.SGLANG),
    (["/opt/LM Studio/lm-studio"], ProfileKind.LM_STUDIO),
    (["/Applications/LM Studio.app/Contents/MacOS/LM Studio"], ProfileKind.LM_STUDIO),
    # look-alikes
    (["/opt/LM Studio/lm-studio", "--type=renderer"], None),
    (["ollama", "run", "llama3"], None),
    (["ollama", "runner", "--model", "blob"], None),
    (["bash", "-c", "llama-server -m x"], None),
    (["python3", "run_vllm.py", "-m", "vllm.entrypoints.openai.api_server"], None),
    (["python3", "-m", "http.server", "8080"], None),
    (["vim", "llama-server.log"], None),
    ([], None),
])
def test_server_kind(argv: list[str], kind: ProfileKind | None) -> None:
    assert server_kind(argv) == kind


def test_llama_server_command_line() -> None:
    info = ProcessInfo(41, ("llama-server", "-m", "/models/qwen.gguf", "--host", "0.0.0.0", "--port=8081",
                            "-c", "65536", "-np", "4", "--log-file", "logs/ls.log"), cwd="/srv/llama")
    server = classify(info)
    assert server is not None
    assert (server.kind, server.host, server.port) == (ProfileKind.LLAMA_CPP, "127.0.0.1", 8081)
    assert (server.model, server.context, server.parallel) == ("/models/qwen.gguf", 65536, 4)
    assert server.log_file == "/srv/llama/logs/ls.log"


def test_alias_wins_over_model_path_and_defaults_apply() -> None:
    server = classify(ProcessInfo(1, ("llama-server", "-m", "a.gguf", "--alias", "coder")))
    assert server is not None
    assert (server.model, server.port, server.host) == ("coder", 8080, "127.0.0.1")


def test_listening_socket_gives_the_port_when_argv_has_none() -> None:
    info = ProcessInfo(7, ("LM Studio",), listening=(("127.0.0.1", 41343), ("127.0.0.1", 1235)))
    server = classify(info)
    assert server is not None
    assert server.port == 41343


def test_ollama_host_from_environment() -> None:
    info = ProcessInfo(3, ("ollama", "serve"), environ={"OLLAMA_HOST": "http://0.0.0.0:11500",
                                                         "OLLAMA_NUM_PARALLEL": "2"})
    server = classify(info)
    assert server is not None
    assert (server.host, server.port, server.parallel) == ("127.0.0.1", 11500, 2)
    bare = classify(ProcessInfo(4, ("ollama", "serve"), environ={"OLLAMA_HOST": "10.0.0.5"}))
    assert bare is not None
    assert (bare.host, bare.port) == ("10.0.0.5", 11434)


def test_ollamas_private_llama_server_is_not_reported() -> None:
    info = ProcessInfo(9, ("/usr/lib/ollama/llama-server", "--port", "40123"),
                       parent_argv=("ollama", "serve"))
    assert classify(info) is None


def test_vllm_serve_positional_model_and_served_name() -> None:
    plain = classify(ProcessInfo(5, ("vllm", "serve", "Qwen/Qwen3-8B", "--port", "9000")))
    named = classify(ProcessInfo(6, ("vllm", "serve", "Qwen/Qwen3-8B", "--served-model-name", "qwen")))
    assert plain is not None
    assert (plain.model, plain.port) == ("Qwen/Qwen3-8B", 9000)
    assert named is not None
    assert (named.model, named.port) == ("qwen", 8000)


def test_option_and_connect_host() -> None:
    argv = ["x", "--port", "1", "--port=2", "--portx", "3"]
    assert option(argv, "--port") == "2"
    assert option(argv, "--missing") is None
    assert [connect_host(h) for h in (None, "0.0.0.0", "::", "localhost", "192.168.1.4", "[::1]")] == [
        "127.0.0.1", "127.0.0.1", "127.0.0.1", "127.0.0.1", "192.168.1.4", "::1"]
