"""Sheets: settings overlaid on the URIs of some sites (SURT prefixes or hosts).

:class:`SheetOverlays` resolves a URI's overlay; :func:`compile_sheets` checks sheets against the
order; :mod:`crawler.sheets.sheet_updates` applies sheets changed while the crawl runs.
Heritrix counterpart: ``SheetOverlaysManager`` with ``SurtPrefixesSheetAssociation``.
"""

from crawler.sheets.sheet_compiler import CompiledSheet, compile_sheets, parse_sheet_list
from crawler.sheets.sheet_overlays import Overlay, SheetOverlays

__all__ = ["CompiledSheet", "Overlay", "SheetOverlays", "compile_sheets", "parse_sheet_list"]
