"""A stale row in the client's model picker never reaches another profile's backend.

Profiles imported from CC Switch often have Chinese names, which all slug to ``profile``. Their picker
ids used to be numbered by the profiles' order (``profile``, ``profile-2``), so after ``profile remove
本地`` the row Claude Code still offered for 本地 (a local server) named 云端 (a cloud key) and the
request went there. Now a profile's id is a function of its name alone, and an id that names no gateway
profile is refused. Real ``kvswitch`` commands write the real settings file of the temporary HOME; the
gateway runs in-process on loopback; the two backends are scripted upstreams that record what reached
them (no real server can stand for "a cloud backend" here).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kvswitch.cli import main
from kvswitch.core.gateway_config import ensure_token
from kvswitch.core.model_ids import picker_models
from kvswitch.core.paths import AppPaths, claude_config_dir
from kvswitch.core.store import ProfileStore
from kvswitch.gateway.control import make_server
from kvswitch.gateway.relay.server import GatewayServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gateway"))
from gateway_support import ScriptedUpstream, json_answer  # noqa: E402

ANSWER = json.dumps({"id": "m", "type": "message", "content": [],
                     "usage": {"input_tokens": 3, "output_tokens": 1}}).encode()


@pytest.fixture
def backends() -> Iterator[dict[str, ScriptedUpstream]]:
    made = {name: ScriptedUpstream(json_answer(ANSWER)) for name in ("main", "本地", "云端")}
    yield made
    for upstream in made.values():
        upstream.close()


@pytest.fixture
def gateway(fake_home: Path) -> Iterator[GatewayServer]:
    ensure_token(AppPaths.default())
    server = make_server(AppPaths.default(), "127.0.0.1", 0).start()
    yield server
    server.stop()


def _add(name: str, url: str, model: str) -> None:
    assert main(["profile", "add", name, "--kind", "custom", "--base-url", url, "--model", model,
                 "--target", "claude", "--via-gateway"]) == 0


def _picker_rows() -> dict[str, str]:
    settings = json.loads((claude_config_dir() / "settings.json").read_text(encoding="utf-8"))
    return {row["label"]: row["model"] for row in settings["modelPicker"]["options"]}


def _send(gateway: GatewayServer, model: str) -> httpx.Response:
    token = ensure_token(AppPaths.default())
    body = json.dumps({"model": model, "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]})
    return httpx.post(gateway.url + "/claude/v1/messages", content=body, timeout=30,
                      headers={"content-type": "application/json", "x-api-key": token})


def test_chinese_named_profiles_get_distinct_ids_that_do_not_depend_on_order(fake_home: Path) -> None:
    for name in ("本地", "云端", "公司专用账号 (智谱 GLM)"):
        _add(name, "http://127.0.0.1:9", "qwen")
    profiles = ProfileStore(AppPaths.default()).profiles()
    ids = {row.profile: row.id for row in picker_models(profiles)}
    assert len(set(ids.values())) == 3
    assert ids["本地"].startswith("kvs-profile-")
    assert ids["云端"].startswith("kvs-profile-")
    assert ids["公司专用账号 (智谱 GLM)"].startswith("kvs-glm-")
    assert {row.profile: row.id for row in picker_models(reversed(profiles))} == ids
    assert {row.profile: row.id for row in picker_models(p for p in profiles if p.name != "本地")} == {
        name: value for name, value in ids.items() if name != "本地"}


def test_a_removed_profiles_picker_row_is_refused_not_sent_to_another_backend(
    gateway: GatewayServer, backends: dict[str, ScriptedUpstream]
) -> None:
    for name, upstream in backends.items():
        _add(name, upstream.url, "qwen")
    assert main(["use", "main"]) == 0
    rows = _picker_rows()
    local_id, cloud_id = rows["本地: qwen"], rows["云端: qwen"]
    assert local_id != cloud_id

    assert _send(gateway, local_id).status_code == 200
    assert len(backends["本地"].seen) == 1
    assert main(["profile", "remove", "本地"]) == 0

    refused = _send(gateway, local_id)
    assert refused.status_code == 404
    assert "removed, renamed or no longer goes through the gateway" in refused.json()["error"]["message"]
    assert backends["云端"].seen == []
    assert backends["main"].seen == []
    assert len(backends["本地"].seen) == 1

    assert _send(gateway, cloud_id).status_code == 200  # the rows of the profiles still there still work
    assert len(backends["云端"].seen) == 1
    sent = json.loads(backends["云端"].seen[0].body)
    assert sent["model"] == "qwen"


def test_an_unknown_picker_like_model_on_a_pinned_route_is_the_routes_business(
    gateway: GatewayServer, backends: dict[str, ScriptedUpstream]
) -> None:
    """``/p/NAME`` pins the profile: a model that merely looks like a picker id is that profile's model
    (mapped as any other), so pinning is never refused by the picker check."""
    _add("main", backends["main"].url, "qwen")
    token = ensure_token(AppPaths.default())
    body = json.dumps({"model": "kvs-gone--qwen", "max_tokens": 8,
                       "messages": [{"role": "user", "content": "hi"}]})
    answer = httpx.post(gateway.url + "/p/main/v1/messages", content=body, timeout=30,
                        headers={"content-type": "application/json", "x-api-key": token})
    assert answer.status_code == 200
    assert len(backends["main"].seen) == 1
