"""A small description of a JSON document's shape, to read KV Switch's own files without pydantic.

The window lists its cards before pydantic has been imported (the import alone costs about a third of
the start-up). A ``Spec`` accepts only the *canonical* form of a document: exact JSON types, every
value already in the form the pydantic model would give it (as KV Switch itself writes the file).
Anything else raises ``NotCanonical`` and the caller hands the document to the pydantic model, which
decides (coerces a lax value, or names the error). So the fast reading never accepts what the model
refuses and never gives a different value: tests compare both on real and hostile files.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

REQUIRED: Any = object()


class NotCanonical(ValueError):
    """Only the full model can decide about this value."""


class Spec:
    def read(self, value: Any) -> Any:
        raise NotImplementedError


class Text(Spec):
    """A ``str`` that pydantic takes as it is (valid UTF-8: a lone surrogate is refused there)."""

    def read(self, value: Any) -> Any:
        if type(value) is not str:
            raise NotCanonical("not a string")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise NotCanonical("not valid text") from None
        return value


class Exact(Spec):
    """A value of exactly this JSON type (``bool`` is no ``int`` here, nor ``int`` a ``float``)."""

    def __init__(self, kind: type, low: float | None = None, high: float | None = None):
        self.kind, self.low, self.high = kind, low, high

    def read(self, value: Any) -> Any:
        if type(value) is not self.kind:
            raise NotCanonical(f"not a {self.kind.__name__}")
        number: Any = value
        if number != number or (self.low is not None and number < self.low) or \
                (self.high is not None and number > self.high):
            raise NotCanonical("out of range")
        return value


class OneOf(Spec):
    def __init__(self, values: Iterable[str]):
        self.values = frozenset(values)

    def read(self, value: Any) -> Any:
        if type(value) is not str or value not in self.values:
            raise NotCanonical("not one of the allowed values")
        return value


class Optional(Spec):
    def __init__(self, inner: Spec):
        self.inner = inner

    def read(self, value: Any) -> Any:
        return None if value is None else self.inner.read(value)


class ListOf(Spec):
    def __init__(self, inner: Spec):
        self.inner = inner

    def read(self, value: Any) -> Any:
        if type(value) is not list:
            raise NotCanonical("not a list")
        return [self.inner.read(item) for item in value]


class DictOf(Spec):
    """An object with text keys, every value of one spec."""

    def __init__(self, inner: Spec):
        self.inner = inner

    def read(self, value: Any) -> Any:
        if type(value) is not dict:
            raise NotCanonical("not an object")
        return {Text().read(key): self.inner.read(item) for key, item in value.items()}


class Checked(Spec):
    """``inner``, then a rule that must return the value unchanged (a rule that raises or would change
    it means the model has to decide)."""

    def __init__(self, inner: Spec, rule: Callable[[Any], Any]):
        self.inner, self.rule = inner, rule

    def read(self, value: Any) -> Any:
        value = self.inner.read(value)
        try:
            ruled = self.rule(value)
        except (ValueError, TypeError) as exc:
            raise NotCanonical(str(exc)) from None
        if ruled != value:
            raise NotCanonical("not in its canonical form")
        return value


class Model(Spec):
    """An object with named fields and their defaults (``REQUIRED`` when none); ``extra`` keys are
    ignored or refused as the model does; ``check`` sees the whole filled object."""

    def __init__(self, fields: dict[str, tuple[Spec, Any]], *, forbid_extra: bool,
                 check: Callable[[dict[str, Any]], None] | None = None):
        self.fields, self.forbid_extra, self.check = fields, forbid_extra, check

    def read(self, value: Any) -> Any:
        if type(value) is not dict:
            raise NotCanonical("not an object")
        if self.forbid_extra and not value.keys() <= self.fields.keys():
            raise NotCanonical("unknown fields")
        out: dict[str, Any] = {}
        for name, (spec, default) in self.fields.items():
            if name in value:
                out[name] = spec.read(value[name])
            elif default is REQUIRED:
                raise NotCanonical(f"{name} is missing")
            else:
                out[name] = copy.deepcopy(default)
        if self.check is not None:
            try:
                self.check(out)
            except ValueError as exc:
                raise NotCanonical(str(exc)) from None
        return out
