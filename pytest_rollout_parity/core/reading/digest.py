"""What a side's files held, as one short digest computed while they are read.

A run split over several CI jobs (each a part) is joined only when every part read the same
inputs. Each file of a side (the rollouts file, then its sidecar; shard after shard) gets its own
SHA-256 and byte count, updated per line as the lines are read (one C call a line, no second
pass); the side's digest is the SHA-256 of those per-file records. So two sides differ in their
digest whenever any file's content or the boundary between files differs: a row moved from the
rollouts file to its sidecar changes it. It tells parts run on different files apart; it is not a
defence against someone who forges a part's JSON (whoever can do that can forge its outcomes too).
"""

from __future__ import annotations

import hashlib


class ContentDigest:
    """A running SHA-256 and byte count of the file being read, and the records of the files read."""

    __slots__ = ("files", "_hash", "_size")

    def __init__(self) -> None:
        #: each file read to its end: `<bytes>:<sha256 hex>`, in reading order
        self.files: list[str] = []
        self._hash = hashlib.sha256()
        self._size = 0

    def update(self, raw: bytes) -> None:
        """Add one line's bytes, as read (before anything is stripped)."""
        self._hash.update(raw)
        self._size += len(raw)

    def end_file(self) -> None:
        """The file being read ended: record it, and start the next one."""
        self.files.append(f"{self._size}:{self._hash.hexdigest()}")
        self._hash = hashlib.sha256()
        self._size = 0

    def text(self) -> str:
        """`sha256:<hex of the per-file records>:<bytes>:<files>`: the form the JSON summary and the merge compare."""
        combined = hashlib.sha256("\n".join(self.files).encode("ascii")).hexdigest()
        size = sum(int(record.split(":", 1)[0]) for record in self.files)
        return f"sha256:{combined}:{size}:{len(self.files)}"
