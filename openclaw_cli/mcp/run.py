"""`openclaw mcp`: the server put together and run until its client goes (stdio) or it is stopped (HTTP).

When a gateway of the home runs at start, the models stay unloaded here: every search and write goes
through it. Otherwise the models load once, at start, in the background (local.py); a gateway that starts
later is used from then on, one that stops is replaced by this process's own services.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from openclaw_cli.core.errors import UsageError

if TYPE_CHECKING:
    from openclaw_cli.core.paths import Home
    from openclaw_cli.mcp.context import McpContext
    from openclaw_cli.mcp.local import LocalMemory
    from openclaw_cli.mcp.ops import McpOps
    from openclaw_cli.mcp.remote import GatewayLink

HTTP_PATH = "/mcp"


@dataclass(frozen=True)
class HttpBinding:
    host: str
    port: int
    token: str
    token_created: Path | None = None  # the gateway token file this start created (nothing held one)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{HTTP_PATH}"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def http_token(
    home: Home, configured: str | None, gateway_token: str | None, host: str
) -> tuple[str, Path | None]:
    """The bearer token of `--http`: mcp.token, else the gateway's (its environment variable, else the
    home's token file). With none at all, a loopback server creates the gateway token file (as the first
    `gateway run` does); a server bound off loopback is refused: nobody would hold its token."""
    from openclaw_cli.gateway.auth import load_or_create_token, read_token_file

    path = home.root / "gateway" / "token"
    given = configured or gateway_token or read_token_file(path)
    if given:
        return given, None
    if not is_loopback(host):
        raise UsageError(
            f"refusing to serve MCP on {host} without a token",
            hint="set mcp.token (openclaw config set mcp.token ...) or OPENCLAW_GATEWAY_TOKEN, or bind 127.0.0.1",
        )
    home.ensure_root()
    token, _created = load_or_create_token(path)
    return token, path


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before the models load, so a taken port fails at once."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UsageError(
            f"cannot listen on {host}:{port} ({exc.strerror})", hint="choose another --port"
        ) from exc
    sock.listen(128)
    sock.set_inheritable(False)
    return sock


@dataclass
class Parts:
    ctx: McpContext
    local: LocalMemory
    link: GatewayLink
    ops: McpOps

    def start(self) -> None:
        """Start loading the models, unless a gateway of the home serves them. Called once the SDK is
        imported and the server built (~1.5 s on a busy machine), so that the two do not share the
        cores while the client waits for its first answer; the client's first search comes later."""
        if not self.link.running():
            self.local.start_warming()

    def close(self) -> None:
        self.link.close()
        self.local.close()


def assemble(ctx: McpContext) -> Parts:
    from openclaw_cli.mcp.local import LocalMemory
    from openclaw_cli.mcp.ops import McpOps
    from openclaw_cli.mcp.remote import GatewayLink

    local = LocalMemory(ctx)
    link = GatewayLink(ctx.home, ctx.gateway_token)
    return Parts(ctx, local, link, McpOps(ctx, link, local))


def run_stdio(ctx: McpContext, wire: int) -> None:
    import anyio

    from openclaw_cli.mcp.server import build_server
    from openclaw_cli.mcp.transport import serve_stdio

    parts = assemble(ctx)
    try:
        server = build_server(parts.ops)
        parts.start()
        anyio.run(serve_stdio, server, wire)
    finally:
        parts.close()


def run_http(ctx: McpContext, sock: socket.socket, binding: HttpBinding) -> None:
    import anyio

    from openclaw_cli.mcp.server import build_server
    from openclaw_cli.mcp.transport import serve_http

    parts = assemble(ctx)
    try:
        server = build_server(parts.ops)
        parts.start()
        anyio.run(serve_http, server, sock, binding.host, binding.token)
    finally:
        parts.close()
