"""Checks the relative links of the project's Markdown: every ``[text](target)`` of README.md,
ARCHITECTURE.md and docs/*.md whose target is a path must name a file or folder of the checkout,
and every ``#anchor`` must name a heading of the Markdown file it points into (or of the page
itself), as GitHub and the MkDocs site make them.

Run by ``make docs`` (``python tests/support/doc_links.py [ROOT]``: one line per broken link,
exit 1) and by tests/unit/test_doc_links.py. Links inside code blocks and code spans are not
links; ``http:``, ``https:`` and ``mailto:`` targets are not checked (no network). Pure functions
over files read once; safe to call from any thread.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


@dataclass(frozen=True)
class BrokenLink:
    """A link that does not resolve: the file and line it is on, the target, and why."""

    file: Path
    line: int
    target: str
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: link {self.target!r}: {self.reason}"


def prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of the lines outside fenced code blocks."""
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading (MkDocs' toc gives the same for headings without runs
    of spaces or hyphens): inline markup dropped, lower case, punctuation out, spaces to '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading anchor of a Markdown text; a repeated heading gets -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for _, line in prose_lines(text):
        match = HEADING.match(line)
        if match is None:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


class LinkChecker:
    """Resolves the links of Markdown files against one checkout (``root``); caches each target
    file's anchors. One instance per run; not meant to be shared between threads."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._anchors: dict[Path, set[str]] = {}

    def _anchors_of(self, path: Path) -> set[str]:
        if path not in self._anchors:
            self._anchors[path] = anchors(path.read_text(encoding="utf-8"))
        return self._anchors[path]

    def check_file(self, path: Path) -> list[BrokenLink]:
        """The broken links of one Markdown file."""
        broken: list[BrokenLink] = []
        shown = path.relative_to(self.root) if path.is_relative_to(self.root) else path
        for number, line in prose_lines(path.read_text(encoding="utf-8")):
            for match in LINK.finditer(CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)):
                target = match.group(1)
                reason = self._why_broken(path, target)
                if reason is not None:
                    broken.append(BrokenLink(shown, number, target, reason))
        return broken

    def _why_broken(self, source: Path, target: str) -> str | None:
        if EXTERNAL.match(target) or target.startswith("//"):
            return None
        file_part, _, anchor = target.partition("#")
        if file_part.startswith("/"):
            return "an absolute path: use a path relative to the file"
        resolved = (source.parent / file_part).resolve() if file_part else source.resolve()
        if not resolved.is_relative_to(self.root):
            return "points outside the checkout"
        if not resolved.exists():
            return f"no such file: {resolved.relative_to(self.root)}"
        if anchor and resolved.suffix == ".md" and anchor not in self._anchors_of(resolved):
            return f"no heading with the anchor #{anchor} in {resolved.relative_to(self.root)}"
        return None


def markdown_files(root: Path) -> list[Path]:
    """The files whose links are checked: README.md, ARCHITECTURE.md and docs/**/*.md."""
    files = [root / name for name in ("README.md", "ARCHITECTURE.md") if (root / name).exists()]
    return files + sorted((root / "docs").rglob("*.md"))


def check(root: Path) -> list[BrokenLink]:
    """Every broken link of the checkout at ``root``."""
    checker = LinkChecker(root)
    return [bad for path in markdown_files(checker.root) for bad in checker.check_file(path)]


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else Path(__file__).resolve().parents[2]
    broken = check(root)
    for bad in broken:
        print(bad, file=sys.stderr)
    files = len(markdown_files(root.resolve()))
    print(f"doc links: {files} files, {len(broken)} broken link(s)", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
