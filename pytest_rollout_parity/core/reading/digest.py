"""What a side's files held, as one short digest computed while they are read.

A run split over several CI jobs (each a part) is joined only when every part read the same
inputs. Each side's digest is a CRC-32 of every byte of its files in reading order (the rollouts
file, then its sidecar; shard after shard), with the byte count, updated per line as the lines are
read, so it costs one C call a line and no second pass. It tells parts run on different files
apart; it is not a defence against someone who forges a part's JSON (whoever can do that can
forge its outcomes too).
"""

from __future__ import annotations

import zlib


class ContentDigest:
    """A running CRC-32 and byte count of the bytes a side's files held, in reading order."""

    __slots__ = ("crc", "size")

    def __init__(self, crc: int = 0, size: int = 0) -> None:
        self.crc = crc
        self.size = size

    def update(self, raw: bytes) -> None:
        """Add one line's bytes (as read, before anything is stripped)."""
        self.crc = zlib.crc32(raw, self.crc)
        self.size += len(raw)

    def text(self) -> str:
        """`crc32:<8 hex digits>:<bytes>`: the form the JSON summary and the merge compare."""
        return f"crc32:{self.crc:08x}:{self.size}"
