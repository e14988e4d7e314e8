"""Which profile each client runs, read from its real files in the temporary HOME (``targets.live``)."""

from __future__ import annotations

import json
from pathlib import Path

from engine_helpers import local_profile, make_engine, remote_profile

from kvswitch.core.gateway_config import route_clients
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.targets.live import LiveClient, live_clients


def _by_key(paths: AppPaths, profiles: list[Profile]) -> dict[str, LiveClient]:
    return {client.key: client for client in live_clients(paths, profiles)}


def _codex(name: str = "cx", **extra: object) -> Profile:
    return local_profile(name, targets=["codex"], model="gpt-oss", base_url="http://127.0.0.1:8081", **extra)


def test_claude_only_then_codex_only_each_client_keeps_its_own(fake_home: Path) -> None:
    engine = make_engine()
    claude, codex = local_profile("cl"), _codex()
    engine.apply(claude)
    engine.apply(codex)
    found = _by_key(engine.paths, [claude, codex])
    assert (found["claude:user"].profile, found["claude:user"].differs) == ("cl", False)
    assert (found["codex"].profile, found["codex"].differs) == ("cx", False)
    assert found["opencode"].profile is None
    assert found["claude:user"].path == fake_home / ".claude" / "settings.json"


def test_a_file_edited_by_hand_differs_and_names_the_profile_applied(fake_home: Path) -> None:
    engine = make_engine()
    claude = local_profile("cl")
    engine.apply(claude)
    settings = fake_home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["env"]["ANTHROPIC_MODEL"] = "something-else"
    data["model"] = "something-else"
    settings.write_text(json.dumps(data))
    live = _by_key(engine.paths, [claude])["claude:user"]
    assert (live.profile, live.differs) == ("cl", True)
    assert "ANTHROPIC_MODEL" in live.detail


def test_a_profile_saved_without_writing_it_through_differs(fake_home: Path) -> None:
    engine = make_engine()
    engine.apply(local_profile("cl"))
    edited = local_profile("cl", model="a-new-model")
    live = _by_key(engine.paths, [edited])["claude:user"]
    assert (live.profile, live.differs) == ("cl", True)


def test_a_file_written_by_hand_is_recognised_by_url_key_and_model(fake_home: Path) -> None:
    profile = remote_profile("ant", model="claude-x", env={"EXTRA_FLAG": "1"})
    settings = fake_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"env": {"ANTHROPIC_BASE_URL": "https://api.anthropic.com/",
                                            "ANTHROPIC_AUTH_TOKEN": profile.key},
                                    "model": "claude-x", "theme": "dark"}))
    live = _by_key(AppPaths.default(), [remote_profile("other"), profile])["claude:user"]
    assert (live.profile, live.differs, live.via_gateway) == ("ant", False, False)


def test_nothing_matches_when_the_key_is_another(fake_home: Path) -> None:
    settings = fake_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"env": {"ANTHROPIC_BASE_URL": "https://api.anthropic.com",
                                            "ANTHROPIC_AUTH_TOKEN": "sk-ant-someone-elses-key"}}))
    live = _by_key(AppPaths.default(), [remote_profile("ant")])["claude:user"]
    assert (live.profile, live.differs) == (None, False)


def test_the_most_specific_profile_wins(fake_home: Path) -> None:
    engine = make_engine()
    plain, specific = local_profile("plain", model=None, env={}), local_profile("specific", env={})
    engine.apply(specific)
    assert _by_key(engine.paths, [plain, specific])["claude:user"].profile == "specific"


def test_project_scope_and_shell_each_answer(fake_home: Path, tmp_path: Path) -> None:
    engine = make_engine()
    project = tmp_path / "proj"
    project.mkdir()
    scoped = local_profile("scoped", targets=[f"claude-project:{project}", "bash"])
    engine.apply(scoped)
    found = _by_key(engine.paths, [scoped])
    assert found[f"claude:project:{project}"].profile == "scoped"
    assert found["shell:bash"].profile == "scoped"
    assert found["claude:user"].profile is None


def test_gateway_profiles_answer_with_the_route(fake_home: Path) -> None:
    engine = make_engine()
    first = local_profile("g1", via_gateway=True, targets=["claude", "codex"])
    second = local_profile("g2", via_gateway=True, targets=["claude", "codex"], model="other")
    engine.apply(first)
    route_clients(engine.paths, "g1", ["claude", "codex"])
    route_clients(engine.paths, "g2", ["claude"])
    found = _by_key(engine.paths, [first, second])
    assert (found["claude:user"].profile, found["claude:user"].via_gateway) == ("g2", True)
    assert (found["codex"].profile, found["codex"].via_gateway) == ("g1", True)


def test_an_unreadable_file_is_a_line_of_detail(fake_home: Path) -> None:
    settings = fake_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text("{ not json")
    live = _by_key(AppPaths.default(), [local_profile("cl")])["claude:user"]
    assert live.profile is None
    assert "cannot read" in live.detail
