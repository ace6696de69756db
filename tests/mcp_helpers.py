"""A real MCP client for the tests: the SDK's own ClientSession, over stdio against `python -m openclaw_cli
mcp` as a subprocess, or over streamable HTTP, driven from synchronous tests.

The session lives in a background event loop for as long as a module needs it (one server process per
module and person), and each call is sent to that loop and waited for.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import Future
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.conftest import ROOT, base_env

Opener = Callable[[], AbstractAsyncContextManager[Any]]
CALL_TIMEOUT = 120.0  # the first search of a cold server may wait for its models (~seconds)


class McpClient:
    """One initialized ClientSession, held open in a loop of its own until `close`."""

    def __init__(self, opener: Opener) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp-client", daemon=True)
        self._thread.start()
        self._ready: Future[ClientSession] = Future()
        self._stop: asyncio.Event | None = None
        self._main = asyncio.run_coroutine_threadsafe(self._hold(opener), self._loop)
        try:
            self.session = self._ready.result(CALL_TIMEOUT)
        except BaseException:
            self.close()
            raise

    async def _hold(self, opener: Opener) -> None:
        self._stop = asyncio.Event()
        try:
            async with opener() as streams, ClientSession(streams[0], streams[1]) as session:
                self.initialized = await session.initialize()
                self._ready.set_result(session)
                await self._stop.wait()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            raise

    def run(self, work: Callable[[ClientSession], Awaitable[Any]]) -> Any:
        return asyncio.run_coroutine_threadsafe(work(self.session), self._loop).result(CALL_TIMEOUT)

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
        """(is an error, the JSON answer or the error's text)."""
        result = self.run(lambda s: s.call_tool(tool, arguments))
        text = result.content[0].text
        return bool(result.is_error), (text if result.is_error else json.loads(text))

    def ok(self, tool: str, arguments: dict[str, Any]) -> Any:
        failed, answer = self.call(tool, arguments)
        assert not failed, answer
        return answer

    def error(self, tool: str, arguments: dict[str, Any]) -> str:
        failed, answer = self.call(tool, arguments)
        assert failed, answer
        assert isinstance(answer, str) and "\n" not in answer, answer  # one line
        return answer

    def read(self, uri: str) -> str:
        result = self.run(lambda s: s.read_resource(uri))
        return str(result.contents[0].text)

    def close(self) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        with suppress(BaseException):  # a session that failed to open has nothing to close
            self._main.result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def stdio_opener(home: Path, *args: str, env: dict[str, str] | None = None) -> Opener:
    """`python -m openclaw_cli mcp ARGS` for `home`, launched by the SDK's stdio client."""
    full = {**base_env(home), **(env or {})}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "openclaw_cli", "mcp", *args], env=full, cwd=str(ROOT)
    )
    log = open(home.parent / f"mcp-{'-'.join(args) or 'owner'}.log", "a")  # noqa: SIM115 - the client keeps it

    @asynccontextmanager
    async def opener() -> AsyncIterator[Any]:
        async with stdio_client(params, errlog=log) as streams:
            yield streams

    return opener


def http_opener(url: str, token: str | None) -> Opener:
    import httpx2  # the SDK's HTTP client
    from mcp.client.streamable_http import streamable_http_client

    @asynccontextmanager
    async def opener() -> AsyncIterator[Any]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http,
            streamable_http_client(url, http_client=http) as streams,
        ):
            yield streams[0], streams[1]

    return opener


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_http(
    home: Path, port: int, *args: str, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """`openclaw mcp --http --port PORT ARGS`, returned once the port accepts connections."""
    log = open(home.parent / f"mcp-http-{port}.log", "ab")  # noqa: SIM115 - the child keeps it
    process = subprocess.Popen(
        [sys.executable, "-m", "openclaw_cli", "mcp", "--http", "--port", str(port), *args],
        env={**base_env(home), **(env or {})},
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
    )
    log.close()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, (home.parent / f"mcp-http-{port}.log").read_text()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise AssertionError("the MCP HTTP server did not start in time")


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
