"""Random apply / switch / undo sequences over random pre-existing files never lose a user's key.

Invariants (no hand edits happen during a sequence):
- keys no profile mentions keep their exact original value, always;
- right after applying P, every key P sets has P's value, and every other key KV Switch ever wrote is
  gone or back at the user's original value (no stale owned key);
- undo puts every file back byte for byte as it was before the apply it undoes, or, when the user
  edited the file since (keys no profile touches), to that state with the user's edits kept.
"""

from __future__ import annotations

import json
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvswitch.core.envmap import claude_env
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.targets.engine import Engine, NothingToUndo
from kvswitch.targets.transaction import UNDO_DEPTH

ENV_POOL = ["ANTHROPIC_MODEL", "ANTHROPIC_BASE_URL", "API_TIMEOUT_MS", "FOO", "BAR", "DISABLE_TELEMETRY"]
USER_ONLY = ["MY_HOME", "EDITOR_X"]
values = st.text(alphabet="abcxyz019 -/:", min_size=0, max_size=8)
json_values = st.one_of(values, st.integers(0, 10**6), st.booleans())

user_settings = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {"env": st.dictionaries(st.sampled_from(ENV_POOL + USER_ONLY), json_values, max_size=5)},
        optional={
            "model": values,
            "permissions": st.fixed_dictionaries({"allow": st.lists(values, max_size=2)}),
            "theme": values,
        },
    ),
)
user_codex = st.one_of(
    st.none(),
    st.sampled_from(
        [
            '# mine\nmodel = "gpt-x"\n\n[mcp_servers.a]\ncommand = "x"\n',
            'approval_policy = "never"\n',
            "",
        ]
    ),
)


@st.composite
def profiles(draw: Any, index: int) -> Profile:
    kind = draw(st.sampled_from(["llama.cpp", "ollama", "anthropic", "custom"]))
    targets = draw(st.sampled_from([["claude"], ["claude", "codex"], ["codex"]]))
    if kind == "anthropic":
        targets = ["claude"]
    return Profile(
        name=f"p{index}",
        kind=kind,
        base_url=f"http://127.0.0.1:{8000 + index}",
        api_key=draw(st.one_of(st.none(), st.just(f"sk-secret-{index}-abcdefgh"))),
        model=draw(st.one_of(st.none(), values.filter(bool))),
        env=draw(st.dictionaries(st.sampled_from(ENV_POOL[2:]), values, max_size=3)),
        targets=targets,
    )


USER_EDITS = [("theme",), ("env", "MY_HOME"), ("env", "EDITOR_X")]
hand_edits = st.tuples(st.just("edit"), st.sampled_from(USER_EDITS), values)
operations = st.lists(st.one_of(st.integers(0, 2), st.just("undo"), hand_edits), min_size=1, max_size=8)


def read_state(home: Path) -> dict[str, bytes | None]:
    files = {
        "claude": home / ".claude" / "settings.json",
        "codex": home / ".codex" / "config.toml",
        "auth": home / ".codex" / "auth.json",
    }
    return {name: path.read_bytes() if path.exists() else None for name, path in files.items()}


def check_claude_after_apply(raw: bytes | None, original: dict[str, Any] | None, profile: Profile) -> None:
    original = original or {}
    data = json.loads(raw) if raw else {}
    env = data.get("env", {})
    wanted = claude_env(profile) if "claude" in profile.targets else {}
    user_env = original.get("env", {})
    for key in set(env) | set(wanted) | set(user_env):
        if key in wanted:
            assert env.get(key) == wanted[key], key
        elif key in user_env:
            assert env.get(key) == user_env[key], f"user value of {key} lost"
        else:
            assert key not in env, f"stale owned key {key}"
    for key, value in original.items():
        if key not in ("env", "model"):
            assert data.get(key) == value
    if "claude" in profile.targets and profile.model:
        assert data["model"] == profile.model
    else:
        assert data.get("model") == original.get("model")


def check_codex_after_apply(raw: bytes | None, original: str | None, profile: Profile) -> None:
    data = tomllib.loads(raw.decode()) if raw else {}
    before = tomllib.loads(original) if original else {}
    if "codex" in profile.targets:
        assert data["model_provider"] == "kvswitch"
        assert data["model_providers"]["kvswitch"]["base_url"].endswith("/v1") or profile.kind == "custom"
        if profile.model:
            assert data["model"] == profile.model
    else:
        assert data == before, "switching away from codex must leave the user's config exactly"
    for key, value in before.items():
        if key not in ("model", "model_provider"):
            assert data.get(key) == value


def hand_edit(home: Path, path_keys: tuple[str, ...], value: str) -> None:
    """What a user does in an editor: change a key no profile touches (reformatting the file)."""
    path = home / ".claude" / "settings.json"
    data = json.loads(path.read_text()) if path.exists() and path.read_text().strip() else {}
    node = data
    for key in path_keys[:-1]:
        node = node.setdefault(key, {})
    node[path_keys[-1]] = value
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def overlay(data: dict[str, Any] | None, edits: dict[tuple[str, ...], str]) -> dict[str, Any]:
    result = json.loads(json.dumps(data or {}))
    for path_keys, value in edits.items():
        node = result
        for key in path_keys[:-1]:
            node = node.setdefault(key, {})
        node[path_keys[-1]] = value
    return result


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    settings_data=user_settings,
    codex_text=user_codex,
    pool=st.tuples(profiles(0), profiles(1), profiles(2)),
    ops=operations,
    layout=st.sampled_from(["indent2", "indent4", "compact"]),
)
def test_random_sequences_keep_user_data(
    settings_data: dict[str, Any] | None,
    codex_text: str | None,
    pool: tuple[Profile, ...],
    ops: list[Any],
    layout: str,
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        env = {"HOME": str(home)}
        if settings_data is not None:
            (home / ".claude").mkdir()
            indent = {"indent2": 2, "indent4": 4, "compact": None}[layout]
            (home / ".claude" / "settings.json").write_text(json.dumps(settings_data, indent=indent) + "\n")
        if codex_text is not None:
            (home / ".codex").mkdir()
            (home / ".codex" / "config.toml").write_text(codex_text)
        engine = Engine(AppPaths(home / "cfg", home / "cfg" / "data", home / "cfg" / "logs"), env=env)
        history: list[tuple[dict[str, bytes | None], bool]] = []  # (files before an apply, edited since)
        edits: dict[tuple[str, ...], str] = {}
        for op in ops:
            before = read_state(home)
            if isinstance(op, tuple):
                _, path_keys, value = op
                hand_edit(home, path_keys, value)
                edits[path_keys] = value
                history = [(files, True) for files, _ in history]
                continue
            if op == "undo":
                if not history:
                    try:
                        engine.undo()
                    except NothingToUndo:
                        continue
                    raise AssertionError("undo succeeded with nothing recorded")
                engine.undo()
                expected, edited = history.pop()
                now = read_state(home)
                if not edited:
                    assert now == expected, "undo must restore the files byte for byte"
                    continue
                assert now["codex"] == expected["codex"]
                claude_now = json.loads(now["claude"]) if now["claude"] else {}
                claude_then = json.loads(expected["claude"]) if expected["claude"] else None
                assert claude_now == overlay(claude_then, edits), "undo over hand edits must keep them"
                continue
            profile = pool[op]
            previous = engine.current()
            result = engine.apply(profile)
            after = read_state(home)
            if result.written or previous != profile.name:
                history = [*history, (before, False)][-UNDO_DEPTH:]
            if not result.written:
                assert after == before
            user = overlay(settings_data, edits) if (settings_data is not None or edits) else None
            # each client keeps its own profile: one the profile does not write is left as it was
            if "claude" in profile.targets:
                check_claude_after_apply(after["claude"], user, profile)
            else:
                assert after["claude"] == before["claude"], "a Codex-only profile must not touch Claude Code"
            if "codex" in profile.targets:
                check_codex_after_apply(after["codex"], codex_text, profile)
            else:
                assert after["codex"] == before["codex"], "a Claude-only profile must not touch Codex"
            assert engine.current() == profile.name
