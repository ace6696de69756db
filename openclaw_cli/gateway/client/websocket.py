"""Opening a WebSocket to the gateway as a client (`openclaw chat`, `openclaw gateway call`).

The token travels in the upgrade request (`Authorization: Bearer TOKEN`); the gateway answers an upgrade
without the right one with HTTP 401 (429 once the client has failed too often), which becomes
GatewayRefused here, with the gateway's own explanation. websockets is imported only when a connection
is opened.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import OpenclawError
from openclaw_cli.gateway.auth import auth_headers

if TYPE_CHECKING:
    from websockets.sync.client import ClientConnection

TOKEN_HINT = "the token is in $OPENCLAW_HOME/gateway/token, or set OPENCLAW_GATEWAY_TOKEN"


class GatewayRefused(OpenclawError):
    """The gateway refused the connection (wrong or missing token, or too many failed attempts)."""

    def __init__(self, status: int, message: str, hint: str | None = None) -> None:
        super().__init__(message, hint)
        self.status = status


def open_ws(url: str, token: str | None, *, open_timeout: float, **options: Any) -> ClientConnection:
    """A connection to `url`, authenticated with `token`; GatewayRefused when the gateway says no.

    Other failures (nothing listening, a broken handshake) raise what websockets raises (OSError,
    WebSocketException, TimeoutError): each caller words those itself."""
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    try:
        return connect(url, open_timeout=open_timeout, additional_headers=auth_headers(token), **options)
    except InvalidStatus as exc:
        status = exc.response.status_code
        reason = refusal_message(exc.response.body) or exc.response.reason_phrase
        hint = TOKEN_HINT if status == 401 else None
        raise GatewayRefused(
            status, f"the gateway refused the connection (HTTP {status}: {reason})", hint
        ) from exc


def refusal_message(body: bytes | bytearray | None) -> str | None:
    """The `error.message` of the gateway's JSON refusal, if that is what the body is (also read by
    remote_reads.py, whose reads are plain HTTP)."""
    try:
        value = json.loads(body or b"")
    except ValueError:
        return None
    error = value.get("error") if isinstance(value, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) and message else None
