"""CLI reads through a running gateway: `memory search` and `memory inject` ask this home's gateway, which
holds the embedders and the searcher warm, instead of loading them in a fresh process.

`ask_gateway` decides and calls in one step: no pid file means no gateway (the common case, nothing is
probed); a pid file whose process is gone, a gateway that does not answer within a second, one that refuses
the token, one of another version (its hello says which), or one that answers the method with an error all
give an Answer without a payload and with the reason, and the command runs in-process as it would without a
gateway. So a remote failure can never change what the command prints: the in-process path says it.

Imports nothing of the memory stack, the settings or the gateway server; http.client only when a pid file
names a live process. Plain HTTP (gateway/http/reads.py), not a WebSocket: websockets took ~25 ms of a
~110 ms command to import, and its handshake and hello one more exchange.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import openclaw_cli
from openclaw_cli.gateway.auth import read_token_file
from openclaw_cli.gateway.client.pidfile import gateway_process, process_alive, read_pid_record
from openclaw_cli.gateway.client.websocket import refusal_message

if TYPE_CHECKING:
    from http.client import HTTPConnection

    from openclaw_cli.core.paths import Home

OPEN_TIMEOUT = 1.0  # a gateway that cannot finish a handshake in a second on this machine is not well
REPLY_TIMEOUT = 30.0  # a search on a warm gateway takes milliseconds; a cold one may load a model


@dataclass(frozen=True)
class Answer:
    """The method's payload, or None with why the gateway was not used (None too when there is none)."""

    payload: Any = None
    reason: str | None = None
    via: str | None = None  # host:port of the gateway that answered

    @property
    def answered(self) -> bool:
        return self.via is not None


class _NoAnswer(Exception):
    """The gateway was reached but did not serve the call; the message says why."""


def home_token(home: Home, env_token: str | None) -> str | None:
    """The token a CLI command sends: OPENCLAW_GATEWAY_TOKEN (the caller reads it), else the home's file."""
    return env_token or read_token_file(home.root / "gateway" / "token")


def ask_gateway(
    home: Home,
    token: str | None,
    method: str,
    params: dict[str, Any],
    *,
    open_timeout: float = OPEN_TIMEOUT,
    reply_timeout: float = REPLY_TIMEOUT,
) -> Answer:
    """Call `method` on the gateway of `home` when one runs, is of this version and serves it."""
    record = read_pid_record(home)
    if record is None:
        return Answer()
    if not process_alive(record["pid"]):
        return Answer(reason=f"the gateway pid file names process {record['pid']}, which is gone")
    if gateway_process(home) is None:  # the system gave its pid to another program since
        return Answer(reason=f"the gateway pid file names process {record['pid']}, which is not a gateway")
    host, port = str(record.get("host", "127.0.0.1")), int(record.get("port", 0) or 0)
    if not port:
        return Answer(reason="the gateway pid file names no port")
    target = "127.0.0.1" if host == "0.0.0.0" else host
    try:
        payload = _call(target, port, token, method, params, open_timeout, reply_timeout)
    except _NoAnswer as exc:
        return Answer(reason=str(exc))
    return Answer(payload=payload, via=f"{target}:{port}")


def _call(
    host: str,
    port: int,
    token: str | None,
    method: str,
    params: dict[str, Any],
    open_timeout: float,
    reply_timeout: float,
) -> Any:
    """Ask the gateway's version (within `open_timeout`: a gateway that cannot answer that is not well),
    then, on the same connection, the method (gateway/http/reads.py)."""
    import http.client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    conn = http.client.HTTPConnection(host, port, timeout=open_timeout)
    try:
        theirs = _answer(conn, "GET", "/rpc", None, headers).get("version")
        if theirs != openclaw_cli.__version__:
            raise _NoAnswer(
                f"the gateway runs version {theirs or 'unknown'}, this is {openclaw_cli.__version__}"
            )
        if conn.sock is not None:
            conn.sock.settimeout(reply_timeout)  # a search may wait for a model the gateway still loads
        answer = _answer(conn, "POST", f"/rpc/{method}", json.dumps(params).encode("utf-8"), headers)
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise _NoAnswer(f"the gateway at {host}:{port} does not answer ({exc.__class__.__name__})") from exc
    finally:
        conn.close()
    if not answer.get("ok"):
        error = answer.get("error")
        code, message = (
            (error.get("code"), error.get("message")) if isinstance(error, dict) else (None, error)
        )
        raise _NoAnswer(f"the gateway answered {method} with {code}: {message}")
    return answer.get("payload")


def _answer(
    conn: HTTPConnection, verb: str, path: str, body: bytes | None, headers: dict[str, str]
) -> dict[str, Any]:
    """The JSON object one request answers; _NoAnswer when the gateway refuses it or does not serve it."""
    sent = {**headers, "Content-Type": "application/json"} if body is not None else headers
    conn.request(verb, path, body, sent)
    reply = conn.getresponse()
    data = reply.read()
    if reply.status in (401, 429):
        message = refusal_message(data) or reply.reason
        raise _NoAnswer(f"the gateway refused the connection (HTTP {reply.status}: {message})")
    value = json.loads(data) if data else {}
    if not isinstance(value, dict):
        raise ValueError("the answer is not a JSON object")
    if reply.status == 404 and path == "/rpc":
        raise _NoAnswer("the gateway does not serve reads over HTTP (an older version)")
    return value
