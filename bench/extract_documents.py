"""ExtractorPDF and ExtractorXML costs, and the cost of a mid-fetch abort rule.

Run: ``.venv/bin/python bench/extract_documents.py [ROUNDS]``. Measures, after one warm-up
pass each:

* PDF link extraction (pypdf) in the calling thread and through the worker pool ExtractorPDF
  uses (one worker process; the difference is the price of being able to kill a hung parse),
  on the PDFs of Debian's documentation found on this machine and on synthetic PDFs of 1, 100
  and 1000 pages with 5 link annotations each; and the start of a worker process;
* ExtractorXML on an RSS feed of 1,000 items and an Atom feed of 1,000 entries;
* one ``should_fetch_body_rule`` decision (length + MIME rules) per response head.

Prints a table; asserts nothing.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from crawler import ComponentSpec, CrawlURI, Recording, build_rules
from processors.extract import ExtractorXML
from processors.extract.pdf_links import pdf_uris
from processors.extract.pdf_worker import PdfWorkerPool

REAL_PDFS = [
    Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf"),
    Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf"),
]


def synthetic_pdf(pages: int, links_per_page: int = 5) -> bytes:
    """A PDF of ``pages`` pages, each with ``links_per_page`` URI link annotations."""
    objects: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>", b""]
    kids = []
    for p in range(pages):
        page_no = len(objects) + 1
        annot_nos = [page_no + 1 + i for i in range(links_per_page)]
        refs = b" ".join(b"%d 0 R" % n for n in annot_nos)
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Annots [" + refs + b"] >>"
        )
        for i in range(links_per_page):
            objects.append(
                b"<< /Type /Annot /Subtype /Link /Rect [0 0 10 10] "
                b"/A << /S /URI /URI (http://site.example/p%d/l%d.html) >> >>" % (p, i)
            )
        kids.append(page_no)
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids),
        pages,
    )
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def per_call_ms(fn: Callable[[], object], rounds: int) -> float:
    fn()
    start = time.perf_counter()
    for _ in range(rounds):
        fn()
    return (time.perf_counter() - start) * 1000 / rounds


def feed(kind: str, items: int) -> bytes:
    if kind == "rss":
        body = "".join(
            f"<item><title>t{i}</title><link>http://s.example/n/{i}.html</link>"
            f"<guid>http://s.example/n/{i}.html</guid><description>text {i}</description></item>"
            for i in range(items)
        )
        return f'<?xml version="1.0"?><rss version="2.0"><channel>{body}</channel></rss>'.encode()
    body = "".join(
        f'<entry><title>t{i}</title><link href="/e/{i}.html"/><id>urn:x:{i}</id>'
        f"<summary>text {i}</summary></entry>"
        for i in range(items)
    )
    return f'<feed xmlns="http://www.w3.org/2005/Atom">{body}</feed>'.encode()


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    rows: list[tuple[str, str, str]] = []
    pool = PdfWorkerPool(max_workers=1, max_memory_mb=1024)
    try:
        start = time.perf_counter()
        pool.parse(synthetic_pdf(1), 10, 60)
        rows.append(
            (
                "PDF worker start + first parse",
                "-",
                f"{(time.perf_counter() - start) * 1000:.0f} ms",
            )
        )
        docs: list[tuple[str, bytes]] = [
            (path.name, path.read_bytes()) for path in REAL_PDFS if path.exists()
        ]
        docs += [(f"synthetic {n} pages x 5 links", synthetic_pdf(n)) for n in (1, 100, 1000)]
        for name, data in docs:
            links = len(pdf_uris(data, 100_000, 60).uris)
            n = max(1, rounds if len(data) < 1_000_000 else rounds // 4)
            in_thread = per_call_ms(lambda data=data: pdf_uris(data, 100_000, 60), n)
            worker = per_call_ms(lambda data=data: pool.parse(data, 100_000, 60), n)
            rows.append(
                (
                    f"PDF {name} ({len(data) // 1024} KiB, {links} links)",
                    f"{in_thread:.2f} ms",
                    f"{worker:.2f} ms",
                )
            )
    finally:
        pool.close()
    extractor = ExtractorXML("xml")
    for kind in ("rss", "atom"):
        body = feed(kind, 1000)

        def extract(body: bytes = body, ctype: str = f"application/{kind}+xml") -> None:
            rec = Recording(len(body) + 1)
            rec.write_body(body)
            curi = CrawlURI("http://s.example/feed", status=200, recording=rec)
            curi.content_type = ctype
            extractor.process(curi)

        rows.append(
            (
                f"XML {kind} feed, 1000 items ({len(body) // 1024} KiB)",
                f"{per_call_ms(extract, rounds):.2f} ms",
                "-",
            )
        )
    rule = build_rules(
        [
            ComponentSpec.model_validate(
                {
                    "class": "crawler.decide.ContentLengthDecideRule",
                    "params": {"content_length_threshold": 100_000_000},
                }
            ),
            ComponentSpec.model_validate(
                {
                    "class": "crawler.decide.ContentTypeMatchesRegexDecideRule",
                    "params": {"decision": "REJECT", "regex": "video/.*"},
                }
            ),
        ],
        "bench",
    )
    curi = CrawlURI("http://s.example/v.mp4")
    curi.content_type, curi.content_length = "text/html; charset=utf-8", 12345
    n = 200_000
    start = time.perf_counter()
    for _ in range(n):
        rule.decide(curi)
    rows.append(
        (
            "should_fetch_body_rule, 2 rules, per head",
            f"{(time.perf_counter() - start) * 1e9 / n:.0f} ns",
            "-",
        )
    )
    width = max(len(r[0]) for r in rows)
    print(f"{'case':<{width}}  {'in thread':>12}  {'via worker':>12}")
    for name, a, b in rows:
        print(f"{name:<{width}}  {a:>12}  {b:>12}")


if __name__ == "__main__":
    main()
