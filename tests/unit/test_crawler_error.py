"""Every exception class of crawler/ and processors/ derives from CrawlerError."""

from __future__ import annotations

import importlib
import inspect
import re

import pytest
from test_layering import module_files

from crawler.crawler_error import CrawlerError
from crawler.urls import UriError, normalize


def exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined at the top level of a module, by qualified name."""
    found: dict[str, type[BaseException]] = {}
    for name in module_files():
        if name.endswith(".__main__"):
            continue  # an entry point: importing it runs the command line
        module = importlib.import_module(name)
        for obj in vars(module).values():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and obj.__module__ == module.__name__
            ):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return found


def test_every_exception_class_derives_from_crawler_error() -> None:
    classes = exception_classes()
    assert len(classes) >= 24  # the walk reached the modules that define them
    assert sorted(n for n, cls in classes.items() if not issubclass(cls, CrawlerError)) == []
    # Every one is named in the hierarchy drawn in CrawlerError's module docstring.
    drawn = importlib.import_module("crawler.crawler_error").__doc__ or ""
    missing = [n for n in classes if not re.search(rf"\b{n.rpartition('.')[2]}\b", drawn)]
    assert missing == []


def test_callers_catching_the_builtin_base_still_catch_the_error() -> None:
    with pytest.raises(ValueError):
        normalize("http://[::1/")
    with pytest.raises(CrawlerError) as caught:
        normalize("http://[::1/")
    assert isinstance(caught.value, UriError)
