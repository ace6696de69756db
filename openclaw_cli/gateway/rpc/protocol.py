"""WebSocket frames (DESIGN.md "Gateway"): requests, responses and server events, all JSON text.

    {"type": "req", "id": "1", "method": "chat.send", "params": {...}}
    {"type": "res", "id": "1", "ok": true, "payload": {...}}
    {"type": "res", "id": "1", "ok": false, "error": {"code": "UNKNOWN_METHOD", "message": "..."}}
    {"type": "event", "event": "chat", "payload": {...}}

The connection is authenticated when it opens (the upgrade request's `Authorization: Bearer TOKEN`,
gateway/http/websocket.py); a `connect` request, which earlier clients send first, answers the hello. A frame
that is not such an object gets an INVALID_REQUEST response (id null when it had none) and the connection
stays open; frames larger than `gateway.maxMessageBytes` (default 1 MiB) close it with code 1009.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from openclaw_cli.core.errors import OpenclawError
from openclaw_cli.core.textcheck import HINT as TEXT_HINT
from openclaw_cli.core.textcheck import find_bad_text

PROTOCOL_VERSION = 1
MAX_ID_LENGTH = 128

# Error codes a client can act on.
INVALID_REQUEST = "INVALID_REQUEST"
UNKNOWN_METHOD = "UNKNOWN_METHOD"
INVALID_PARAMS = "INVALID_PARAMS"
NOT_CONNECTED = "NOT_CONNECTED"
UNAUTHORIZED = "UNAUTHORIZED"
RATE_LIMITED = "RATE_LIMITED"
NOT_FOUND = "NOT_FOUND"
CONFLICT = "CONFLICT"  # e.g. a reflection run already in progress
UNAVAILABLE = "UNAVAILABLE"
INTERNAL = "INTERNAL"


class FrameError(OpenclawError):
    """A request that cannot be served; `code` is one of the codes above."""

    def __init__(self, code: str, message: str, hint: str | None = None, request_id: str | None = None):
        super().__init__(message, hint)
        self.code = code
        self.request_id = request_id


@dataclass(frozen=True)
class Request:
    id: str
    method: str
    params: dict[str, Any]


def _request_id(frame: dict[str, Any]) -> str | None:
    value = frame.get("id")
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if isinstance(value, str) and 0 < len(value) <= MAX_ID_LENGTH:
        return value
    return None


def parse_request(text: str | bytes) -> Request:
    """A request frame, or FrameError(INVALID_REQUEST) saying what is wrong with it."""
    try:
        frame = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise FrameError(INVALID_REQUEST, f"the frame is not JSON ({exc.__class__.__name__})") from exc
    if not isinstance(frame, dict):
        raise FrameError(INVALID_REQUEST, "a frame must be a JSON object")
    _refuse_bad_text(frame)
    request_id = _request_id(frame)
    if frame.get("type") != "req":
        raise FrameError(INVALID_REQUEST, 'a client frame must have "type": "req"', request_id=request_id)
    if request_id is None:
        raise FrameError(INVALID_REQUEST, f'"id" must be a string of 1-{MAX_ID_LENGTH} characters')
    method = frame.get("method")
    if not isinstance(method, str) or not method:
        raise FrameError(INVALID_REQUEST, '"method" must be a non-empty string', request_id=request_id)
    params = frame.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise FrameError(INVALID_REQUEST, '"params" must be an object', request_id=request_id)
    return Request(request_id, method, params)


def _refuse_bad_text(frame: dict[str, Any]) -> None:
    """A lone surrogate escape (`"\\ud800"`) parses, but is not text: no method could store, search or
    echo it. Refused here, once for every method: INVALID_PARAMS when it is in `params`."""
    bad = find_bad_text(frame)
    if bad is None:
        return
    clean_id = _request_id(frame) if find_bad_text(frame.get("id")) is None else None
    code = INVALID_PARAMS if (bad.path + ".").startswith(("params.", "params[")) else INVALID_REQUEST
    raise FrameError(code, bad.describe(), hint=TEXT_HINT, request_id=clean_id)


def response(request_id: str | None, payload: Any) -> dict[str, Any]:
    return {"type": "res", "id": request_id, "ok": True, "payload": payload}


def error_response(
    request_id: str | None, code: str, message: str, hint: str | None = None
) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if hint:
        error["hint"] = hint
    return {"type": "res", "id": request_id, "ok": False, "error": error}


def event(name: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"type": "event", "event": name, "payload": payload}


def encode(frame: dict[str, Any]) -> str:
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":"), default=str)


def param_str(
    params: dict[str, Any], name: str, *, required: bool = True, max_length: int = 10_000_000
) -> str | None:
    """A string parameter, checked; FrameError(INVALID_PARAMS) when missing or not a string."""
    value = params.get(name)
    if value is None:
        if required:
            raise FrameError(INVALID_PARAMS, f'missing parameter "{name}"')
        return None
    if not isinstance(value, str):
        raise FrameError(INVALID_PARAMS, f'parameter "{name}" must be a string')
    if len(value) > max_length:
        raise FrameError(INVALID_PARAMS, f'parameter "{name}" is longer than {max_length} characters')
    return value


def param_bool(params: dict[str, Any], name: str) -> bool:
    """A true/false parameter, false when absent."""
    value = params.get(name, False)
    if not isinstance(value, bool):
        raise FrameError(INVALID_PARAMS, f'parameter "{name}" must be true or false')
    return value


def param_int(params: dict[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = params.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise FrameError(INVALID_PARAMS, f'parameter "{name}" must be an integer from {low} to {high}')
    return value
