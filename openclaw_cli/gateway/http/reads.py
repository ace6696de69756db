"""The CLI's reads over plain HTTP (gateway/client/reads.py): `memory search`, `memory inject` and `session
search` sent to a running gateway without a WebSocket, so the CLI imports http.client instead of websockets
(~25 ms less of a ~110 ms command) and makes one exchange fewer.

`GET /rpc` answers the gateway's version: the CLI checks it before it asks anything. `POST /rpc/METHOD`
with the method's params as a JSON object answers what the WebSocket's response frame would hold:
`{"ok": true, "payload": ...}`, or `{"ok": false, "error": {"code", "message", "hint"}}` with a 4xx/5xx
status. Both need the token, as every other endpoint; only the read methods are served here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.responses import JSONResponse, Response

import openclaw_cli
from openclaw_cli.gateway.http.api import HttpError, check_auth, read_json
from openclaw_cli.gateway.rpc import protocol as p

if TYPE_CHECKING:
    from starlette.requests import Request

    from openclaw_cli.gateway.app import GatewayApp

# cron.run is no read, but `openclaw cron run` is a one-shot command like the reads: one exchange, no socket.
READ_METHODS = frozenset(
    {
        "memory.search",
        "memory.inject",
        "session.search",
        "channels.status",
        "plugins.status",
        "cron.list",
        "cron.run",
    }
)
STATUS_OF = {p.INVALID_PARAMS: 400, p.NOT_FOUND: 404, p.CONFLICT: 409, p.INTERNAL: 500}


async def version(gateway: GatewayApp, request: Request) -> Response:
    check_auth(gateway, request)
    return JSONResponse({"version": openclaw_cli.__version__})


async def call(gateway: GatewayApp, request: Request) -> Response:
    check_auth(gateway, request)
    method = str(request.path_params["method"])
    if method not in READ_METHODS:
        raise HttpError(404, f"{method} is not served over HTTP; call it over the WebSocket", "not_found")
    params = await read_json(gateway, request)
    frame = await gateway.methods.answer(None, method, params)
    body: dict[str, Any] = {key: frame[key] for key in ("ok", "payload", "error") if key in frame}
    status = 200 if frame["ok"] else STATUS_OF.get(frame["error"]["code"], 503)
    # Encoded as the WebSocket encodes its frames (what is not JSON becomes its text).
    return Response(p.encode(body), status_code=status, media_type="application/json")
