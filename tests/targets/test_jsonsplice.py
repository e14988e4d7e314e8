"""In-place JSON edits always parse to the wanted data, and untouched members keep their bytes."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kvswitch.targets.jsonsplice import splice_json

keys = st.sampled_from(["a", "b", "env", "model", "hooks", "ü"])
leaves = st.one_of(
    st.text(max_size=5), st.integers(), st.booleans(), st.none(), st.lists(st.integers(), max_size=3)
)
values = st.recursive(leaves, lambda inner: st.dictionaries(keys, inner, max_size=4), max_leaves=8)
objects = st.dictionaries(keys, values, max_size=5)


@st.composite
def edits(draw: Any, original: dict[str, Any]) -> dict[str, Any]:
    new = json.loads(json.dumps(original))
    for _ in range(draw(st.integers(0, 4))):
        action = draw(st.sampled_from(["set", "delete", "env"]))
        if action == "set":
            new[draw(keys)] = draw(values)
        elif action == "delete" and new:
            del new[draw(st.sampled_from(sorted(new)))]
        else:
            env = new.get("env")
            if not isinstance(env, dict):
                env = new["env"] = {}
            env[draw(st.sampled_from(["X", "Y", "Z"]))] = draw(st.text(max_size=4))
    return new


@settings(max_examples=300, deadline=None)
@given(data=st.data(), original=objects, indent=st.sampled_from([2, 4, "\t", None]))
def test_splice_matches_wanted_data_and_keeps_untouched_members(
    data: st.DataObject, original: dict[str, Any], indent: int | str | None
) -> None:
    text = json.dumps(original, indent=indent, ensure_ascii=False) + "\n"
    new = data.draw(edits(original))
    unit = indent if isinstance(indent, str) else " " * (indent or 2)
    result = splice_json(text, new, unit)
    assert result is not None, "in-place edit fell back to a full rewrite"
    assert json.dumps(json.loads(result), sort_keys=True) == json.dumps(new, sort_keys=True)
    if indent is not None:
        for key, value in original.items():
            if key in new and json.dumps(new[key]) == json.dumps(value):
                member = json.dumps({key: value}, indent=indent, ensure_ascii=False)[1:-1].strip("\n")
                assert member.rstrip(",") in result, f"member {key!r} was re-rendered"
