"""Messages steered into a turn while it runs (the gateway's `steer` queue modes, seed 003 §6).

The gateway's event loop offers messages; the turn's worker thread takes them before each model call
(the first one and each one after tool results) and closes the source when the turn ends. What was
offered but never taken is handed back by `close()`, so the caller can run it as a turn of its own:
a steered message is never lost, whatever moment it arrives at.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass
class SteeredMessage:
    text: str
    sender: str | None = None
    stored_idx: int | None = None  # set by the turn that took it: where it is in the session


class Steering:
    """A thread-safe, ordered inbox of one turn's steered messages."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[SteeredMessage] = []
        self._taken = 0
        self._closed = False

    def offer(self, message: SteeredMessage) -> bool:
        """Queue `message` for the turn's next model call; False once the turn takes no more."""
        with self._lock:
            if self._closed:
                return False
            self._items.append(message)
            return True

    def take(self) -> list[SteeredMessage]:
        """The messages offered since the last take, in order (called by the turn before a model call)."""
        with self._lock:
            if self._closed:
                return []
            new = self._items[self._taken :]
            self._taken = len(self._items)
            return new

    def close(self) -> list[SteeredMessage]:
        """No more offers are accepted; the messages offered but never taken, in order (idempotent)."""
        with self._lock:
            self._closed = True
            return self._items[self._taken :]

    @property
    def closed(self) -> bool:
        with self._lock:
            return self._closed

    @property
    def taken(self) -> list[SteeredMessage]:
        with self._lock:
            return self._items[: self._taken]
