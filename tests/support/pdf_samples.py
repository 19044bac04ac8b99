"""PDFs for the tests, written byte by byte: one with URI link annotations, and hostile ones."""

from __future__ import annotations

import functools
import io
import zlib


def raw_pdf(objects: list[bytes], root: int = 1, trailer_extra: bytes = b"") -> bytes:
    """A PDF of ``objects`` (bodies of objects 1..n) with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root %d 0 R %s>>\n" % (len(objects) + 1, root, trailer_extra)
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def _page_with_annots(annots: bytes, *extra: bytes) -> list[bytes]:
    return [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Annots " + annots + b" >>",
        *extra,
    ]


def link_pdf(*uris: str) -> bytes:
    """A one-page PDF whose link annotations go to ``uris``."""
    annots = [
        b"<< /Type /Annot /Subtype /Link /Rect [0 0 10 10] /A << /S /URI /URI (%s) >> >>"
        % uri.encode()
        for uri in uris
    ]
    refs = b"[" + b" ".join(b"%d 0 R" % (4 + i) for i in range(len(uris))) + b"]"
    return raw_pdf(_page_with_annots(refs, *annots))


def deeply_nested_pdf(depth: int = 100_000) -> bytes:
    """Annotations given as an array nested ``depth`` deep (a recursive parser's bane)."""
    return raw_pdf(_page_with_annots(b"4 0 R", b"[" * depth + b"]" * depth))


def broken_pdf() -> bytes:
    """A PDF header followed by junk: no objects, no cross-reference table."""
    return b"%PDF-1.7\n" + bytes(range(256)) * 64


def encrypted_pdf() -> bytes:
    """A PDF that needs a user password."""
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(100, 100)
    writer.encrypt("user-secret", "owner-secret")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@functools.cache
def xref_stream_bomb(mib: int = 256) -> bytes:
    """A PDF 1.5 whose cross-reference stream inflates to ``mib`` MiB of zeros (about 1/1000
    of that compressed): a decompression bomb read before any page."""
    deflate = zlib.compressobj(9)
    chunk = bytes(1 << 20)
    data = b"".join(deflate.compress(chunk) for _ in range(mib)) + deflate.flush()
    out = bytearray(b"%PDF-1.5\n")
    offset = len(out)
    out += b"1 0 obj\n<< /Type /XRef /Size 2 /W [1 4 2] /Root 1 0 R /Filter /FlateDecode "
    out += b"/Length %d >>\nstream\n" % len(data)
    out += data + b"\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n" % offset
    return bytes(out)
