"""One WebSocket connection: the `connect` handshake, then requests and pushed events.

Requests that only queue work (chat.*, health, status) are handled in arrival order, so two chat.send
on one connection reach their lane in the order sent; slower ones (memory, sessions) run as tasks so
they never hold up the connection. Events and responses go out through one queue and one writer task.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from openclaw_cli.errors import OpenclawError
from openclaw_cli.gateway import protocol as p
from openclaw_cli.gateway.auth import token_matches
from openclaw_cli.gateway.lanes import RECEIVED_AT
from openclaw_cli.gateway.methods import error_code

if TYPE_CHECKING:
    from openclaw_cli.gateway.server import GatewayApp

log = logging.getLogger("openclaw.gateway")
INLINE_METHODS = frozenset({"chat.send", "chat.abort", "health", "status"})
POLICY_VIOLATION = 1008
CONNECT_TIMEOUT_SECONDS = 10.0


class Connection:
    def __init__(self, gateway: GatewayApp, ws: WebSocket) -> None:
        self.gateway = gateway
        self.ws = ws
        self.client = ws.client.host if ws.client else "unknown"
        self.outgoing: asyncio.Queue[str | None] = asyncio.Queue()
        self.open = True
        self.connected = False
        self.tasks: set[asyncio.Task[None]] = set()
        self.writer: asyncio.Task[None] | None = None

    def push(self, frame: dict[str, Any]) -> None:
        if self.open:
            self.outgoing.put_nowait(p.encode(frame))

    def listener(self, event: str, payload: dict[str, Any]) -> None:
        self.push(p.event(event, payload))

    async def _writer(self) -> None:
        while (text := await self.outgoing.get()) is not None:
            try:
                await self.ws.send_text(text)
            except Exception:  # noqa: BLE001 - the client went away; the reader notices too
                self.open = False
                return

    async def serve(self) -> None:
        await self.ws.accept()
        self.writer = asyncio.create_task(self._writer())
        try:
            await self._read_loop()
        finally:
            for task in list(self.tasks):
                task.cancel()
            await self._stop_writer()

    async def _stop_writer(self) -> None:
        """Send what is queued, then stop writing."""
        if self.open:
            self.open = False
            self.outgoing.put_nowait(None)
        if self.writer is not None:
            with contextlib.suppress(Exception):
                await self.writer

    async def _read_loop(self) -> None:
        while True:
            try:
                if self.connected:
                    message = await self.ws.receive()
                else:  # an unauthenticated connection may not linger
                    message = await asyncio.wait_for(self.ws.receive(), CONNECT_TIMEOUT_SECONDS)
            except TimeoutError:
                self.push(p.error_response(None, p.NOT_CONNECTED, "no connect request in time"))
                await self._close(POLICY_VIOLATION, "connect timeout")
                return
            except (WebSocketDisconnect, RuntimeError):
                return
            if message["type"] == "websocket.disconnect":
                return
            raw = message.get("text")
            if raw is None:
                raw = message.get("bytes") or b""
            if not await self._handle(raw):
                return

    async def _handle(self, raw: str | bytes) -> bool:
        """False when the connection must close."""
        RECEIVED_AT.set(time.monotonic())
        try:
            request = p.parse_request(raw)
        except p.FrameError as exc:
            self.push(p.error_response(exc.request_id, exc.code, exc.message, exc.hint))
            return True
        if not self.connected:
            return await self._connect(request)
        if request.method == "connect":
            self.push(p.error_response(request.id, p.INVALID_REQUEST, "already connected"))
        elif request.method in INLINE_METHODS:
            await self._dispatch(request)
        else:
            task = asyncio.create_task(self._dispatch(request))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        return True

    async def _dispatch(self, request: p.Request) -> None:
        try:
            payload = await self.gateway.methods.call(request.method, request.params, self.listener)
        except OpenclawError as exc:
            self.push(p.error_response(request.id, error_code(exc), exc.message, exc.hint))
        except Exception as exc:  # noqa: BLE001 - a bug in one method must not drop the connection
            log.exception("method %s failed", request.method)
            self.push(p.error_response(request.id, p.INTERNAL, f"{exc.__class__.__name__}: {exc}"))
        else:
            self.push(p.response(request.id, payload))

    async def _connect(self, request: p.Request) -> bool:
        limiter = self.gateway.failures
        if request.method != "connect":
            self.push(
                p.error_response(request.id, p.NOT_CONNECTED, "send a connect request with the token first")
            )
            return True
        wait = limiter.blocked_for(self.client)
        if wait > 0:
            self.push(
                p.error_response(
                    request.id, p.RATE_LIMITED, f"too many failed attempts; retry in {wait:.0f} s"
                )
            )
            await self._close(POLICY_VIOLATION, "rate limited")
            return False
        auth = request.params.get("auth")
        token = auth.get("token") if isinstance(auth, dict) else request.params.get("token")
        if not token_matches(self.gateway.core.options.token, token if isinstance(token, str) else None):
            limiter.failed(self.client)
            log.warning("refused a WebSocket connection from %s: wrong token", self.client)
            self.push(p.error_response(request.id, p.UNAUTHORIZED, "wrong or missing token"))
            await self._close(POLICY_VIOLATION, "unauthorized")
            return False
        self.connected = True
        self.push(
            p.response(
                request.id,
                {
                    "protocol": p.PROTOCOL_VERSION,
                    "server": "openclaw",
                    "methods": self.gateway.methods.names,
                    "events": ["chat", "notice", "tool"],
                    "maxMessageBytes": self.gateway.core.settings.gateway.max_message_bytes,
                },
            )
        )
        return True

    async def _close(self, code: int, reason: str) -> None:
        await self._stop_writer()  # the error response goes out before the close frame
        with contextlib.suppress(Exception):
            await self.ws.close(code, reason)
