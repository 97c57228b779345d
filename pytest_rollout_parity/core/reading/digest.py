"""What a side's files held, as one short digest computed while they are read.

A run split over several CI jobs (each a part) is joined only when every part read the same
inputs. Each file of a side (the rollouts file, then its sidecar; shard after shard) gets its own
CRC-32 and byte count, updated per line as the lines are read (one C call a line, no second
pass); the side's digest is the CRC-32 of those per-file records. So two sides differ in their
digest whenever any file's content or the boundary between files differs: a row moved from the
rollouts file to its sidecar changes it. It tells parts run on different files apart; it is not a
defence against someone who forges a part's JSON (whoever can do that can forge its outcomes too),
so a check of accidents does: CRC-32 takes a third of SHA-256's time on every byte read.
"""

from __future__ import annotations

import zlib


class ContentDigest:
    """A running CRC-32 and byte count of the file being read, and the records of the files read."""

    __slots__ = ("files", "_crc", "_size")

    def __init__(self) -> None:
        #: each file read to its end: `<bytes>:<crc32 hex>`, in reading order
        self.files: list[str] = []
        self._crc = 0
        self._size = 0

    def update(self, raw: bytes) -> None:
        """Add one line's bytes, as read (before anything is stripped)."""
        self._crc = zlib.crc32(raw, self._crc)
        self._size += len(raw)

    def end_file(self) -> None:
        """The file being read ended: record it, and start the next one."""
        self.files.append(f"{self._size}:{self._crc:08x}")
        self._crc = 0
        self._size = 0

    def text(self) -> str:
        """`crc32:<hex of the per-file records>:<bytes>:<files>`: the form the JSON summary and the merge compare."""
        combined = zlib.crc32("\n".join(self.files).encode("ascii"))
        size = sum(int(record.split(":", 1)[0]) for record in self.files)
        return f"crc32:{combined:08x}:{size}:{len(self.files)}"
