"""LM Studio: its /api/v0/models answer, Electron helpers, and its server-logs directory."""

from __future__ import annotations

from pathlib import Path

from server_helpers import table_get

from kvswitch import servers
from kvswitch.core.models import ProfileKind
from kvswitch.servers import lm_studio

MODELS = {"object": "list", "data": [
    {"id": "text-embedding-nomic-embed-text-v1.5", "type": "embeddings", "state": "not-loaded"},
    {"id": "qwen2.5-7b-instruct", "type": "llm", "state": "loaded", "max_context_length": 32768,
     "loaded_context_length": 8192},
]}


def test_loaded_model_and_its_context() -> None:
    found = servers.identify(table_get({"/api/v0/models": (200, MODELS)}))
    assert found is not None
    assert (found.server.kind, found.facts.models, found.facts.context) == (
        ProfileKind.LM_STUDIO, ("qwen2.5-7b-instruct",), 8192)


def test_helper_processes_are_not_the_server() -> None:
    assert servers.process_kind(["/opt/LM Studio/lm-studio"]) == ProfileKind.LM_STUDIO
    assert servers.process_kind(["/opt/LM Studio/lm-studio", "--type=renderer"]) is None


def test_existing_log_directory_is_found(fake_home: Path) -> None:
    old = fake_home / ".cache" / "lm-studio" / "server-logs"
    old.mkdir(parents=True)
    log = lm_studio.SERVER.find_log(None, [])
    assert log is not None
    assert log.path == str(old)
    (fake_home / ".lmstudio" / "server-logs").mkdir(parents=True)
    log = lm_studio.SERVER.find_log(None, [])
    assert log is not None
    assert log.path == str(fake_home / ".lmstudio" / "server-logs")
