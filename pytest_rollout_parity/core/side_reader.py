"""The reader child: ``python -m pytest_rollout_parity.core.side_reader`` reads one side, sends it back.

Started by :mod:`.parallel` so that the old side is read on another core while the gate's own
process reads the new one. It imports the core only (no pytest), so it starts in tens of
milliseconds and stays small. The request arrives on stdin and the answer leaves on stdout, both
``marshal`` of plain values:

    request: (path, key, display, agent, key_option, agent_option)
    answer:  ("side", framed side)  or  ("input-error", message)

Any other outcome (a crash, a signal, a truncated answer) makes the parent read the side itself.
"""

from __future__ import annotations

import marshal
import sys
from pathlib import Path

from .errors import CompareInputError
from .loading import load_side
from .snapshot import frame

WIRE_KEY = "side-reader"


def main() -> int:
    """Serve one request from stdin; exit 0 when an answer was written."""
    path, key, display, agent, key_option, agent_option = marshal.loads(sys.stdin.buffer.read())
    try:
        side = load_side(Path(path), key, display, agent, key_option, agent_option)
    except CompareInputError as exc:
        answer: tuple[str, str | bytes] = ("input-error", str(exc))
    else:
        answer = ("side", frame(WIRE_KEY, side, release=True))
    sys.stdout.buffer.write(marshal.dumps(answer))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
