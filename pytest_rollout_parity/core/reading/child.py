"""The reader child: ``python -S -c <boot> <import path>...`` runs :func:`main`, which reads one side.

Started by :mod:`.parallel` so that the old side is read on another core while the gate's own
process reads the new one. It imports the core only (no pytest), so it starts quickly and stays
small: it keeps no row, each one is streamed back as it is prepared (:mod:`.child_stream`). The request arrives on stdin as ``marshal`` of :meth:`SideRequest.plain`; a
sharded side's shards are read in turn, each row sent with its shard's number.

Any other outcome (a crash, a signal, a truncated stream) makes the parent read the side itself.
"""

from __future__ import annotations

import marshal
import sys
from typing import Any

from ..errors import CompareInputError
from .child_stream import ForwardingBuilder, send
from .feeding import feed_side
from .side_request import SideRequest


def main() -> int:
    """Serve one request from stdin; exit 0 when the stream was written to its end."""
    request = SideRequest.from_plain(marshal.loads(sys.stdin.buffer.read()))
    shards = request.shards
    out = sys.stdout.buffer
    builder = ForwardingBuilder(request.key, request.key_option, out.write, sharded=bool(shards))
    try:
        sidecars, agents = feed_side(request, builder)
        sidecar = sidecars[0]
    except CompareInputError as exc:
        builder.flush()
        send(out.write, ("input-error", exc.path, exc.reason, exc.line, exc.where, exc.setting))
    else:
        builder.flush()
        end: tuple[Any, ...] = (
            "end",
            str(sidecar) if sidecar is not None else None,
            agents.compared,
            dict(agents.counts),
            builder.superseded,
            builder.dropped,
            tuple(builder.digest.files),
        )
        if shards:
            end += ([str(s) if s is not None else None for s in sidecars],)
        send(out.write, end)
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
