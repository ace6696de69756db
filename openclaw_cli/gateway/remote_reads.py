"""CLI reads through a running gateway: `memory search` and `memory inject` ask this home's gateway, which
holds the embedders and the searcher warm, instead of loading them in a fresh process.

`ask_gateway` decides and calls in one step: no pid file means no gateway (the common case, nothing is
probed); a pid file whose process is gone, a gateway that does not answer within a second, one that refuses
the token, one of another version (its hello says which), or one that answers the method with an error all
give an Answer without a payload and with the reason, and the command runs in-process as it would without a
gateway. So a remote failure can never change what the command prints: the in-process path says it.

Imports nothing of the memory stack, the settings or the gateway server; websockets only when a pid file
names a live process.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import openclaw_cli
from openclaw_cli.gateway.auth import read_token_file
from openclaw_cli.gateway.pidfile import process_alive, read_pid_record

if TYPE_CHECKING:
    from openclaw_cli.paths import Home

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
    host, port = str(record.get("host", "127.0.0.1")), int(record.get("port", 0) or 0)
    if not port:
        return Answer(reason="the gateway pid file names no port")
    target = "127.0.0.1" if host == "0.0.0.0" else host
    try:
        payload = _call(f"ws://{target}:{port}/ws", token, method, params, open_timeout, reply_timeout)
    except _NoAnswer as exc:
        return Answer(reason=str(exc))
    return Answer(payload=payload, via=f"{target}:{port}")


def _call(
    url: str,
    token: str | None,
    method: str,
    params: dict[str, Any],
    open_timeout: float,
    reply_timeout: float,
) -> Any:
    from websockets.exceptions import WebSocketException

    from openclaw_cli.gateway.ws_client import GatewayRefused, open_ws

    try:
        with open_ws(url, token, open_timeout=open_timeout, close_timeout=1, max_size=None) as ws:
            # The hello answers `connect` (the token again, for gateways that still wait for it).
            hello = _request(ws, "c", "connect", {"auth": {"token": token or ""}}, open_timeout)
            theirs = hello.get("version") if isinstance(hello, dict) else None
            if theirs != openclaw_cli.__version__:
                raise _NoAnswer(
                    f"the gateway runs version {theirs or 'unknown'}, this is {openclaw_cli.__version__}"
                )
            return _request(ws, "1", method, params, reply_timeout)
    except GatewayRefused as exc:
        raise _NoAnswer(exc.message) from exc
    except (OSError, WebSocketException, TimeoutError, ValueError) as exc:
        raise _NoAnswer(f"the gateway at {url} does not answer ({exc.__class__.__name__})") from exc


def _request(ws: Any, request_id: str, method: str, params: dict[str, Any], timeout: float) -> Any:
    ws.send(json.dumps({"type": "req", "id": request_id, "method": method, "params": params}))
    deadline = time.monotonic() + timeout
    while True:
        frame = json.loads(ws.recv(timeout=max(0.01, deadline - time.monotonic())))
        if not isinstance(frame, dict) or frame.get("type") != "res" or frame.get("id") != request_id:
            continue  # events pushed meanwhile
        if not frame.get("ok"):
            error = frame.get("error") or {}
            raise _NoAnswer(f"the gateway answered {method} with {error.get('code')}: {error.get('message')}")
        return frame.get("payload")
