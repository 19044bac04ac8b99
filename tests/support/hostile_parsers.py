"""Parsers that misbehave for real, run by the PDF worker in place of pypdf (see
test_pdf_worker.py): one never returns, one allocates until its address-space cap ends it."""

from __future__ import annotations

from typing import NoReturn


def spin(data: bytes, max_uris: int, time_limit_s: float) -> NoReturn:
    """Loop forever, ignoring the time limit (as a parser stuck in a cycle would)."""
    while True:
        pass


def hog(data: bytes, max_uris: int, time_limit_s: float) -> NoReturn:
    """Allocate without end (as a decompression bomb would)."""
    blocks = []
    while True:
        blocks.append(bytearray(64 * 1024 * 1024))
