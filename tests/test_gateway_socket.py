"""The gateway's listening socket (gateway/server.py bind_socket), served by asyncio as uvicorn serves it.

A connection it accepts must have Nagle's algorithm off: with it on, an event written while the response
before it was still unacknowledged waited for the client's delayed ACK, ~40 ms on every WebSocket turn
(benchmarks/test_bench_turn.py: `event out`).
"""

from __future__ import annotations

import asyncio
import socket

import pytest

from openclaw_cli.core.errors import OpenclawError
from openclaw_cli.gateway.server import bind_socket


def _accepted_nodelay(listener: socket.socket) -> int:
    """TCP_NODELAY of the server side of one loopback connection accepted by an asyncio server on `listener`."""

    async def run() -> int:
        accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        class Record(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                server_side = transport.get_extra_info("socket")
                accepted.set_result(server_side.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        server = await asyncio.get_running_loop().create_server(Record, sock=listener)
        async with server:
            _, writer = await asyncio.open_connection(*listener.getsockname())
            try:
                return await asyncio.wait_for(accepted, 10)
            finally:
                writer.close()

    return asyncio.run(run())


def test_an_accepted_connection_sends_small_frames_at_once() -> None:
    listener = bind_socket("127.0.0.1", 0)
    assert listener.proto == socket.IPPROTO_TCP
    assert _accepted_nodelay(listener) != 0


def test_a_port_in_use_is_a_one_line_error_with_what_to_do() -> None:
    with bind_socket("127.0.0.1", 0) as first, pytest.raises(OpenclawError) as refused:
        bind_socket("127.0.0.1", first.getsockname()[1])
    assert "cannot listen on 127.0.0.1" in refused.value.message
    assert refused.value.hint is not None and "--port" in refused.value.hint
