"""Tiny, valid image files (PNG, GIF, ICO) generated in memory for the sample site.

The sample site needs real image bytes so that a crawler's MIME sniffing, digests and WARC records
see ordinary binary payloads. No imaging library is used: PNG is zlib + CRC chunks, GIF uses an
LZW stream that resets its table often enough that every code stays at its minimum width, and ICO
wraps a PNG (valid since Windows Vista, accepted by every browser). Pure functions, thread-safe.
"""

from __future__ import annotations

import struct
import zlib

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def png_bytes(width: int, height: int, seed: int) -> bytes:
    """An RGB PNG of ``width`` x ``height`` pixels: a diagonal gradient tinted by ``seed``."""
    red, green, blue = (seed * 67) % 256, (seed * 151 + 40) % 256, (seed * 29 + 90) % 256
    rows = bytearray()
    for y in range(height):
        rows.append(0)  # filter type "None" for every scanline
        for x in range(width):
            shade = (x + y) * 255 // max(1, width + height - 2)
            rows += bytes(((red + shade) % 256, (green + shade // 2) % 256, (blue - shade) % 256))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        _PNG_SIGNATURE
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", zlib.compress(bytes(rows), 9))
        + _png_chunk(b"IEND", b"")
    )


def _lzw_uncompressed(pixels: bytes, min_code_size: int) -> bytes:
    """LZW-encode ``pixels`` without compressing: a clear code before every pixel pair.

    After a clear code the decoder's table grows by one entry per code from the second one on,
    so two literal codes never reach the next power of two and the width stays min+1 bits.
    """
    clear, end = 1 << min_code_size, (1 << min_code_size) + 1
    width = min_code_size + 1
    codes: list[int] = []
    for start in range(0, len(pixels), 2):
        codes.append(clear)
        codes.extend(pixels[start : start + 2])
    codes.append(end)
    packed = bytearray()
    accumulator = bits = 0
    for code in codes:
        accumulator |= code << bits
        bits += width
        while bits >= 8:
            packed.append(accumulator & 0xFF)
            accumulator >>= 8
            bits -= 8
    if bits:
        packed.append(accumulator & 0xFF)
    return bytes(packed)


def gif_bytes(width: int, height: int, seed: int) -> bytes:
    """A GIF89a of ``width`` x ``height`` pixels: a four-colour checkerboard tinted by ``seed``."""
    palette = b"".join(
        bytes(((seed * 53 + i * 80) % 256, (seed * 97 + i * 40) % 256, (i * 85) % 256))
        for i in range(4)
    )
    pixels = bytes(((x // 4 + y // 4) + seed) % 4 for y in range(height) for x in range(width))
    data = _lzw_uncompressed(pixels, 2)
    blocks = b"".join(
        bytes((len(data[i : i + 255]),)) + data[i : i + 255] for i in range(0, len(data), 255)
    )
    # Logical screen: global colour table present (0x80), 2 bits per primary, 4 entries (size 1).
    screen = struct.pack("<HHBBB", width, height, 0x80 | 0x10 | 0x01, 0, 0)
    image = b"\x2c" + struct.pack("<HHHHB", 0, 0, width, height, 0)
    return b"GIF89a" + screen + palette + image + b"\x02" + blocks + b"\x00" + b"\x3b"


def ico_bytes(size: int, seed: int) -> bytes:
    """A Windows icon holding one ``size`` x ``size`` PNG image (``size`` <= 256)."""
    png = png_bytes(size, size, seed)
    dimension = 0 if size >= 256 else size  # 0 means 256 in an ICONDIRENTRY
    header = struct.pack("<HHH", 0, 1, 1)
    entry = struct.pack("<BBBBHHII", dimension, dimension, 0, 0, 1, 32, len(png), 6 + 16)
    return header + entry + png
