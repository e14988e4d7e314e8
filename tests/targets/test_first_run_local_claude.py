"""A local profile without a key still gets Claude Code past its login, and tells it the context window.

Claude Code 2.1.332, fresh and not logged in, answers ``Not logged in`` unless some credential variable
is set; a local llama-server ignores the token. These tests pin what the Claude target writes for that
(the end-to-end proof with the real client is ``tests/e2e/test_e2e_first_run.py``).
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

from engine_helpers import local_profile, make_engine, remote_profile

from kvswitch.core.envmap import CONTEXT_WINDOW_ENV, NO_KEY_PLACEHOLDER, claude_env, shell_env


def _settings(home: Path) -> dict[str, object]:
    data = json.loads((home / ".claude" / "settings.json").read_text())
    assert isinstance(data, dict)
    return data


def test_local_profile_without_key_gets_a_placeholder_token(fake_home: Path) -> None:
    engine = make_engine()
    profile = local_profile(api_key=None)
    path = fake_home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"theme": "dark"}\n')
    path.chmod(0o644)
    plans = engine.plan(profile)
    diff = engine.render_diff(plans)
    # shown as it is (not a secret), with the reason next to it
    assert f'"ANTHROPIC_AUTH_TOKEN": "{NO_KEY_PLACEHOLDER}"' in diff
    assert any("placeholder" in w and "login" in w for p in plans for w in p.warnings)
    engine.apply(profile)
    env = _settings(fake_home)["env"]
    assert isinstance(env, dict)
    assert env["ANTHROPIC_AUTH_TOKEN"] == NO_KEY_PLACEHOLDER
    # the placeholder is no key: the file keeps the mode a keyless write gives it
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    # applying again: nothing changes, and the note is not repeated
    again = engine.plan(profile)
    assert not any(p.changed for p in again)
    assert not any("placeholder" in w for p in again for w in p.warnings)


def test_placeholder_only_where_it_is_needed() -> None:
    # a real key wins; the user's own credential in the env block wins
    assert claude_env(local_profile())["ANTHROPIC_AUTH_TOKEN"] != NO_KEY_PLACEHOLDER
    own = local_profile(api_key=None, env={"ANTHROPIC_API_KEY": "mine-0123456789"})
    assert "ANTHROPIC_AUTH_TOKEN" not in claude_env(own)
    # a cloud profile without a key keeps the user's own Claude login: no token at all
    assert "ANTHROPIC_AUTH_TOKEN" not in claude_env(remote_profile(api_key=None))
    # the shell targets export exactly what settings.json gets
    keyless = local_profile(api_key=None)
    assert shell_env(keyless)["ANTHROPIC_AUTH_TOKEN"] == NO_KEY_PLACEHOLDER


def test_context_window_is_written_for_claude_code(fake_home: Path) -> None:
    engine = make_engine()
    # a count of tokens, not a token: shown as it is in the preview
    preview = engine.render_diff(engine.plan(local_profile(context_window=8192)))
    assert f'"{CONTEXT_WINDOW_ENV}": "8192"' in preview
    engine.apply(local_profile(context_window=8192))
    env = _settings(fake_home)["env"]
    assert isinstance(env, dict)
    assert env[CONTEXT_WINDOW_ENV] == "8192"
    # and taken away again when the profile no longer knows it
    engine.apply(local_profile(context_window=None))
    env = _settings(fake_home)["env"]
    assert isinstance(env, dict)
    assert CONTEXT_WINDOW_ENV not in env
    assert CONTEXT_WINDOW_ENV not in claude_env(local_profile())
