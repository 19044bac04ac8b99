"""Extract processors: links from HTTP headers, HTML, CSS, JavaScript, sitemaps and robots.txt,
PDFs, RSS/Atom feeds and other XML."""

from processors.extract.extractor_css import ExtractorCSS, ExtractorCSSParams, css_links
from processors.extract.extractor_html import ExtractorHTML, ExtractorHTMLParams
from processors.extract.extractor_http import ExtractorHTTP, ExtractorHTTPParams
from processors.extract.extractor_js import ExtractorJS, ExtractorJSParams, js_links
from processors.extract.extractor_pdf import ExtractorPDF, ExtractorPDFParams
from processors.extract.extractor_sitemap import ExtractorSitemap, ExtractorSitemapParams
from processors.extract.extractor_xml import ExtractorXML, ExtractorXMLParams
from processors.extract.link_resolver import LinkResolver
from processors.extract.sitemap_parser import SitemapReader

__all__ = [
    "ExtractorCSS",
    "ExtractorCSSParams",
    "ExtractorHTML",
    "ExtractorHTMLParams",
    "ExtractorHTTP",
    "ExtractorHTTPParams",
    "ExtractorJS",
    "ExtractorJSParams",
    "ExtractorPDF",
    "ExtractorPDFParams",
    "ExtractorSitemap",
    "ExtractorSitemapParams",
    "ExtractorXML",
    "ExtractorXMLParams",
    "LinkResolver",
    "SitemapReader",
    "css_links",
    "js_links",
]
