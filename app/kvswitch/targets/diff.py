"""How plans are shown: unified diffs with every secret masked, and digests of target states."""

from __future__ import annotations

import difflib

from kvswitch.core.ledger import digest_bytes, digest_values
from kvswitch.core.models import mask_secret
from kvswitch.targets.base import Plan, Snapshot

#: secrets shorter than this are masked only where they appear as a whole quoted value
MIN_FREE_MASK = 4


def state_digest(snapshot: Snapshot) -> str:
    if snapshot.values is not None:
        return digest_values(snapshot.values)
    return digest_bytes(snapshot.content)


def mask_text(text: str, secrets: list[str]) -> str:
    """Replace every occurrence of each secret (longest first) by its masked form."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        masked = mask_secret(secret)
        if len(secret) >= MIN_FREE_MASK:
            text = text.replace(secret, masked)
        else:
            for quote in ('"', "'"):
                text = text.replace(f"{quote}{secret}{quote}", f"{quote}{masked}{quote}")
    return text


def _display(text: str) -> str:
    return text.lstrip("\ufeff").replace("\r\n", "\n").encode("utf-8", "replace").decode("utf-8")


def render_plan(plan: Plan, show_secrets: bool = False) -> str:
    secrets = [] if show_secrets else plan.secrets
    if plan.new_values is not None:
        lines = [f"=== {plan.location}"]
        for name, value in plan.new_values.items():
            shown = "(delete)" if value is None else mask_text(value, secrets) if secrets else value
            lines.append(f"  {name} = {shown}")
        return "\n".join(lines) + "\n"
    if not plan.changed:
        return ""
    before = mask_text(_display(plan.before), secrets)
    after = mask_text(_display(plan.after or ""), secrets)
    old_name = plan.location if plan.existed else "/dev/null"
    new_name = plan.location if plan.after is not None else "/dev/null"
    diff = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile=old_name, tofile=new_name
    )
    out = []
    for line in diff:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def render_plans(plans: list[Plan], show_secrets: bool = False) -> str:
    """All changed plans' diffs, one after another (empty string when nothing would change)."""
    return "".join(render_plan(plan, show_secrets) for plan in plans if plan.changed)
