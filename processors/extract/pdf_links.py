"""The URIs a PDF links to, read with pypdf (the one module that uses it).

:func:`pdf_uris` reads the document's link annotations whose action is a URI action (``/A <<
/S /URI /URI (http://...) >>``), page by page, and the document's ``/OpenAction`` when it is a
URI action. An encrypted PDF is opened with the empty user password (most are encrypted only
against editing); one that needs a real password is reported as ``encrypted``. pypdf runs in
non-strict mode (broken xref tables are rebuilt, as viewers do). Content streams are never
decompressed, so a stream bomb costs nothing here; what pypdf may still do wrong on a hostile
file (loop, recurse, allocate) is bounded by the worker process this runs in
(:mod:`processors.extract.pdf_worker`).

Pure function, thread-safe (each call has its own reader).
"""

from __future__ import annotations

import io
import time
from dataclasses import dataclass, field
from typing import Any

_MAX_URI_CHARS = 16384


@dataclass
class PdfLinks:
    """What :func:`pdf_uris` found: ``uris`` in document order, ``dropped`` over the cap, and
    ``error`` (``encrypted``, ``time``, or the parser's complaint) when it stopped early."""

    uris: list[str] = field(default_factory=list)
    dropped: int = 0
    error: str | None = None


def _text(value: Any) -> str | None:
    """A PDF string (text or bytes) as text, or None."""
    if isinstance(value, bytes):
        return value.decode("latin-1")
    if isinstance(value, str):
        return str(value)
    return None


def _uri_of_action(action: Any) -> str | None:
    if action is None:
        return None
    action = action.get_object() if hasattr(action, "get_object") else action
    if not hasattr(action, "get") or action.get("/S") != "/URI":
        return None
    uri = _text(action.get("/URI"))
    if uri is None or len(uri) > _MAX_URI_CHARS:
        return None
    return uri.strip() or None


def pdf_uris(data: bytes, max_uris: int, time_limit_s: float) -> PdfLinks:
    """The URI actions of the PDF ``data``, at most ``max_uris`` (see the module docstring).

    ``time_limit_s`` is checked between annotations: a document with very many of them stops
    with ``error="time"`` and keeps what was read. Never raises for bad input.
    """
    from pypdf import PdfReader

    found = PdfLinks()
    deadline = time.monotonic() + time_limit_s

    def add(uri: str | None) -> None:
        if uri is None:
            return
        if len(found.uris) < max_uris:
            found.uris.append(uri)
        else:
            found.dropped += 1

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            found.error = "encrypted"
            return found
        catalog: Any = reader.trailer["/Root"].get_object()
        if hasattr(catalog, "get"):
            add(_uri_of_action(catalog.get("/OpenAction")))
        for page in reader.pages:
            annots = page.get("/Annots")
            if annots is None:
                continue
            for annot in annots.get_object():
                if time.monotonic() > deadline:
                    found.error = "time"
                    return found
                annot = annot.get_object()
                if hasattr(annot, "get") and annot.get("/Subtype") == "/Link":
                    add(_uri_of_action(annot.get("/A")))
    except RecursionError:
        found.error = "nesting too deep"
    except MemoryError:
        found.error = "out of memory"
    except Exception as exc:  # noqa: BLE001 - pypdf raises many kinds on hostile input
        found.error = f"{type(exc).__name__}: {exc}"[:200]
    return found
