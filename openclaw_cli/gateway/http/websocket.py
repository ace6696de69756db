"""One WebSocket connection: authenticated at the upgrade, then requests and pushed events.

The upgrade request carries the token (`Authorization: Bearer TOKEN`); without the right one the
upgrade is answered with a plain HTTP 401 (429 for a client over the failure limit, gateway/auth.py)
and no WebSocket is opened. There is no `?token=` query parameter: every client of this project sets
the header, and a token in a URL ends up in logs and histories. The Control UI's WebChat sends no header: its session cookie (gateway/ui/sessions.py) is
accepted instead, when the upgrade's Origin is this gateway. The `connect` request of earlier
clients still works: it answers the hello (protocol version, methods, events, limits).

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

import openclaw_cli
from openclaw_cli.gateway.auth import authenticate, bearer
from openclaw_cli.gateway.http.api import HttpError
from openclaw_cli.gateway.lanes.queues import RECEIVED_AT
from openclaw_cli.gateway.rpc import protocol as p

if TYPE_CHECKING:
    from openclaw_cli.gateway.app import GatewayApp

log = logging.getLogger("openclaw.gateway")
INLINE_METHODS = frozenset({"chat.send", "chat.abort", "health", "status"})
POLICY_VIOLATION = 1008


class Connection:
    def __init__(self, gateway: GatewayApp, ws: WebSocket) -> None:
        self.gateway = gateway
        self.ws = ws
        self.client = ws.client.host if ws.client else "unknown"
        self.outgoing: asyncio.Queue[str | None] = asyncio.Queue()
        self.open = True
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
        if not await self._authenticated():
            return
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

    async def _authenticated(self) -> bool:
        """Whether the upgrade request carries the token; if not, it is refused with HTTP 401/429."""
        token = bearer(self.ws.headers.get("authorization"))
        ui = self.gateway.ui_sessions  # the WebChat: the Control UI's session cookie, from its own origin
        if token is None and ui is not None and ui.websocket_allowed(self.ws):
            return True
        refusal = authenticate(self.gateway.core.options.token, token, self.client, self.gateway.failures)
        if refusal is None:
            return True
        log.warning("refused a WebSocket upgrade from %s: %s", self.client, refusal.message)
        try:
            await self.ws.send_denial_response(HttpError.refused(refusal).response())
        except RuntimeError:  # a server without the ASGI denial extension: a bare refusal (HTTP 403)
            await self.ws.close(POLICY_VIOLATION)
        return False

    async def _read_loop(self) -> None:
        while True:
            try:
                message = await self.ws.receive()
            except (WebSocketDisconnect, RuntimeError):
                return
            if message["type"] == "websocket.disconnect":
                return
            raw = message.get("text")
            if raw is None:
                raw = message.get("bytes") or b""
            await self._handle(raw)

    async def _handle(self, raw: str | bytes) -> None:
        RECEIVED_AT.set(time.monotonic())
        try:
            request = p.parse_request(raw)
        except p.FrameError as exc:
            self.push(p.error_response(exc.request_id, exc.code, exc.message, exc.hint))
            return
        if request.method == "connect":
            self.push(p.response(request.id, self._hello()))
        elif request.method in INLINE_METHODS:
            await self._dispatch(request)
        else:
            task = asyncio.create_task(self._dispatch(request))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def _dispatch(self, request: p.Request) -> None:
        self.push(
            await self.gateway.methods.answer(request.id, request.method, request.params, self.listener)
        )

    def _hello(self) -> dict[str, Any]:
        return {
            "protocol": p.PROTOCOL_VERSION,
            "server": "openclaw",
            "version": openclaw_cli.__version__,  # a CLI of another version does not send it its reads
            "methods": self.gateway.methods.names,
            "events": ["chat", "notice", "tool"],
            "maxMessageBytes": self.gateway.core.settings.gateway.max_message_bytes,
        }
