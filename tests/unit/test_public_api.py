"""The packages' public names (``__all__``) all resolve, though they are imported on first use."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize(
    "package", ["crawler", "crawler.console", "crawler.order", "crawler.schedule"]
)
def test_every_public_name_resolves(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, name
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError):
        _ = module.NoSuchName
