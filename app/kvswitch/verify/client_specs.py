"""What differs between the clients a real-client verify runs: one description per client.

The scripted session (``client_run``) is the same for every client: a throw-away project and home that
carry exactly what the profile applies, a recorder in front of the backend, conversation 1 turns 1-3
and conversation 2 turn 1. What each client needs is here: the files it reads (written by the real
target writers, so the run sees what ``kvswitch apply`` would write, only pointed at the recorder), the
command line of a first, a continued and a new turn, how its version reads, and which of the requests
it sends carries the conversation (side requests such as model lists are recorded but not judged).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from kvswitch.core.envmap import claude_env, codex_key_env
from kvswitch.core.models import Profile, validate_base_url
from kvswitch.targets.filetarget import StructuredFileTarget
from kvswitch.verify.capture import Capture


@dataclass(frozen=True)
class RunLayout:
    """Where and how the client runs: its environment, its project directory, what it was given."""

    env: dict[str, str]
    cwd: Path
    #: the names of what the profile gave the client (env names, config keys): shown, never values
    given: list[str]


def base_env(home: Path) -> dict[str, str]:
    """The least a client needs to run: PATH, a throw-away HOME, a UTF-8 locale; nothing of the user's."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8"}


def origin(url: str) -> str:
    """``scheme://host:port`` of a URL: the recorder's upstream when the client keeps the URL's path."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def routed(profile: Profile, recorder_url: str) -> Profile:
    """The profile with its host replaced by the recorder's and its path kept, so a target writer
    derives the client's URL from it exactly as from the real profile (the recorder's upstream is the
    profile's origin)."""
    path = urlsplit(profile.base_url).path.rstrip("/")
    return profile.model_copy(update={"base_url": validate_base_url(recorder_url + path)}, deep=True)


def write_targets(targets: list[StructuredFileTarget], profile: Profile) -> list[str]:
    """Apply the profile to fresh files through the real writers; the keys written, in order."""
    keys: list[str] = []
    for target in targets:
        plan = target.plan(profile, {})
        if plan.after is not None:
            target.apply(plan)
            keys.extend(k for k in plan.owned if not k.startswith("@"))
    return keys


class ClientSpec:
    """One client: subclasses say how it is set up, run and recognised."""

    #: the ``--client`` value and the record's ``client``
    name = ""
    #: what the user calls it
    label = ""
    #: the command looked up on PATH
    executable = ""
    #: the option that names another binary
    bin_option = ""
    #: the client's own words when it cannot authenticate: a verify must say so, not wait
    login_hints: tuple[str, ...] = ()

    def upstream(self, profile: Profile) -> str:
        """Where the recorder forwards to."""
        return origin(profile.base_url)

    def layout(self, profile: Profile, recorder_url: str, root: Path) -> RunLayout:
        raise NotImplementedError

    def argv(self, binary: Path, conversation: int, turn: int, prompt: str) -> list[str]:
        raise NotImplementedError

    def is_turn_request(self, capture: Capture) -> bool:
        raise NotImplementedError

    def parse_version(self, text: str) -> str:
        """The version number in ``--version``'s output (the first word that starts with a digit)."""
        for word in text.split():
            if word[:1].isdigit():
                return word
        return text.strip().split(" ")[0] or "unknown"

    def version_env(self, home: Path) -> dict[str, str]:
        return base_env(home)

    def warnings(self, output: str) -> list[str]:
        """What the client warned about in a turn's output that a user of this profile should know."""
        return []


class ClaudeClient(ClientSpec):
    """Claude Code: ``~/.claude/settings.json``'s ``env`` as the profile writes it, ``-p`` headless."""

    name, label, executable, bin_option = "claude", "Claude Code", "claude", "--claude-bin"
    login_hints = ("/login", "Invalid API key", "Please run", "not logged in")

    def upstream(self, profile: Profile) -> str:
        return profile.base_url

    def layout(self, profile: Profile, recorder_url: str, root: Path) -> RunLayout:
        home, project = root / "home", root / "project"
        (home / ".claude").mkdir(parents=True)
        project.mkdir()
        env = claude_env(profile)
        env["ANTHROPIC_BASE_URL"] = recorder_url
        settings = home / ".claude" / "settings.json"
        settings.write_text(json.dumps({"env": env}, indent=2))
        settings.chmod(0o600)
        return RunLayout(base_env(home), project, sorted(env))

    def argv(self, binary: Path, conversation: int, turn: int, prompt: str) -> list[str]:
        # --max-turns 1 keeps each run to one model answer, so no tool the model asks for runs
        argv = [str(binary), "-p", prompt, "--max-turns", "1"]
        if turn > 1:
            argv.insert(2, "--continue")
        return argv

    def is_turn_request(self, capture: Capture) -> bool:
        return capture.method == "POST" and "/messages" in capture.path


class CodexClient(ClientSpec):
    """Codex: ``$CODEX_HOME/config.toml`` (and ``auth.json``) from the Codex target, the key in the
    variable that target names; ``codex exec`` headless, ``exec resume --last`` to continue."""

    name, label, executable, bin_option = "codex", "Codex", "codex", "--codex-bin"
    login_hints = ("codex login", "401 Unauthorized")

    def layout(self, profile: Profile, recorder_url: str, root: Path) -> RunLayout:
        from kvswitch.targets.codex import codex_targets  # noqa: PLC0415 - only a Codex run writes these

        home, project = root / "home", root / "project"
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True)
        project.mkdir()
        given = write_targets(codex_targets(codex_home), routed(profile, recorder_url))
        env = {**base_env(home), "CODEX_HOME": str(codex_home)}
        # what the shell targets export reaches Codex too: the profile's own env and the key variable
        env.update(profile.env)
        key_env = codex_key_env(profile)
        if key_env and profile.key:
            env[key_env] = profile.key
            given.append(key_env)
        return RunLayout(env, project, [*given, *sorted(profile.env)])

    def argv(self, binary: Path, conversation: int, turn: int, prompt: str) -> list[str]:
        if turn > 1:
            return [str(binary), "exec", "resume", "--last", "--skip-git-repo-check", prompt]
        return [str(binary), "exec", "--skip-git-repo-check", prompt]

    def is_turn_request(self, capture: Capture) -> bool:
        return capture.method == "POST" and capture.path.rstrip("/").endswith("/responses")

    def warnings(self, output: str) -> list[str]:
        # "Model metadata for `tiny` not found": Codex 0.169 falls back to a 272k context and its own
        # defaults; the Codex target's model_context_window corrects the window, not the warning
        return [
            line.strip().removeprefix("warning: ")
            for line in output.splitlines()
            if "Model metadata for" in line and "not found" in line
        ]


class OpenCodeClient(ClientSpec):
    """OpenCode: ``~/.config/opencode/opencode.json`` from the OpenCode target, the key in the variable
    its ``{env:}`` reference names; ``opencode run`` headless, ``run --continue`` to continue."""

    name, label, executable, bin_option = "opencode", "OpenCode", "opencode", "--opencode-bin"

    def layout(self, profile: Profile, recorder_url: str, root: Path) -> RunLayout:
        from kvswitch.targets.opencode import opencode_user_target  # noqa: PLC0415 - only this run

        home, project = root / "home", root / "project"
        project.mkdir()
        env = {
            **base_env(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "XDG_CACHE_HOME": str(home / ".cache"),
        }
        (home / ".config").mkdir(parents=True)
        given = write_targets([opencode_user_target(env)], routed(profile, recorder_url))
        env.update(profile.env)
        key_env = codex_key_env(profile)
        if key_env and profile.key:
            env[key_env] = profile.key
            given.append(key_env)
        return RunLayout(env, project, [*given, *sorted(profile.env)])

    def argv(self, binary: Path, conversation: int, turn: int, prompt: str) -> list[str]:
        if turn > 1:
            return [str(binary), "run", "--continue", prompt]
        return [str(binary), "run", prompt]

    def is_turn_request(self, capture: Capture) -> bool:
        return capture.method == "POST" and capture.path.rstrip("/").endswith("/chat/completions")


CLIENTS: dict[str, ClientSpec] = {
    spec.name: spec for spec in (ClaudeClient(), CodexClient(), OpenCodeClient())
}


def client_spec(name: str) -> ClientSpec:
    try:
        return CLIENTS[name]
    except KeyError:
        raise ValueError(f"unknown client {name!r} (known: {', '.join(CLIENTS)})") from None
