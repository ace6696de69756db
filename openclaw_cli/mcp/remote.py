"""The home's running gateway, as the MCP server uses it: its warm models and its single writer.

Found the way every CLI command finds it (gateway/pidfile.home_gateway: the home's pid file, never a
port). Reads are asked over the HTTP `/rpc` routes (gateway/http/reads.py) on one kept-alive connection,
whose version is checked when it opens; writes (memory.add, memory.delete), which those routes do not
serve, go over one WebSocket kept open beside it. `call` answers None when no gateway serves the call (none
runs, it is of another version, it refuses the token, the connection broke): the caller then works in its
own process. An error the gateway answers (a bad argument, an unknown id) is raised as the domain error it
stands for, so the tool says it exactly as it would without a gateway; any other error the gateway answers
is raised too, never retried here, so a write is never made twice.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import threading
from typing import TYPE_CHECKING, Any

import openclaw_cli
from openclaw_cli.core.errors import Conflict, InvalidInput, NotFound, OpenclawError

if TYPE_CHECKING:
    from http.client import HTTPConnection

    from websockets.sync.client import ClientConnection

    from openclaw_cli.core.paths import Home

log = logging.getLogger("openclaw.mcp")
OPEN_TIMEOUT = 1.0
REPLY_TIMEOUT = 60.0  # a gateway still loading its models at start answers within seconds
WRITES = frozenset({"memory.add", "memory.delete"})
_ERRORS: dict[str, type[OpenclawError]] = {
    "INVALID_PARAMS": InvalidInput,
    "NOT_FOUND": NotFound,
    "CONFLICT": Conflict,
}


class GatewayFailed(OpenclawError):
    """The gateway took the call and could not do it (unavailable, internal)."""


class _Unserved(Exception):
    """The gateway was not reached, or would not serve the call; the message says why."""


Target = tuple[str, int]


class GatewayLink:
    def __init__(self, home: Home, token: str | None) -> None:
        self.home = home
        self.token = token
        self._lock = threading.Lock()  # one request at a time on the connections
        self._conn: HTTPConnection | None = None
        self._ws: ClientConnection | None = None
        self._target: Target | None = None  # whose version was checked, for both connections
        self._ids = itertools.count(1)
        self._said: str | None = None  # the last reason logged: each is logged once, not per call

    def running(self) -> bool:
        from openclaw_cli.gateway.client.pidfile import home_gateway

        return home_gateway(self.home) is not None

    def call(self, method: str, params: dict[str, Any]) -> Any | None:
        """The payload of `method`, or None when no gateway serves it (then the caller works locally)."""
        from openclaw_cli.gateway.client.pidfile import home_gateway

        found = home_gateway(self.home)
        with self._lock:
            if found is None:
                self._drop()
                return None
            host, port = found
            target = ("127.0.0.1" if host == "0.0.0.0" else host, port)
            try:
                if self._target != target:
                    self._open(target)
                answer = (
                    self._write(target, method, params)
                    if method in WRITES
                    else self._read(target, method, params)
                )
            except _Unserved as exc:
                self._drop()
                if str(exc) != self._said:
                    self._said = str(exc)
                    log.warning("working in this process: %s", exc)
                return None
        return _payload(method, answer)

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        if self._conn is not None:
            self._conn.close()
        if self._ws is not None:
            with contextlib.suppress(Exception):
                self._ws.close()
        self._conn, self._ws, self._target = None, None, None

    def _unreachable(self, target: Target, exc: Exception) -> _Unserved:
        return _Unserved(f"the gateway at {target[0]}:{target[1]} does not answer ({exc.__class__.__name__})")

    def _open(self, target: Target) -> None:
        """A fresh HTTP connection to `target`, once its version is this one's."""
        import http.client

        self._drop()
        self._conn = http.client.HTTPConnection(*target, timeout=OPEN_TIMEOUT)
        try:
            status, answer = self._exchange("GET", "/rpc", None)
        except (OSError, http.client.HTTPException, ValueError) as exc:
            raise self._unreachable(target, exc) from exc
        if status in (401, 429):
            raise _Unserved(f"the gateway refused the token (HTTP {status})")
        if answer.get("version") != openclaw_cli.__version__:
            raise _Unserved(
                f"the gateway runs version {answer.get('version')}, this is {openclaw_cli.__version__}"
            )
        if self._conn.sock is not None:
            self._conn.sock.settimeout(REPLY_TIMEOUT)
        self._target = target

    def _read(self, target: Target, method: str, params: dict[str, Any]) -> dict[str, Any]:
        import http.client

        body = json.dumps(params).encode("utf-8")
        try:
            status, answer = self._exchange("POST", f"/rpc/{method}", body)
        except (OSError, http.client.HTTPException, ValueError):
            self._open(target)  # a kept-alive connection the gateway closed meanwhile: once more
            try:
                status, answer = self._exchange("POST", f"/rpc/{method}", body)
            except (OSError, http.client.HTTPException, ValueError) as exc:
                raise self._unreachable(target, exc) from exc
        if status in (401, 429):
            raise _Unserved(f"the gateway refused the token (HTTP {status})")
        return answer

    def _exchange(self, verb: str, path: str, body: bytes | None) -> tuple[int, dict[str, Any]]:
        assert self._conn is not None
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        if body is not None:
            headers["Content-Type"] = "application/json"
        self._conn.request(verb, path, body, headers)
        reply = self._conn.getresponse()
        data = reply.read()
        value = json.loads(data) if data else {}
        if not isinstance(value, dict):
            raise ValueError("the answer is not a JSON object")
        return reply.status, value

    def _write(self, target: Target, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """`method` over the WebSocket (opened on first use): its response frame."""
        from websockets.exceptions import WebSocketException

        from openclaw_cli.gateway.client.websocket import GatewayRefused, open_ws

        try:
            if self._ws is None:
                url = f"ws://{target[0]}:{target[1]}/ws"
                self._ws = open_ws(url, self.token, open_timeout=OPEN_TIMEOUT, max_size=None)
            frame_id = str(next(self._ids))
            self._ws.send(json.dumps({"type": "req", "id": frame_id, "method": method, "params": params}))
            while True:  # events pushed meanwhile are not this call's
                frame = json.loads(self._ws.recv(timeout=REPLY_TIMEOUT))
                if (
                    isinstance(frame, dict)
                    and frame.get("type") == "res"
                    and str(frame.get("id")) == frame_id
                ):
                    return frame
        except GatewayRefused as exc:
            raise _Unserved(exc.message) from exc
        except (OSError, TimeoutError, ValueError, WebSocketException) as exc:
            raise self._unreachable(target, exc) from exc


def _payload(method: str, answer: dict[str, Any]) -> Any:
    """The payload of a response (an HTTP body or a WebSocket frame); its error as the domain error."""
    if answer.get("ok"):
        return answer.get("payload")
    given = answer.get("error")
    error: dict[str, Any] = given if isinstance(given, dict) else {}
    kind = _ERRORS.get(str(error.get("code")), GatewayFailed)
    message = str(error.get("message") or f"the gateway could not answer {method}")
    hint = error.get("hint")
    raise kind(message, hint=hint if isinstance(hint, str) else None)
