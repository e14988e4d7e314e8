"""Apply writes exactly the preview the user confirmed, or nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_helpers import KEY, local_profile, make_engine

from kvswitch.targets.engine import PlanOutdated


def settings_file(home: Path) -> Path:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def test_a_file_changed_after_the_preview_is_not_written(fake_home: Path) -> None:
    engine = make_engine()
    settings = settings_file(fake_home)
    settings.write_text('{"theme": "dark"}\n')
    rc = fake_home / ".bashrc"
    rc.write_text("# mine\n")
    profile = local_profile(targets=["bash", "claude"])
    preview = engine.plan(profile)
    settings.write_text('{"theme": "light"}\n')
    with pytest.raises(PlanOutdated) as info:
        engine.apply(profile, preview)
    assert info.value.locations == [str(settings)]
    assert "nothing was written" in str(info.value)
    assert settings.read_text() == '{"theme": "light"}\n'
    assert rc.read_text() == "# mine\n"
    assert engine.state().targets == {}
    fresh = engine.plan(profile)
    engine.apply(profile, fresh)
    assert json.loads(settings.read_text())["theme"] == "light"
    assert json.loads(settings.read_text())["env"]["ANTHROPIC_AUTH_TOKEN"] == KEY


def test_a_file_created_after_the_preview_is_not_overwritten(fake_home: Path) -> None:
    engine = make_engine()
    profile = local_profile()
    preview = engine.plan(profile)
    settings = settings_file(fake_home)
    settings.write_text('{"mine": true}\n')
    with pytest.raises(PlanOutdated):
        engine.apply(profile, preview)
    assert settings.read_text() == '{"mine": true}\n'


def test_another_apply_between_preview_and_confirm_outdates_the_preview(fake_home: Path) -> None:
    engine = make_engine()
    settings = settings_file(fake_home)
    settings.write_text("{}\n")
    profile = local_profile()
    preview = engine.plan(profile)
    make_engine().apply(local_profile("other", model="llama"))
    written = settings.read_bytes()
    with pytest.raises(PlanOutdated):
        engine.apply(profile, preview)
    assert settings.read_bytes() == written
    assert engine.current() == "other"


def test_an_edited_profile_outdates_its_preview(fake_home: Path) -> None:
    engine = make_engine()
    preview = engine.plan(local_profile())
    with pytest.raises(PlanOutdated, match="no longer what the preview showed"):
        engine.apply(local_profile(model="another-model"), preview)
    assert not settings_file(fake_home).exists()


def test_the_confirmed_plan_objects_are_the_ones_written(fake_home: Path) -> None:
    engine = make_engine()
    preview = engine.plan(local_profile())
    result = engine.apply(local_profile(), preview)
    assert result.plans is preview
    assert settings_file(fake_home).read_text() == preview[0].after
