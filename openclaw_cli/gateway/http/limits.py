"""Limits on connections that owe the gateway a request: a header deadline and a cap on how many wait.

uvicorn times out nothing while a request head is incomplete (`timeout_keep_alive` only covers the quiet
time between requests, and every byte received disarms it), so a client that sends half a request line,
or trickles a header byte now and then, holds its socket for ever. Here every connection is *pending*
while the peer owes bytes that no handler is waiting for:

- from the moment it is accepted until its first request head is complete;
- from the first byte of a later request on a kept-alive connection until that head is complete;
- while the body of a request that was already answered keeps arriving (a refused upload).

A pending connection is closed when `gateway.headerTimeoutSeconds` pass (bytes arriving meanwhile do not
extend it). WebSocket connections authenticate with their upgrade request (gateway/auth.py), so a socket
that has not been authenticated yet is exactly a pending one; once upgraded it leaves this accounting.

At most `gateway.maxPendingConnections` are pending at once: past it the *oldest* pending connections are
closed, not the new ones, and those that sent part of a head before those that sent nothing yet. A real
client writes its whole head as soon as it has connected, so it stops being pending within a loop turn,
while a flood's sockets sit; refusing new ones instead would let a flood that filled the cap first lock
every real client out until its sockets timed out. A client that is slow to write (a busy machine) has sent
nothing, unlike a slowloris, so it outlives the flood's sockets. A connection just accepted is not closed
before it has had one loop turn to deliver its head: when a burst of connections arrives together (a
reconnecting flood), a real client in the middle of it is read before the cap is enforced, so the cap may
be passed by one burst for that turn.

The gateway's `status` reports the counts (`connections`), and the log says at most once a minute that
connections are being dropped.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("openclaw.gateway")
SUMMARY_INTERVAL = 60.0  # seconds between log lines about dropped connections: a flood must not flood the log


class PendingConnections:
    """The pending connections of one gateway, oldest first, and what was dropped (for the log)."""

    def __init__(self, header_timeout: float, max_pending: int) -> None:
        self.header_timeout = header_timeout
        self.max_pending = max_pending
        # Insertion-ordered, the first key pending longest. Those that sent part of a head and stopped
        # go first: a real client writes its head at once, while a slowloris sends part and sits.
        self._silent: dict[PendingAware, None] = {}
        self._partial: dict[PendingAware, None] = {}
        self.timed_out = 0
        self.evicted = 0
        self._logged_at = float("-inf")

    def __len__(self) -> int:
        return len(self._silent) + len(self._partial)

    def counts(self) -> dict[str, int]:
        """For the gateway's status: pending now, and how many were closed since start."""
        return {"pending": len(self), "timedOut": self.timed_out, "closedOverCap": self.evicted}

    def admit(self, conn: PendingAware) -> None:
        self._silent[conn] = None
        if conn.had_its_turn:  # a fresh connection is counted once its first turn has passed
            self.enforce()

    def sent_part(self, conn: PendingAware) -> None:
        """`conn` has sent part of a head (and is still pending)."""
        if conn in self._silent:
            del self._silent[conn]
            self._partial[conn] = None

    def enforce(self) -> None:
        """Close the oldest pending connections, those with part of a head first, until at most
        `max_pending` remain."""
        while len(self) > self.max_pending and (victim := self._victim()) is not None:
            self.evicted += 1
            victim.drop()  # releases itself

    def _victim(self) -> PendingAware | None:
        """The oldest connection with part of a head, else the oldest silent one; none while that one is
        still in its first turn (so are the newer ones; the end of its turn enforces the cap again)."""
        for kind in (self._partial, self._silent):
            oldest = next(iter(kind), None)
            if oldest is not None:
                return oldest if oldest.had_its_turn else None
        return None

    def release(self, conn: PendingAware) -> None:
        self._silent.pop(conn, None)
        self._partial.pop(conn, None)

    def note_drop(self) -> None:
        now = time.monotonic()
        if now - self._logged_at >= SUMMARY_INTERVAL:
            self._logged_at = now
            log.warning(
                "dropping connections that owe a request: %d timed out after %g s "
                "(gateway.headerTimeoutSeconds), %d closed over the cap of %d pending "
                "(gateway.maxPendingConnections) since start",
                self.timed_out,
                self.header_timeout,
                self.evicted,
                self.max_pending,
            )


class PendingAware(H11Protocol):
    """uvicorn's h11 protocol, with the pending accounting above. `limits` is set by `guarded_protocol`."""

    limits: ClassVar[PendingConnections]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._first_request = True  # no request head has been completed on this connection yet
        self._upgraded = False
        # Whether the connection has had a loop turn to send its head since it was accepted.
        self.had_its_turn = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._update()
        # The reader this transport registers now is first polled in the next turn, whose ready
        # callbacks run after the ones queued now: two hops land after that first read.
        self.loop.call_soon(self.loop.call_soon, self._turn_passed)

    def _turn_passed(self) -> None:
        self.had_its_turn = True
        self.limits.enforce()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._update()
        if self._deadline is not None:
            self.limits.sent_part(self)

    def on_response_complete(self) -> None:
        super().on_response_complete()  # may start the next cycle on pipelined bytes
        self._update()

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        self._upgraded = True
        self._settle()
        super().handle_websocket_upgrade(event)

    def connection_lost(self, exc: Exception | None) -> None:
        self._settle()
        super().connection_lost(exc)

    def drop(self) -> None:
        """Close the connection: it kept the gateway waiting too long, or too many others wait."""
        self._settle()
        self.limits.note_drop()
        self.transport.close()

    def _owes_bytes(self) -> bool:
        if self._upgraded or self.transport.is_closing():
            return False
        state = self.conn.their_state
        if state is h11.IDLE:  # between requests: pending if this is the first, or one has begun
            return self._first_request or bool(self.conn.trailing_data[0])
        # SEND_BODY after our response is complete: a body nothing reads any more.
        return state is h11.SEND_BODY and self.cycle is not None and self.cycle.response_complete

    def _update(self) -> None:
        if self.conn.their_state is not h11.IDLE:
            self._first_request = False
        if not self._owes_bytes():
            self._settle()
        elif self._deadline is None:  # a running deadline is not extended by the bytes that arrive
            self._deadline = self.loop.call_later(self.limits.header_timeout, self._expired)
            self.limits.admit(self)

    def _settle(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
            self.limits.release(self)

    def _expired(self) -> None:
        self.limits.timed_out += 1
        self.drop()


def guarded_protocol(limits: PendingConnections) -> type[PendingAware]:
    """The protocol class for uvicorn's `Config(http=...)`, bound to `limits` (uvicorn builds one
    protocol per connection from a class and its own arguments)."""
    return type("GuardedH11Protocol", (PendingAware,), {"limits": limits})
