"""ExtractorPDF as a processor: which responses it reads, L links resolved against the PDF,
the size cap, the outlink cap, and its annotations (a real worker process parses)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.pdf_samples import encrypted_pdf, link_pdf
from support.processor_context import make_context

from crawler import CrawlURI, Recording
from processors.extract import ExtractorPDF, ExtractorPDFParams

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]


@pytest.fixture
def extractor(tmp_path: Path) -> Iterator[ExtractorPDF]:
    proc = ExtractorPDF("pdf", ExtractorPDFParams(max_size_bytes=4096, max_outlinks=3))
    proc.start(make_context(tmp_path))
    yield proc
    proc.stop()


def run(proc: ExtractorPDF, uri: str, body: bytes, ctype: str | None) -> CrawlURI:
    rec = Recording()
    rec.write_body(body)
    curi = CrawlURI(uri, hop_path="L", status=200, content_type=ctype, recording=rec)
    proc.process(curi)
    return curi


def test_links_of_a_pdf_are_l_hops_resolved_against_it(extractor: ExtractorPDF) -> None:
    body = link_pdf("../other.html", "https://elsewhere.example/x", "mailto:someone@x.example")
    curi = run(extractor, "http://site.example/docs/a.pdf", body, "application/pdf")
    assert [(link.uri, link.hop, link.context) for link in curi.outlinks] == [
        ("http://site.example/other.html", "L", "pdf/URI"),
        ("https://elsewhere.example/x", "L", "pdf/URI"),
    ]
    assert curi.annotations == []


def test_which_responses_are_read(extractor: ExtractorPDF) -> None:
    body = link_pdf("/x.html")
    assert run(extractor, "http://s.example/a", body, "application/x-pdf").outlinks
    assert run(extractor, "http://s.example/a.pdf", body, None).outlinks
    assert not run(extractor, "http://s.example/a.pdf", body, "text/html").outlinks
    assert not run(extractor, "http://s.example/a.pdf", b"<html>not a pdf", None).outlinks


def test_caps_and_annotations(extractor: ExtractorPDF) -> None:
    many = run(extractor, "http://s.example/m.pdf", link_pdf(*(f"/{i}" for i in range(5))), None)
    assert len(many.outlinks) == 3 and many.annotations == ["dol:2"]
    big = link_pdf("/x.html") + b"%" * 5000
    too_large = run(extractor, "http://s.example/big.pdf", big, "application/pdf")
    assert too_large.outlinks == [] and too_large.annotations == ["pdfTooLarge"]
    secret = run(extractor, "http://s.example/s.pdf", encrypted_pdf(), "application/pdf")
    assert secret.annotations == ["pdfEncrypted"]
    assert any("PDF workers started" in line for line in extractor.report())
