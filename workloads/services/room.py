"""The chat room every WebSocket service under test shares: the message format and the stamp.

A client sends a text frame `<seq> <intended_ns>` (its own numbers, opaque here). The server
stamps it on receipt with its wall clock, `<server_ns> <seq> <intended_ns>`, waits
`ASYNCLAB_BROADCAST_DELAY_MS` (default 0: the known-answer test's deliberate delay in the
broadcast path) and sends the stamped text to every client in the room, the sender included.
No framework is imported here, so a difference between two rooms is their server's and library's.
"""

from __future__ import annotations

import os
import time

DELAY_S = float(os.environ.get("ASYNCLAB_BROADCAST_DELAY_MS", "0") or 0) / 1000.0


def stamp(text: str) -> str:
    """The text as the room broadcasts it: the server's wall clock (ns) in front."""
    return f"{time.time_ns()} {text}"
