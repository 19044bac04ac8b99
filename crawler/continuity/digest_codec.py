"""The bytes of a digest index: one key per payload digest, one compact value per first capture.

Both backends (LevelDB and Redis) store exactly these bytes, so an index moves from one to the
other unchanged (a ``--workers`` crawl's Redis index is copied into the job's LevelDB at its end).

Key: a ``sha1:<32 base32 chars>`` digest as its 20 raw bytes; any other digest (another
algorithm, odd spelling) as ``b"~"`` + its text (+ ``b"\\0"`` if that made exactly 20 bytes): a
key is a sha1 exactly when it is 20 bytes long. Value: a version byte, then
``uri`` and ``warc_filename`` as varint-length-prefixed UTF-8, the ``warc_date`` (flag bit 4: a
``YYYY-MM-DDThh:mm:ss[.f…]Z`` date as varint seconds since 1970, a byte of fraction digits and
the fraction as a varint, ~7 bytes instead of 20-24; else a string), then the record id (16
bytes for a ``urn:uuid:`` id, else a length-prefixed string, flag bit 1 says which), then the
offset as a varint (flag bit 2: present). A backend may store the WARC file name once apart and
give each value its 8-byte :func:`file_ref` instead (flag bit 8; the Redis index does: a crawl's
records share a few file names, ~50 bytes each). A ``urn:uuid`` id is printed back in lower case, as
the writer makes it. Pure functions; thread-safe.
"""

from __future__ import annotations

import base64
import binascii
import calendar
import functools
import hashlib
import re
import time
import uuid
from collections.abc import Callable

from crawler.continuity.digest_entry import DigestEntry
from crawler.crawler_error import CrawlerError

VERSION = 1
_UUID_ID = 1
_HAS_OFFSET = 2
_PACKED_DATE = 4
_FILE_REF = 8
FILE_REF_BYTES = 8
_DATE = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?Z\Z")
_OTHER = b"~"
_SHA1_BYTES = 20
_UUID_PREFIX = "urn:uuid:"


class DigestCodecError(CrawlerError, ValueError):
    """Bytes that are not a digest index value of a known version."""


@functools.lru_cache(maxsize=4096)
def digest_key(payload_digest: str) -> bytes:
    """The index key of ``payload_digest`` (``sha1:…`` base32, as WARC-Payload-Digest has it).
    Cached: a fetch asks for the same key of each layer of an index, then again to add it."""
    if payload_digest.startswith("sha1:") and len(payload_digest) == 37:
        raw = _sha1_of_base32(payload_digest[5:])
        if raw is not None:
            return raw
        try:
            return base64.b32decode(payload_digest[5:])
        except (binascii.Error, ValueError):
            pass
    key = _OTHER + payload_digest.encode("utf-8", "surrogateescape")
    return key + b"\0" if len(key) == _SHA1_BYTES else key


def _sha1_of_base32(text: str) -> bytes | None:
    """The 20 bytes whose base32 is ``text`` (32 upper-case base32 characters, no padding), as
    ``base64.b32decode`` gives them; None for any other text (``b32decode`` then decides).

    ``b32decode`` is a Python loop in Python 3.11; this maps the characters to their 5-bit
    values with one ``bytes.translate`` and packs the 32 values into 160 bits by merging
    neighbouring fields five times (8-bit fields of 5 bits into 16-bit fields of 10, ... into
    one of 160): the inverse of :func:`crawler.recording.sha1_base32`. Pure, so thread-safe.
    """
    try:
        values = text.encode("ascii").translate(_BASE32_VALUES)
    except UnicodeEncodeError:
        return None
    if len(values) != 32 or _NOT_BASE32 in values:
        return None
    n = int.from_bytes(values, "big")
    n = n & _LOW_5_OF_16 | (n >> 3) & (_LOW_5_OF_16 << 5)
    n = n & _LOW_10_OF_32 | (n >> 6) & (_LOW_10_OF_32 << 10)
    n = n & _LOW_20_OF_64 | (n >> 12) & (_LOW_20_OF_64 << 20)
    n = n & _LOW_40_OF_128 | (n >> 24) & (_LOW_40_OF_128 << 40)
    n = n & _LOW_80 | (n >> 48) & (_LOW_80 << 80)
    return n.to_bytes(_SHA1_BYTES, "big")


def _low_bits_of_each(slot_bits: int, keep_bits: int, slots: int) -> int:
    """A mask of the low ``keep_bits`` of each of ``slots`` fields ``slot_bits`` wide."""
    field = (1 << keep_bits) - 1
    return sum(field << (i * slot_bits) for i in range(slots))


_NOT_BASE32 = 0xFF
_BASE32_VALUES = bytes(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".find(bytes([c])) & 0xFF for c in range(256)
)
_LOW_5_OF_16 = _low_bits_of_each(16, 5, 16)
_LOW_10_OF_32 = _low_bits_of_each(32, 10, 8)
_LOW_20_OF_64 = _low_bits_of_each(64, 20, 4)
_LOW_40_OF_128 = _low_bits_of_each(128, 40, 2)
_LOW_80 = (1 << 80) - 1


def digest_of_key(key: bytes) -> str:
    """The payload digest whose :func:`digest_key` is ``key``."""
    if len(key) == _SHA1_BYTES:
        return "sha1:" + base64.b32encode(key).decode("ascii")
    return key[1:].rstrip(b"\0").decode("utf-8", "surrogateescape")


def _varint(value: int, out: bytearray) -> None:
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _read_varint(raw: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = raw[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _put_text(text: str, out: bytearray) -> None:
    data = text.encode("utf-8", "surrogateescape")
    size = len(data)
    if size < 0x80:  # a one-byte length, as _varint writes it
        out.append(size)
    else:
        _varint(size, out)
    out += data


def _get_text(raw: bytes, pos: int) -> tuple[str, int]:
    size, pos = _read_varint(raw, pos)
    end = pos + size
    if end > len(raw):
        raise IndexError("string past the end")
    return raw[pos:end].decode("utf-8", "surrogateescape"), end


def _pack_date(date: str) -> bytes | None:
    """``date`` packed (seconds, fraction digits, fraction), or None if it would not come back
    exactly the same from :func:`_unpack_date`."""
    match = _DATE.match(date)
    if match is None:
        return None
    seconds = _seconds_of(date[:19])
    fraction = match.group(7) or ""
    if seconds is None or not fraction.isascii():
        return None
    # An ASCII fraction comes back as it was: its digits, zero-padded to their count.
    out = bytearray()
    _varint(seconds, out)
    out.append(len(fraction))
    if fraction:
        _varint(int(fraction), out)
    return bytes(out)


@functools.lru_cache(maxsize=256)
def _seconds_of(text: str) -> int | None:
    """Seconds since 1970 of a ``YYYY-MM-DDThh:mm:ss`` the date pattern matched, or None if
    :func:`_unpack_date` would not print it back the same (a year before 1970, a 30 February,
    digits other than ASCII). Cached: a crawl's records share their seconds."""
    fields = [int(text[0:4]), int(text[5:7]), int(text[8:10])]
    fields += [int(text[11:13]), int(text[14:16]), int(text[17:19])]
    if fields[0] < 1970:
        return None
    seconds = calendar.timegm((*fields, 0, 0, 0))
    return seconds if _second_text(seconds) == text else None


@functools.lru_cache(maxsize=256)
def _second_text(seconds: int) -> str:
    """``YYYY-MM-DDThh:mm:ss`` of ``seconds`` since 1970 (cached, as :func:`_seconds_of`)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))


def _unpack_date(raw: bytes, pos: int) -> tuple[str, int]:
    seconds, pos = _read_varint(raw, pos)
    digits = raw[pos]
    pos += 1
    text = _second_text(seconds)
    if digits:
        fraction, pos = _read_varint(raw, pos)
        text += f".{fraction:0{digits}d}"
    return text + "Z", pos


def file_ref(filename: str) -> bytes:
    """The 8 bytes that stand for ``filename`` in a value (a hash: no registry to agree on)."""
    return hashlib.blake2b(filename.encode("utf-8", "surrogateescape"), digest_size=8).digest()


def encode_entry(entry: DigestEntry, by_ref: bool = False) -> bytes:
    """``entry`` as a value (see the module docstring); ``by_ref``: its file name as its
    :func:`file_ref` (the caller keeps the name)."""
    flags = 0
    record_id = entry.warc_record_id or ""
    raw_id: bytes | None = None
    if record_id.startswith(_UUID_PREFIX):
        try:
            parsed = uuid.UUID(record_id[len(_UUID_PREFIX) :].strip("<>"))
        except ValueError:
            parsed = None
        if parsed is not None and str(parsed) == record_id[len(_UUID_PREFIX) :]:
            raw_id = parsed.bytes
            flags |= _UUID_ID
    if entry.warc_offset is not None:
        flags |= _HAS_OFFSET
    packed_date = _pack_date(entry.warc_date)
    if packed_date is not None:
        flags |= _PACKED_DATE
    by_ref = by_ref and bool(entry.warc_filename)
    if by_ref:
        flags |= _FILE_REF
    out = bytearray((VERSION, flags))
    _put_text(entry.uri, out)
    if packed_date is not None:
        out += packed_date
    else:
        _put_text(entry.warc_date, out)
    if by_ref:
        out += file_ref(entry.warc_filename or "")
    else:
        _put_text(entry.warc_filename or "", out)
    if raw_id is not None:
        out += raw_id
    else:
        _put_text(record_id, out)
    if entry.warc_offset is not None:
        _varint(entry.warc_offset, out)
    return bytes(out)


def decode_entry(raw: bytes, file_name: Callable[[bytes], str | None] | None = None) -> DigestEntry:
    """The entry :func:`encode_entry` made ``raw`` from; :class:`DigestCodecError` if none.
    ``file_name(ref)`` gives the name of a file stored by reference (None: unknown)."""
    if len(raw) < 2 or raw[0] != VERSION:
        raise DigestCodecError(f"not a digest index value (version {raw[:1]!r})")
    flags = raw[1]
    try:
        uri, pos = _get_text(raw, 2)
        if flags & _PACKED_DATE:
            date, pos = _unpack_date(raw, pos)
        else:
            date, pos = _get_text(raw, pos)
        filename: str | None
        if flags & _FILE_REF:
            ref = raw[pos : pos + FILE_REF_BYTES]
            if len(ref) < FILE_REF_BYTES:
                raise IndexError("file reference past the end")
            pos += FILE_REF_BYTES
            filename = file_name(ref) if file_name is not None else None
        else:
            filename, pos = _get_text(raw, pos)
        if flags & _UUID_ID:
            if pos + 16 > len(raw):
                raise IndexError("record id past the end")
            record_id: str = _UUID_PREFIX + str(uuid.UUID(bytes=raw[pos : pos + 16]))
            pos += 16
        else:
            record_id, pos = _get_text(raw, pos)
        offset: int | None = None
        if flags & _HAS_OFFSET:
            offset, pos = _read_varint(raw, pos)
    except IndexError as exc:
        raise DigestCodecError(f"truncated digest index value ({exc})") from None
    return DigestEntry(uri, date, record_id or None, filename or None, offset)
