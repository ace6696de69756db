"""The home's running gateway, as the MCP server uses it: its warm models and its single writer.

Found the way every CLI command finds it (gateway/pidfile.home_gateway: the home's pid file, never a
port), asked over the HTTP `/rpc` routes (gateway/http_reads.py) on one kept-alive connection, whose
version is checked once when it opens. `call` answers None when no gateway serves the call (none runs, it
is of another version, it refuses the token, the connection broke): the caller then works in its own
process. An error the gateway answers (a bad argument, an unknown id) is raised as the domain error it
stands for, so the tool says it exactly as it would without a gateway.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import TYPE_CHECKING, Any

import openclaw_cli
from openclaw_cli.errors import Conflict, InvalidInput, NotFound, OpenclawError

if TYPE_CHECKING:
    from http.client import HTTPConnection

    from openclaw_cli.paths import Home

log = logging.getLogger("openclaw.mcp")
OPEN_TIMEOUT = 1.0
REPLY_TIMEOUT = 60.0  # a gateway still loading its models at start answers within seconds
_ERRORS: dict[str, type[OpenclawError]] = {
    "INVALID_PARAMS": InvalidInput,
    "NOT_FOUND": NotFound,
    "CONFLICT": Conflict,
}


class _Unserved(Exception):
    """The gateway was not reached, or would not serve the call; the message says why."""


class GatewayLink:
    def __init__(self, home: Home, token: str | None) -> None:
        self.home = home
        self.token = token
        self._lock = threading.Lock()  # one request at a time on the one connection
        self._conn: HTTPConnection | None = None
        self._target: tuple[str, int] | None = None
        self._said: str | None = None  # the last reason logged, so a reason is logged once, not per call

    def running(self) -> bool:
        from openclaw_cli.gateway.pidfile import home_gateway

        return home_gateway(self.home) is not None

    def call(self, method: str, params: dict[str, Any]) -> Any | None:
        """The payload of `method`, or None when no gateway serves it (then the caller works locally)."""
        from openclaw_cli.gateway.pidfile import home_gateway

        found = home_gateway(self.home)
        if found is None:
            self._drop()
            return None
        host, port = found
        target = ("127.0.0.1" if host == "0.0.0.0" else host, port)
        with self._lock:
            try:
                return self._ask(target, method, params)
            except _Unserved as exc:
                self._drop()
                if str(exc) != self._said:
                    self._said = str(exc)
                    log.warning("working in this process: %s", exc)
                return None

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        if self._conn is not None:
            self._conn.close()
        self._conn, self._target = None, None

    def _ask(self, target: tuple[str, int], method: str, params: dict[str, Any]) -> Any:
        import http.client

        for attempt in (1, 2):  # a kept-alive connection the gateway closed meanwhile is opened again
            fresh = self._conn is None or self._target != target
            if fresh:
                self._open(target)
            try:
                status, answer = self._exchange("POST", f"/rpc/{method}", json.dumps(params).encode("utf-8"))
                break
            except (OSError, http.client.HTTPException, ValueError) as exc:
                self._drop()
                if fresh or attempt == 2:
                    raise _Unserved(
                        f"the gateway at {target[0]}:{target[1]} does not answer ({exc})"
                    ) from exc
        if status in (401, 429):
            raise _Unserved(f"the gateway refused the token (HTTP {status})")
        if answer.get("ok"):
            return answer.get("payload")
        given = answer.get("error")
        error: dict[str, Any] = given if isinstance(given, dict) else {}
        kind = _ERRORS.get(str(error.get("code")))
        if kind is None:  # unavailable, internal: not the caller's to fix, and nothing was done
            raise _Unserved(f"the gateway answered {method} with {error.get('code')}: {error.get('message')}")
        raise kind(str(error.get("message")), hint=error.get("hint"))

    def _open(self, target: tuple[str, int]) -> None:
        import http.client

        self._drop()
        conn = http.client.HTTPConnection(*target, timeout=OPEN_TIMEOUT)
        self._conn, self._target = conn, target
        try:
            status, answer = self._exchange("GET", "/rpc", None)
        except (OSError, http.client.HTTPException, ValueError) as exc:
            self._drop()
            raise _Unserved(f"the gateway at {target[0]}:{target[1]} does not answer ({exc})") from exc
        if status in (401, 429):
            self._drop()
            raise _Unserved(f"the gateway refused the token (HTTP {status})")
        if answer.get("version") != openclaw_cli.__version__:
            self._drop()
            raise _Unserved(
                f"the gateway runs version {answer.get('version')}, this is {openclaw_cli.__version__}"
            )
        if conn.sock is not None:
            conn.sock.settimeout(REPLY_TIMEOUT)

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
