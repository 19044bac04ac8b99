"""BloomBits: a Bloom filter's bit array in a memory-mapped file, and its sizing formulas.

File layout (little-endian): a 64-byte header — magic ``b"CRWLBLM1"``, u32 layout version, u32
``k`` (hash functions), u64 ``m`` (bits), u64 count of items added, u64 expected items, f64
target false-positive rate, 8-byte ASCII fingerprint function name (NUL padded), 8 spare bytes —
then ``ceil(m / 8)`` bytes of bits (bit ``j`` is bit ``j % 8`` of byte ``j // 8``). The file is
mapped shared, so only touched pages take memory, every write is in the page cache at once (a
kill -9 loses nothing; a power loss may) and :meth:`BloomBits.flush` makes it durable. Its disk
blocks are all allocated when it is opened (``posix_fallocate``): a page first touched through
the mapping on a full disk would kill the process with SIGBUS, so a disk too small for the
filter is an error at open instead.

Bit positions follow Guava's ``MURMUR128_MITZ_64`` (Kirsch-Mitzenmacher): the 128-bit hash is
read as two little-endian 64-bit halves ``h1``, ``h2``; the i-th position (i = 0..k-1) is
``((h1 + i * h2) mod 2^64, top bit cleared) mod m``. Not thread-safe: the owning filter locks.
"""

from __future__ import annotations

import errno
import math
import mmap
import os
import struct
from pathlib import Path

MAGIC = b"CRWLBLM1"
VERSION = 1
HEADER = struct.Struct("<8sIIQQQd8s8x")
HEADER_SIZE = HEADER.size
_COUNT_AT = 24
_COUNT = struct.Struct("<Q")
_M64 = (1 << 64) - 1
_M63 = (1 << 63) - 1


def optimal_bits(expected_items: int, false_positive_rate: float) -> int:
    """m = ceil(-n ln p / (ln 2)^2): bits for ``n`` items at false-positive rate ``p``."""
    return max(8, math.ceil(-expected_items * math.log(false_positive_rate) / math.log(2) ** 2))


def optimal_hashes(bits: int, expected_items: int) -> int:
    """k = round(m / n * ln 2), at least 1."""
    return max(1, round(bits / expected_items * math.log(2)))


def expected_fpr(bits: int, hashes: int, items: int) -> float:
    """(1 - e^(-k n / m))^k: the false-positive rate after ``items`` insertions."""
    return float((1.0 - math.exp(-hashes * items / bits)) ** hashes)


class BloomBits:
    """The mapped bit array (open with :meth:`create_or_open`)."""

    def __init__(
        self, path: Path, fd: int, mm: mmap.mmap, bits: int, hashes: int, count: int
    ) -> None:
        self.path = path
        self._fd = fd
        self._mm = mm
        self.bits = bits
        self.hashes = hashes
        self.count = count
        fields = HEADER.unpack_from(mm, 0)
        self.expected_items: int = fields[5]
        self.false_positive_rate: float = fields[6]
        self.function: str = fields[7].rstrip(b"\x00").decode("ascii", "replace")

    @classmethod
    def create_or_open(
        cls, path: Path, expected_items: int, false_positive_rate: float, function: str
    ) -> BloomBits:
        """Map ``path``, creating it sized for the given figures if it does not exist.

        An existing file keeps its own geometry (see ``expected_items`` etc. on the result).
        Raises ``ValueError`` for a file that is not a Bloom file of this layout.
        """
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size == 0:
                bits = optimal_bits(expected_items, false_positive_rate)
                hashes = optimal_hashes(bits, expected_items)
                header = HEADER.pack(
                    MAGIC,
                    VERSION,
                    hashes,
                    bits,
                    0,
                    expected_items,
                    false_positive_rate,
                    function.encode("ascii"),
                )
                os.ftruncate(fd, HEADER_SIZE + (bits + 7) // 8)
                os.pwrite(fd, header, 0)
                size = os.fstat(fd).st_size
            if size < HEADER_SIZE:
                raise ValueError(f"{path} is too short for a Bloom filter ({size} bytes)")
            head = os.pread(fd, HEADER_SIZE, 0)
            magic, version, hashes, bits, count, *_ = HEADER.unpack(head)
            if magic != MAGIC:
                raise ValueError(f"{path} is not a Bloom filter file of this crawler")
            if version != VERSION:
                raise ValueError(f"{path} has layout version {version}, expected {VERSION}")
            if bits <= 0 or hashes <= 0 or size != HEADER_SIZE + (bits + 7) // 8:
                raise ValueError(f"{path} is truncated or damaged ({size} bytes, {bits} bits)")
            _allocate(fd, size)
            mm = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        except BaseException:
            os.close(fd)
            raise
        return cls(path, fd, mm, bits, hashes, count)

    def add(self, h128: int) -> bool:
        """Set the k bits of a 128-bit hash; True if at least one was clear (a new item)."""
        mm, bits = self._mm, self.bits
        h1, h2 = h128 & _M64, h128 >> 64
        offset = HEADER_SIZE
        new = False
        for _ in range(self.hashes):
            j = (h1 & _M63) % bits
            at = offset + (j >> 3)
            mask = 1 << (j & 7)
            byte = mm[at]
            if not byte & mask:
                mm[at] = byte | mask
                new = True
            h1 = (h1 + h2) & _M64
        if new:
            self.count += 1
            _COUNT.pack_into(mm, _COUNT_AT, self.count)
        return new

    def contains(self, h128: int) -> bool:
        """True if all k bits of a 128-bit hash are set (maybe added; False: surely not)."""
        mm, bits = self._mm, self.bits
        h1, h2 = h128 & _M64, h128 >> 64
        for _ in range(self.hashes):
            j = (h1 & _M63) % bits
            if not mm[HEADER_SIZE + (j >> 3)] & (1 << (j & 7)):
                return False
            h1 = (h1 + h2) & _M64
        return True

    @property
    def size_bytes(self) -> int:
        """Bytes of the bit array (without the header)."""
        return (self.bits + 7) // 8

    def flush(self) -> None:
        """Write dirty pages to disk."""
        self._mm.flush()

    def close(self) -> None:
        """Flush, unmap and close. Idempotent."""
        if self._fd < 0:
            return
        try:
            self._mm.flush()
            self._mm.close()
        finally:
            os.close(self._fd)
            self._fd = -1


def _allocate(fd: int, size: int) -> None:
    """Give the file's ``size`` bytes their disk blocks now (see the module docstring); a file
    system that cannot preallocate is left as it is."""
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            raise
