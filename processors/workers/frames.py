"""Frames between the crawler and its worker processes, read against a deadline.

A frame is ``<json header length><body length><json header><body>`` (two big-endian unsigned
32-bit lengths). The parent reads with :func:`read_frame`, which never blocks past its deadline
(``select`` then ``os.read`` on the raw descriptor) and refuses a frame over ``max_bytes``
(OverflowError);
the worker, which the parent may kill at any time, reads with plain blocking reads
(:func:`read_frame_blocking`). Pure functions over file objects: thread-safe as long as one
thread owns a pipe.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time
from typing import IO, Any

FRAME = struct.Struct(">II")
_CHUNK = 1 << 20


def pack_frame(header: dict[str, Any], body: bytes = b"") -> bytes:
    """The bytes of one frame."""
    head = json.dumps(header).encode()
    return FRAME.pack(len(head), len(body)) + head + body


def write_frame(stream: IO[bytes], header: dict[str, Any], body: bytes = b"") -> None:
    """Write one frame and flush it."""
    stream.write(pack_frame(header, body))
    stream.flush()


def _read_until(fd: int, size: int, deadline: float) -> bytes:
    parts: list[bytes] = []
    left = size
    while left > 0:
        wait = deadline - time.monotonic()
        if wait <= 0:
            raise TimeoutError
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            raise TimeoutError
        chunk = os.read(fd, min(left, _CHUNK))
        if not chunk:
            raise EOFError("worker ended")
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def read_frame(stream: IO[bytes], deadline: float, max_bytes: int) -> tuple[dict[str, Any], bytes]:
    """One frame from ``stream`` (an unbuffered pipe) by ``deadline`` (``time.monotonic()``).

    Raises TimeoutError past the deadline, EOFError if the writer ended, OverflowError for a
    frame announcing more than ``max_bytes``, ValueError for a header that is not a JSON object.
    """
    fd = stream.fileno()
    head_len, body_len = FRAME.unpack(_read_until(fd, FRAME.size, deadline))
    if head_len + body_len > max_bytes:
        raise OverflowError(f"frame of {head_len + body_len} bytes")
    header = json.loads(_read_until(fd, head_len, deadline))
    if not isinstance(header, dict):
        raise ValueError("frame header is not an object")
    return header, _read_until(fd, body_len, deadline)


def read_frame_blocking(stream: IO[bytes]) -> tuple[dict[str, Any], bytes] | None:
    """One frame, waiting as long as it takes; None once the stream ended."""
    raw = stream.read(FRAME.size)
    if len(raw) != FRAME.size:
        return None
    head_len, body_len = FRAME.unpack(raw)
    head = stream.read(head_len)
    body = stream.read(body_len)
    if len(head) != head_len or len(body) != body_len:
        return None
    header = json.loads(head)
    return (header if isinstance(header, dict) else {}), body
