"""The gateway process: a Starlette app served by uvicorn (websockets), HTTP and WebSocket on one port.

Open endpoints: GET /healthz (the process answers) and GET /readyz (the inbox has been recovered and
what a first turn needs is loaded: the model client, the embedders, the searcher; see gateway/core.py). Everything else needs the token as `Authorization: Bearer TOKEN`: the upgrade request
of WebSocket `/` or `/ws` (refused with HTTP 401 without it), POST /v1/chat/completions, GET /v1/models,
POST /hooks/agent, and the CLI's reads: GET /rpc and POST /rpc/METHOD (gateway/http/reads.py). The Control UI under /ui/
(gateway/ui/) signs people in with the token once and then goes by its own session cookie.

uvicorn runs its h11 protocol extended by gateway/http/limits.py: a connection that has not sent a whole request
head (so, for a WebSocket, not yet authenticated) within gateway.headerTimeoutSeconds is closed, and at most
gateway.maxPendingConnections such connections wait at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import sys
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from openclaw_cli.agent.runtime import AgentRuntime
from openclaw_cli.core.errors import ConfigError, OpenclawError
from openclaw_cli.gateway.app import GatewayApp
from openclaw_cli.gateway.auth import FailureLimiter
from openclaw_cli.gateway.channel_host.host import ChannelHost, channel_tokens
from openclaw_cli.gateway.client.pidfile import pid_file
from openclaw_cli.gateway.config_watch import ConfigWatcher
from openclaw_cli.gateway.core import GatewayCore, GatewayOptions
from openclaw_cli.gateway.http import api as http_api
from openclaw_cli.gateway.http import reads as http_reads
from openclaw_cli.gateway.http.websocket import Connection
from openclaw_cli.gateway.rpc.methods import Methods

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.core.paths import Home

log = logging.getLogger("openclaw.gateway")
BIND_HOSTS = {"loopback": "127.0.0.1", "lan": "0.0.0.0"}


def build_app(gateway: GatewayApp) -> Starlette:
    async def healthz(request: Request) -> Response:
        return JSONResponse({"ok": True})

    async def readyz(request: Request) -> Response:
        ready = gateway.core.ready
        return JSONResponse({"ok": ready}, status_code=200 if ready else 503)

    async def completions(request: Request) -> Response:
        return await http_api.guarded(gateway, request, http_api.chat_completions)

    async def hooks(request: Request) -> Response:
        return await http_api.guarded(gateway, request, http_api.hooks_agent)

    async def models(request: Request) -> Response:
        async def listing(gw: GatewayApp, req: Request) -> Response:
            http_api.check_auth(gw, req)
            agents = gw.core.settings.agents
            ids = [e.id for e in agents.entries] or [agents.default]
            return JSONResponse(
                {
                    "object": "list",
                    "data": [{"id": i, "object": "model", "owned_by": "openclaw"} for i in ids],
                }
            )

        return await http_api.guarded(gateway, request, listing)

    async def channel_events(request: Request) -> Response:
        if gateway.channels is None:
            return JSONResponse({"error": "no channels"}, status_code=404)
        return await gateway.channels.http_event(request)

    async def rpc_version(request: Request) -> Response:
        return await http_api.guarded(gateway, request, http_reads.version)

    async def rpc_call(request: Request) -> Response:
        return await http_api.guarded(gateway, request, http_reads.call)

    async def websocket(ws: WebSocket) -> None:
        await Connection(gateway, ws).serve()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await gateway.core.start()
        if gateway.channels is not None:  # after the inbox is recovered: a channel resumes its turns
            await gateway.channels.start(gateway.core.settings)
        gateway.write_pid()
        watch = asyncio.create_task(gateway.watcher.run()) if gateway.watcher else None
        await _plugins_event(gateway, "gateway_start")
        cron = asyncio.create_task(gateway.scheduler.run_forever()) if gateway.scheduler else None
        try:
            yield
        finally:
            await _plugins_event(gateway, "gateway_stop")
            if watch is not None:
                watch.cancel()
            if cron is not None:  # a job running now is stopped (runner.py), its run not recorded
                cron.cancel()
                await asyncio.gather(cron, return_exceptions=True)
            if gateway.channels is not None:
                await gateway.channels.stop()
            gateway.methods.close()
            await gateway.core.stop()
            gateway.remove_pid()

    return Starlette(
        routes=[
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
            Route("/v1/chat/completions", completions, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/hooks/agent", hooks, methods=["POST"]),
            # Platforms that push (Slack's Events API, Telegram's webhook) sign their requests themselves.
            Route("/channels/{channel}/events", channel_events, methods=["POST"]),
            Route("/rpc", rpc_version, methods=["GET"]),  # the CLI's reads (gateway/http/reads.py)
            Route("/rpc/{method}", rpc_call, methods=["POST"]),
            WebSocketRoute("/", websocket),
            WebSocketRoute("/ws", websocket),
            *_plugin_routes(gateway),  # /plugins/<id>/... (plugins/routes.py)
            *gateway.ui_routes,  # /ui/... the Control UI (gateway/ui/)
        ],
        lifespan=lifespan,
    )


def _plugin_routes(gateway: GatewayApp) -> list[Route]:
    host = gateway.core.plugins
    if host is None or not host.registered.routes:
        return []
    from openclaw_cli.plugins.routes import plugin_routes

    def refused(exc: Exception) -> Response | None:
        return exc.response() if isinstance(exc, http_api.HttpError) else None

    return plugin_routes(host, lambda request: http_api.check_auth(gateway, request), refused)


async def _plugins_event(gateway: GatewayApp, hook: str) -> None:
    host = gateway.core.plugins
    if host is None or not host.implements(hook):
        return
    from openclaw_cli.plugins.contexts import GatewayEvent

    options = gateway.core.options
    event = GatewayEvent(options.host, options.port, tuple(r.id for r in host.loaded))
    await host.anotify(hook, event)


def resolve_token(home: Home, bind: str, given: str | None, env_token: str | None) -> tuple[str, str]:
    """(token, where it came from). Beyond loopback a token must be given: none is generated there."""
    from openclaw_cli.gateway.auth import check_token_strength, load_or_create_token, read_token_file

    token_path = home.root / "gateway" / "token"
    if given:
        check_token_strength(given)
        return given, "flag"
    if env_token:
        check_token_strength(env_token)
        return env_token, "env"
    if bind != "loopback":
        stored = read_token_file(token_path)
        if stored is None:
            raise ConfigError(
                "refusing to listen beyond loopback without a token",
                hint="give --token, set OPENCLAW_GATEWAY_TOKEN, or run once on loopback to generate one",
            )
        return stored, "file"
    token, created = load_or_create_token(token_path)
    return token, "generated" if created else "file"


def bind_socket(host: str, port: int) -> socket.socket:
    # IPPROTO_TCP, not 0: asyncio turns Nagle off (TCP_NODELAY) only on sockets whose proto says TCP, and
    # accepted connections inherit it. With Nagle on, an event written while the response before it was
    # not yet acknowledged waited for the client's delayed ACK: ~40 ms on every WebSocket turn.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OpenclawError(
            f"cannot listen on {host}:{port} ({exc.strerror})",
            hint="is a gateway already running? see `openclaw gateway status`, or pick another --port",
        ) from exc
    sock.listen(512)
    return sock


def serve(
    home: Home,
    settings: Settings,
    *,
    env: Mapping[str, str],
    port: int | None = None,
    bind: str | None = None,
    token: str | None = None,
    on_ready: Any = None,
) -> None:
    """Run the gateway in the foreground until SIGINT/SIGTERM. `on_ready(host, port)` once listening."""
    import uvicorn

    from openclaw_cli.gateway.http import log_lines
    from openclaw_cli.gateway.http.limits import PendingConnections, guarded_protocol
    from openclaw_cli.plugins.wiring import start_plugins

    chosen_bind = bind or settings.gateway.bind
    host = BIND_HOSTS[chosen_bind]
    home.ensure_root()
    secret, source = resolve_token(home, chosen_bind, token, env.get("OPENCLAW_GATEWAY_TOKEN"))
    sock = bind_socket(host, settings.gateway.port if port is None else port)
    actual_port = sock.getsockname()[1]
    core = GatewayCore(
        home,
        settings,
        GatewayOptions(host, actual_port, secret, source),
        runtime_factory=lambda h, s: AgentRuntime(h, s, env=env),  # skills' gating reads this env
    )
    core.use_plugins(start_plugins(settings, home.root))  # once, at start: a change needs a restart
    auth = settings.gateway.auth
    pending = PendingConnections(
        settings.gateway.header_timeout_seconds, settings.gateway.max_pending_connections
    )
    core.connection_counts = pending.counts
    limiter = FailureLimiter(auth.max_failures, auth.window_seconds)
    gateway = GatewayApp(core, Methods(core), limiter, pending)
    gateway.channels = ChannelHost(core, channel_tokens(env))
    from openclaw_cli.gateway.ui.routes import build_ui, ui_routes

    ui = build_ui(gateway, env)  # the Control UI's pages read doctor's environment
    gateway.ui_routes, gateway.ui_sessions = ui_routes(ui), ui.sessions
    core.channel_status = gateway.channels.status
    from openclaw_cli.gateway.rpc.cron_methods import start_scheduler

    gateway.scheduler = start_scheduler(home, settings, env, gateway.methods)
    gateway.watcher = ConfigWatcher(
        home.config_file, env, gateway.apply, gateway.config_rejected, lambda: core.settings
    )
    config = uvicorn.Config(
        build_app(gateway),
        http=guarded_protocol(pending),  # h11 with a header deadline (gateway/http/limits.py)
        ws="websockets-sansio",
        ws_max_size=settings.gateway.max_message_bytes,
        ws_ping_interval=20.0,
        lifespan="on",
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    log_lines.install()  # a client's invalid UTF-8 frame: one line, not a traceback per frame
    # The runtime's worker threads (litellm is CPU-heavy) hold the GIL for up to the switch interval;
    # a shorter one lets the network loop answer sooner.
    sys.setswitchinterval(0.001)
    gateway.pid_record = {"pid": os.getpid(), "host": host, "port": actual_port, "tokenSource": source}
    gateway.pid_path = pid_file(home)
    if on_ready is not None:
        on_ready(host, actual_port, source)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
