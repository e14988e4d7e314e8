"""What the review of the window found (issue #27 item 5), each checked on real widgets and real files:
Use on a local profile whose port is closed warns, a cloud profile's Cache log says why it has none, a
custom kind's avatar is a lettered tile, not a dot."""

from __future__ import annotations

import socket
from typing import Any

from tests.ui.uihelpers import make_profile

from support.net import free_port

SAFE = {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}


def test_use_on_a_local_profile_whose_port_is_closed_warns(qtbot: Any, window: Any, store: Any) -> None:
    store.add(make_profile("stopped", base_url=f"http://127.0.0.1:{free_port()}", env=SAFE))
    qtbot.waitExposed(window)
    assert window.apply_profile("stopped", review=False)
    qtbot.waitUntil(lambda: window.message_bar.level == "warning", timeout=5000)
    assert "nothing answers at 127.0.0.1:" in window.message_bar.text
    assert "Switched Claude Code to “stopped”" in window.message_bar.text  # done, and for which client
    assert set(window.message_bar.action_buttons) == {"review", "undo"}


def test_use_on_a_local_profile_that_answers_does_not_warn(qtbot: Any, window: Any, store: Any) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    try:
        store.add(make_profile("running", base_url=f"http://127.0.0.1:{listener.getsockname()[1]}", env=SAFE))
        qtbot.waitExposed(window)
        assert window.apply_profile("running", review=False)
        task = window._port_task
        qtbot.waitUntil(lambda: not task.running, timeout=5000)
        qtbot.wait(50)
        assert window.message_bar.level == "success"
    finally:
        listener.close()


def test_a_cloud_profile_cache_log_says_it_has_no_server_log_by_nature(qtbot: Any, window: Any,
                                                                        store: Any) -> None:
    store.add(make_profile("vendor", kind="anthropic", base_url="https://api.deepseek.com/anthropic",
                           api_key="sk-test-0000"))
    assert window.apply_profile("vendor", review=False)
    window.build_tabs()
    window.bind_log_to_active()
    text = window.log_panel.status_label.text()
    assert "no server log by nature" in text
    assert "Usage" in text


def test_a_custom_kind_avatar_is_a_lettered_tile(qtbot: Any, window: Any, store: Any) -> None:
    from PySide6.QtCore import QRect
    from PySide6.QtGui import QColor, QImage, QPainter

    store.add(make_profile("zeta", kind="custom", base_url="http://10.0.0.5:9000"))
    qtbot.waitExposed(window)
    index = window.model.index(window.model.row_of("zeta"))
    rect = window.list_view.visualRect(index)
    image = QImage(rect.size(), QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    from PySide6.QtWidgets import QStyleOptionViewItem

    option = QStyleOptionViewItem()
    option.rect = QRect(0, 0, rect.width(), rect.height())
    option.font = window.list_view.font()
    option.palette = window.list_view.palette()
    window.card_delegate.paint(painter, option, index)
    painter.end()
    from kvswitch.ui.profiles.profile_card import GLYPH, PAD

    # the tile fills its square's corners-in (a rounded square, not a small dot): a row near its top is
    # coloured edge to edge, bar the rounding. Not the centre row: the letters, drawn in the page's white,
    # cross it, and a full run's earlier tests can leave a wider font (4 white pixels there in one CI run)
    y = PAD + 4
    row = [image.pixelColor(x, y) for x in range(PAD + 3, PAD + GLYPH - 3)]
    tinted = [c for c in row if c != QColor("white")]
    assert len(tinted) >= len(row) - 2
