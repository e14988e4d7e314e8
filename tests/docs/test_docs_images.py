"""Every image README.md and docs/*.md show is a committed screenshot (a renamed state breaks no page)."""

from __future__ import annotations

import re

from doccommands import REPO, pages


def test_every_image_the_docs_show_exists() -> None:
    shown = []
    for page in pages():
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for target in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", line):
                shown.append((page, number, target))
    assert shown
    missing = [f"{page.relative_to(REPO)}:{number}: {target}" for page, number, target in shown
               if not (page.parent / target).is_file()]
    assert not missing, "images the docs show that do not exist:\n" + "\n".join(missing)
