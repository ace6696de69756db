"""How the MCP server is reached: stdio (a client launches it) or streamable HTTP (`--http`).

stdio: the protocol owns stdout, so nothing else may ever reach it. `claim_stdout` is called first thing
in the command, before any model, jieba dictionary or warning can print: the protocol gets a private
duplicate of fd 1, and fd 1 itself points at stderr for the rest of the process, so a stray print,
progress bar or native library's log lands on stderr whatever writes it, Python or C.

HTTP: the SDK's streamable HTTP app behind a bearer token (the gateway's, or `mcp.token`), compared in
constant time with the gateway's own check and its limit on failed attempts (gateway/auth.py).

Both: JSON may spell a lone surrogate (`"\\ud800"`), which the SDK's parser refuses, so the request
would go unanswered (stdio) or be refused whole (HTTP). Such a string is rewritten with SURROGATE_MARK
in its place, and the tool refuses that argument with a one-line error (server.py).
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any, cast

import anyio

if TYPE_CHECKING:
    import socket

    from mcp.server.mcpserver import MCPServer

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# What a JSON string's lone surrogate (`"\ud800"`), which no JSON parser of the SDK accepts, becomes: a
# noncharacter, so that the tool can refuse the argument (server.py) instead of the request going unanswered.
SURROGATE_MARK = "\ufffe"
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}|\\u[dD][c-fC-F][0-9a-fA-F]{2}")
MAX_HTTP_BODY = 4 * 1024 * 1024  # a tool call is a few KiB; a note at most 16,000 characters


def claim_stdout() -> int:
    """A private duplicate of fd 1 for the protocol; fd 1 itself then writes to stderr."""
    sys.stdout.flush()
    wire = os.dup(1)
    os.set_inheritable(wire, False)  # no child process inherits the protocol stream
    os.dup2(2, 1)
    return wire


def mark_surrogates(text: str) -> str:
    """`text` (one JSON message) with each lone surrogate replaced by SURROGATE_MARK; unchanged (and
    not even parsed) when it spells none, which is every message but a bad one."""
    if not _SURROGATE_ESCAPE.search(text):
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return text  # the SDK answers a parse error as it would
    return json.dumps(_marked(value), ensure_ascii=False)


def _marked(value: Any) -> Any:
    if isinstance(value, str):
        # json.loads joins a valid pair into one character: a surrogate left on its own is a lone one
        return "".join(SURROGATE_MARK if "\ud800" <= ch <= "\udfff" else ch for ch in value)
    if isinstance(value, list):
        return [_marked(item) for item in value]
    if isinstance(value, dict):
        return {_marked(key): _marked(item) for key, item in value.items()}
    return value


class _MarkedLines:
    """stdin as the SDK's stdio transport iterates it, one JSON message a line, surrogates marked."""

    def __init__(self) -> None:
        self._file = anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self._file:
            yield mark_surrogates(line)


async def serve_stdio(server: MCPServer[Any], wire: int) -> None:
    """Serve one client over stdin and the protocol stream `wire` (claim_stdout) until stdin ends."""
    from mcp.server.stdio import stdio_server

    out = io.TextIOWrapper(os.fdopen(wire, "wb", closefd=False), encoding="utf-8", newline="\n")
    async with stdio_server(cast(Any, _MarkedLines()), anyio.wrap_file(out)) as (read, write):
        # MCPServer.run_stdio_async does this with the process's own stdio; the low-level server is
        # the documented way to serve other streams.
        lowlevel = server._lowlevel_server
        await lowlevel.run(read, write, lowlevel.create_initialization_options())


class BearerGuard:
    """The HTTP app, let in only with `Authorization: Bearer TOKEN`; each request's body with its lone
    surrogates marked (mark_surrogates)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        from openclaw_cli.gateway.auth import FailureLimiter

        self.app = app
        self.token = token
        self.failures = FailureLimiter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)  # lifespan: the SDK's session manager starts here
            return
        from openclaw_cli.gateway.auth import authenticate, bearer

        headers = {key.lower(): value for key, value in scope.get("headers", [])}
        given = bearer(headers.get(b"authorization", b"").decode("latin-1") or None)
        client = scope["client"][0] if scope.get("client") else "unknown"
        refusal = authenticate(self.token, given, client, self.failures)
        if refusal is not None:
            await _json(send, refusal.status, {"error": refusal.message})
            return
        if scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        body = await _body(receive)
        if body is None:
            await _json(send, 413, {"error": f"the request body is larger than {MAX_HTTP_BODY} bytes"})
            return
        await self.app(scope, _replay(_marked_body(body), receive), send)


async def _body(receive: Receive) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_HTTP_BODY:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            break
    return b"".join(chunks)


def _marked_body(body: bytes) -> bytes:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return body  # the SDK refuses it as it would
    marked = mark_surrogates(text)
    return body if marked is text else marked.encode("utf-8")


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # then whatever comes next (a disconnect)

    return replay


async def _json(send: Send, status: int, value: dict[str, Any]) -> None:
    body = json.dumps(value).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def serve_http(server: MCPServer[Any], sock: socket.socket, host: str, token: str) -> None:
    """Serve streamable HTTP at /mcp on the bound socket `sock` until the process is stopped."""
    import uvicorn

    app = BearerGuard(cast(ASGIApp, server.streamable_http_app(host=host)), token)
    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    await uvicorn.Server(config).serve(sockets=[sock])
