"""Typed parameter models for configurable components (processors, decide rules, policies).

A component declares its parameters as a frozen pydantic model and binds it through its generic
argument: ``class FetchHTTP(Processor[FetchHTTPParams])``. :func:`params_model_of` finds that model
so the order loader can validate the ``params:`` mapping of the YAML before anything starts.
"""

from __future__ import annotations

import typing
from typing import Any

from pydantic import BaseModel, ConfigDict


class Params(BaseModel):
    """Base of every parameter model: immutable, unknown keys rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class NoParams(Params):
    """For components that take no parameters."""


def params_model_of(cls: type[Any], generic_base: type[Any]) -> type[Params]:
    """The Params subclass bound to ``generic_base`` somewhere in ``cls``'s ancestry.

    Walks ``__orig_bases__`` (PEP 560) from ``cls`` upwards; a class that binds no model gets
    :class:`NoParams`.
    """
    for klass in cls.__mro__:
        for base in getattr(klass, "__orig_bases__", ()):
            origin = typing.get_origin(base)
            if origin is None or not (
                isinstance(origin, type) and issubclass(origin, generic_base)
            ):
                continue
            for arg in typing.get_args(base):
                if isinstance(arg, type) and issubclass(arg, Params):
                    return arg
    return NoParams
