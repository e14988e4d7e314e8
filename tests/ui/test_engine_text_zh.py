"""The engines' own words in Chinese: real flows with zh_CN loaded show no English engine template.

A verify against the real llama-server (b11434, ``tests/support/llama.py``), a verify and a connection
test against a closed port, a broken settings file on apply, and a followed log file. Every shown text
is checked against ``engine_text``'s template list; the CLI side is checked to stay English.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from uihelpers import make_profile

from kvswitch.ui import i18n
from kvswitch.ui.control import engine_text
from kvswitch.ui.profiles.diff_dialog import ApplyDialog
from support.llama import RunningServer
from support.llama import llama_server as start_llama_server
from support.net import free_port

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def chinese(qapp: Any) -> Iterator[None]:
    assert i18n.install(qapp, "zh_CN") == "zh_CN"
    yield
    i18n.install(qapp, "en")


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    workdir = tmp_path_factory.mktemp("llama")
    with start_llama_server(workdir, context=4096, metrics=False,
                            log_file=str(workdir / "llama-server.log")) as server:
        yield server


def _apply(window: Any, name: str, monkeypatch: pytest.MonkeyPatch) -> bool:
    monkeypatch.setattr(ApplyDialog, "ask", staticmethod(lambda *a: True))
    window._select(name)
    return bool(window.apply_profile(name))


def _assert_chinese(*texts: str) -> None:
    shown = "\n".join(texts)
    assert engine_text.leftovers(shown) == [], shown
    assert CJK.search(shown), shown


@pytest.mark.real_server
def test_verify_card_speaks_chinese(qtbot: Any, chinese: None, window: Any, store: Any,
                                    llama_server: RunningServer, monkeypatch: pytest.MonkeyPatch) -> None:
    store.add(make_profile("tiny", base_url=llama_server.url, env={"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}))
    assert _apply(window, "tiny", monkeypatch)
    steps: list[str] = []
    window.controller.verify_progressed.connect(
        lambda _text, _f: steps.append(window.verify_card.progress_label.text()))
    with qtbot.waitSignal(window.controller.verify_finished, timeout=90000) as blocker:
        window.verify_action.trigger()
    result = blocker.args[0]
    assert result.verdict == "HIT", result.describe()
    card = window.verify_card
    assert card.verdict_label.text() == "缓存命中"
    assert result.message
    assert card.message_label.text() != result.message
    assert f"{result.cached_tokens}" in card.message_label.text()  # the numbers survive translation
    _assert_chinese(card.message_label.text(), card.evidence_value.text(), card.replay_value.text(),
                    card.diagnosis_label.text(), *steps)
    assert len(card.evidence_value.text().splitlines()) == len(result.evidence)
    assert card.history.table.item(0, 3).text() == "命中"  # the history table's verdict word


def test_failed_verify_and_connection_test_speak_chinese(qtbot: Any, chinese: None, window: Any,
                                                         store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    port = free_port()
    store.add(make_profile("dead", base_url=f"http://127.0.0.1:{port}",
                           env={"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}))
    assert _apply(window, "dead", monkeypatch)
    window.controller.verify_timeout_s = 5.0
    with qtbot.waitSignal(window.controller.verify_finished, timeout=15000) as blocker:
        window.verify_card.verify_button.click()
    result = blocker.args[0]
    assert result.verdict == "ERROR"
    card = window.verify_card
    _assert_chinese(card.message_label.text(), card.diagnosis_label.text())
    assert f"127.0.0.1:{port}" in card.message_label.text()

    editor = window.editor
    editor.name_edit.setText("dead2")
    editor.url_edit.setText(f"http://127.0.0.1:{port}")
    box = editor.models_box
    with qtbot.waitSignal(box.connection_tested, timeout=30000) as tested:
        box.test_button.click()
    report = tested.args[0]
    assert report.outcome == "refused"
    note = box.result_note
    assert note.state == "failed"
    shown = note.title.text() + "\n" + note.text.text()
    _assert_chinese(shown)
    assert not re.search(r"\bFAILED\b|Connection failed|\bFix:|\bfix:", shown)
    assert f"127.0.0.1:{port}" in shown

    # "Fetch models" fails with the same diagnosis, joined into one error line by the engine
    box.result_label.clear()
    box.fetch_button.click()
    qtbot.waitUntil(lambda: box.fetch_button.isEnabled() and box.result_label.text() != "" and "…"
                    not in box.result_label.text(), timeout=30000)
    _assert_chinese(box.result_label.text())
    assert "FAILED" not in box.result_label.text()


def test_broken_settings_file_on_apply_speaks_chinese(chinese: None, window: Any, store: Any, fake_home: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    settings = fake_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"env": {"KEEP": "1"},,}')
    store.add(make_profile("local"))
    assert not _apply(window, "local", monkeypatch)
    text = window.message_bar.text
    assert window.message_bar.level == "error"
    assert f"{settings}:1:" in text  # the file and line stay exact
    _assert_chinese(text)
    assert "not valid JSON" not in text


def test_log_status_speaks_chinese(qtbot: Any, chinese: None, window: Any, store: Any, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    log_file = tmp_path / "server.log"
    log_file.write_text("")
    store.add(make_profile("logged", log={"kind": "file", "path": str(log_file)}))
    assert _apply(window, "logged", monkeypatch)
    label = window.log_panel.status_label
    qtbot.waitUntil(lambda: str(log_file) in label.text() and "…" not in label.text(), timeout=10000)
    _assert_chinese(label.text())
    assert not label.text().startswith("following")


def test_unknown_text_stays_as_the_engine_wrote_it(chinese: None) -> None:
    odd = "llama.cpp said something no template knows"
    assert engine_text.translate(odd) == odd
    assert engine_text.translate("") == ""


def test_english_window_shows_the_engines_text_unchanged(qapp: Any) -> None:
    """With no translator every template comes back as the engine formatted it (CLI and en agree)."""
    assert i18n.install(qapp, "en") == "en"
    samples = [
        "the server reused 1234 of 1300 prompt tokens (94.9%): the prefix cache works.",
        "warm request: cache_n = 1234 of 1300 prompt tokens (decided)",
        "the server answered but reports no prompt-cache numbers. The warm request was not faster either.",
        "following /tmp/x.log (truncated, reading from the start)",
    ]
    for sample in samples:
        assert engine_text.translate(sample) == sample
    assert engine_text.leftovers(samples[0])


def test_every_template_has_a_chinese_translation(chinese: None) -> None:
    """Each template's translation keeps exactly its named fields (a lost {cached} would drop a number)."""
    field = re.compile(r"\{(\w+)\}")
    for template in map(str, (*engine_text.WORDS, *engine_text.TEMPLATES)):
        translated = engine_text._tr(template)
        assert translated != template or not re.search(r"[a-z]{3}", field.sub("", template)), template
        assert sorted(field.findall(translated)) == sorted(field.findall(template)), template


def test_every_connection_failure_the_engine_reports_is_translated(chinese: None) -> None:
    """The engine's own reports for each answer it knows (not a list copied here): a wording changed in
    ``verify.connection`` and not in ``engine_text`` fails this test."""
    from kvswitch.core.models import Profile
    from kvswitch.verify import connection

    url = "http://127.0.0.1:9/v1/messages"
    keyed = Profile.model_validate({"name": "p", "kind": "llama.cpp", "base_url": "http://127.0.0.1:9",
                                    "api_key": "sk-test-123456"})
    bare = Profile.model_validate({"name": "p", "kind": "llama.cpp", "base_url": "http://127.0.0.1:9"})
    reports = [connection._status_report(profile, url, status, "http://127.0.0.1:9/elsewhere",
                                         b'{"error": {"message": "nope"}}', 12)
               for profile in (keyed, bare) for status in (302, 401, 404, 429, 500, 400)]
    reports += [connection._body_report(keyed, url, 200, body, "content", 12)[0]
                for body in (b"<html>hello</html>", b'{"error": {"message": "bad model"}}', b'{"id": 1}')]
    for report in reports:
        assert report is not None
        shown = "\n".join(engine_text.connection_lines(report))
        _assert_chinese(shown)
        assert not re.search(r"\bFAILED\b|\bfix:|server said", shown), shown
        assert engine_text.translate(report.summary) != report.summary
        assert engine_text.translate(report.fix) != report.fix


def test_every_log_reader_status_is_translated(chinese: None, tmp_path: Path) -> None:
    """Real followers on real paths (missing, a directory, a file, a truncated file, a missing program)."""
    from kvswitch.logs.process import ProcessSource
    from kvswitch.logs.sources import DirectoryFollower, FileFollower

    log_file = tmp_path / "server.log"
    statuses = [FileFollower(tmp_path / "missing.log").status]
    follower = FileFollower(tmp_path)
    follower.read_lines()
    statuses.append(follower.status)
    log_file.write_text("one\ntwo\n")
    follower = FileFollower(log_file, start_at_end=False)
    follower.read_lines()
    statuses.append(follower.status)
    log_file.write_text("")
    follower.read_lines()
    statuses.append(follower.status)
    follower.close()
    statuses.append(DirectoryFollower(tmp_path / "no-such-dir").status)
    statuses.append(DirectoryFollower(tmp_path / "empty-dir-to-be").status)
    missing = ProcessSource(["kvswitch-no-such-program-here"])
    statuses.append(missing.status)
    missing.close()
    assert len(set(statuses)) >= 5, statuses
    for status in statuses:
        _assert_chinese(engine_text.translate(status))


def test_every_miss_reason_of_the_log_engine_is_translated(chinese: None) -> None:
    """The llama.cpp reasons (the log table's tooltip) straight from the parser's own table."""
    from kvswitch.logs.parsers import llama_cpp

    reasons = [reason for _pattern, reason, _kind in llama_cpp._REASONS]
    assert len(reasons) >= 10
    for reason in reasons:
        _assert_chinese(engine_text.translate(reason))
    joined = "; ".join(reasons[:2])  # one request with two reasons, as the tracker joins them
    _assert_chinese(engine_text.translate(joined))


def test_hostile_text_comes_back_as_it_was(chinese: None) -> None:
    """A server can put anything in a message: over-long lines are not matched (bounded work), and a
    long multi-line text is still translated line by line."""
    long_line = "following " * 200_000
    assert engine_text.translate(long_line) == long_line
    lines = "\n".join(["following /var/log/llama.log"] * 300)
    shown = engine_text.translate(lines)
    assert shown.count("正在跟踪 /var/log/llama.log") == 300


def test_profile_import_and_a_reviewed_apply_speak_chinese(qtbot: Any, chinese: None, window: Any, store: Any,
                                                           controller: Any, fake_home: Path,
                                                           tmp_path: Path) -> None:
    """Settings ▸ Import with a good and a broken file, and the diff dialog's apply of a broken file."""
    import json

    from kvswitch.ui.shell.settings_dialog import SettingsDialog

    dialog = SettingsDialog(controller)
    qtbot.addWidget(dialog)
    source = tmp_path / "in.json"
    source.write_text(json.dumps({"format": "kvswitch-profiles", "format_version": 1, "profiles": [
        {"name": "gateway", "kind": "openai-compatible", "base_url": "https://gw.example.com/v1"}]}))
    assert dialog.import_from(source)
    _assert_chinese(dialog.status_label.text())
    assert "gateway" in dialog.status_label.text()
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2")
    assert not dialog.import_from(bad)
    _assert_chinese(dialog.status_label.text())
    assert str(bad) in dialog.status_label.text()

    # the same broken-file error, when it reaches the window as one string (apply_failed)
    settings = fake_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"env": {"KEEP": "1"},,}')
    store.add(make_profile("local"))
    from kvswitch.core.errors import ConfigParseError

    with pytest.raises(ConfigParseError) as failed:
        window.controller.plan("local")
    window.controller.apply_failed.emit("local", str(failed.value))  # as the diff dialog passes it on
    text = window.message_bar.text
    _assert_chinese(text)
    assert f"{settings}:1:" in text


def test_client_verify_progress_speaks_chinese(chinese: None) -> None:
    """The real-client run's step texts, as the controller labels them (client name + the engine's step)."""
    assert engine_text.translate("Claude Code: conversation 2, turn 1") == "Claude Code：第 2 个会话，第 1 轮"
    assert engine_text.translate("Codex: done") == "Codex：完成"


def test_the_divergence_reason_verdicts_and_server_lines_speak_chinese(chinese: None) -> None:
    """The verify diagnosis as the engine writes it for two real request bodies, the verdict words of
    cards and tray, and the gallery's server descriptions."""
    from types import SimpleNamespace

    from kvswitch.ui.profiles.identity import kind_description
    from kvswitch.ui.profiles.profile_card import verdict_line
    from kvswitch.verify.diagnose import diagnose_requests

    system = "You are Claude Code. " * 20
    a = {"system": [{"type": "text", "text": "x-billing: cc_version=2.1.332.a1b; " + system}],
         "messages": [{"role": "user", "content": "hello"}]}
    b = {"system": [{"type": "text", "text": "x-billing: cc_version=2.1.332.c9f; " + system}],
         "messages": [{"role": "user", "content": "hello"}]}
    english = diagnose_requests(a, b).describe()
    assert english.startswith("First divergence:")
    shown = engine_text.translate(english)
    assert "首个分歧" in shown
    assert "First divergence" not in shown
    assert verdict_line(SimpleNamespace(verdict="HIT", time="not a time")) == "命中"
    assert verdict_line(SimpleNamespace(verdict="MISS", time="")) == "未命中"
    assert "运行" in kind_description("llama.cpp", "English")
