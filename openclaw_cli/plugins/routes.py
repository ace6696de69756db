"""Plugin HTTP routes in the gateway: each registered route served at `/plugins/<plugin id><path>`.

The gateway token is required (gateway/http_api.check_auth: the same 401, and the same failure limit)
unless the route was registered `public=True`. A handler that raises answers 500, one that passes the
plugin's timeout answers 504; both count against the plugin, and the gateway goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

if TYPE_CHECKING:
    from openclaw_cli.plugins.host import PluginHost
    from openclaw_cli.plugins.registry import RouteDef

# (request) -> None, or raises the gateway's HttpError (check_auth): given by the gateway.
Auth = Callable[[Request], None]
Refused = Callable[[Exception], Response | None]


def plugin_routes(host: PluginHost, auth: Auth, refused: Refused) -> list[Route]:
    return [
        Route(
            f"/plugins/{route.plugin_id}{route.path}",
            _guarded(host, route, auth, refused),
            methods=[route.method],
        )
        for route in host.registered.routes
    ]


def _guarded(
    host: PluginHost, route: RouteDef, auth: Auth, refused: Refused
) -> Callable[[Request], Awaitable[Response]]:
    record = host.records[route.plugin_id]
    hook = f"route {route.method} {route.path}"

    async def endpoint(request: Request) -> Response:
        if not route.public:
            try:
                auth(request)
            except Exception as exc:  # noqa: BLE001 - the gateway's refusal (401/429) as its response
                refusal = refused(exc)
                if refusal is None:
                    raise
                return refusal
        try:
            answer: Any = route.handler(request)
            if asyncio.iscoroutine(answer):
                answer = await asyncio.wait_for(answer, record.timeout)
        except TimeoutError:
            record.fail(hook, f"passed its timeout of {record.timeout:g} s")
            return JSONResponse({"error": f"plugin {record.id} did not answer in time"}, status_code=504)
        except Exception as exc:  # noqa: BLE001 - isolation: a plugin's route never breaks the gateway
            record.fail(hook, f"{type(exc).__name__}: {exc}")
            return JSONResponse({"error": f"plugin {record.id} failed"}, status_code=500)
        if not isinstance(answer, Response):
            record.fail(hook, f"returned {type(answer).__name__}, not a Starlette Response")
            return JSONResponse({"error": f"plugin {record.id} failed"}, status_code=500)
        return answer

    return endpoint
