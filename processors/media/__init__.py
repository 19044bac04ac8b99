"""Media capture: the video and audio of pages, found with yt-dlp in killable worker
processes, their renditions queued for FetchHTTP (HLS and DASH segments included)."""

from processors.media.extractor_media import ExtractorMedia, ExtractorMediaParams
from processors.media.extractor_url_index import ExtractorUrlIndex
from processors.media.media_page_rule import MediaPageDecideRule, media_page_reason

__all__ = [
    "ExtractorMedia",
    "ExtractorMediaParams",
    "ExtractorUrlIndex",
    "MediaPageDecideRule",
    "media_page_reason",
]
