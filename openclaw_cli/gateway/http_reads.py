"""The CLI's reads over plain HTTP (gateway/remote_reads.py): `memory search`, `memory inject` and `session
search` sent to a running gateway without a WebSocket, so the CLI imports http.client instead of websockets
(~25 ms less of a ~110 ms command) and makes one exchange fewer.

`GET /rpc` answers the gateway's version: the CLI checks it before it asks anything. `POST /rpc/METHOD`
with the method's params as a JSON object answers what the WebSocket's response frame would hold:
`{"ok": true, "payload": ...}`, or `{"ok": false, "error": {"code", "message", "hint"}}` with a 4xx/5xx
status. Both need the token, as every other endpoint; only the read methods are served here.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from starlette.responses import JSONResponse, Response

import openclaw_cli
from openclaw_cli.errors import OpenclawError
from openclaw_cli.gateway import protocol as p
from openclaw_cli.gateway.http_api import HttpError, check_auth, read_json
from openclaw_cli.gateway.methods import error_code

if TYPE_CHECKING:
    from starlette.requests import Request

    from openclaw_cli.gateway.app import GatewayApp

log = logging.getLogger("openclaw.gateway")
READ_METHODS = frozenset({"memory.search", "memory.inject", "session.search"})
STATUS_OF = {p.INVALID_PARAMS: 400, p.NOT_FOUND: 404, p.CONFLICT: 409}


async def version(gateway: GatewayApp, request: Request) -> Response:
    check_auth(gateway, request)
    return JSONResponse({"version": openclaw_cli.__version__})


async def call(gateway: GatewayApp, request: Request) -> Response:
    check_auth(gateway, request)
    method = str(request.path_params["method"])
    if method not in READ_METHODS:
        raise HttpError(404, f"{method} is not served over HTTP; call it over the WebSocket", "not_found")
    params = await read_json(gateway, request)
    try:
        payload = await gateway.methods.call(method, params)
    except OpenclawError as exc:
        code = error_code(exc)
        error = {"code": code, "message": exc.message, "hint": exc.hint}
        return _json({"ok": False, "error": error}, STATUS_OF.get(code, 503))
    except Exception as exc:  # noqa: BLE001 - a bug in one method must not look like a refusal
        log.exception("method %s failed", method)
        error = {"code": p.INTERNAL, "message": f"{exc.__class__.__name__}: {exc}", "hint": None}
        return _json({"ok": False, "error": error}, 500)
    return _json({"ok": True, "payload": payload}, 200)


def _json(body: dict[str, Any], status: int) -> Response:
    """Encoded as the WebSocket encodes its frames (what is not JSON becomes its text)."""
    return Response(p.encode(body), status_code=status, media_type="application/json")
