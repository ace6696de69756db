"""`openclaw chat` through a running gateway: the WebSocket protocol of DESIGN.md "Gateway".

Frames: `{type:"req",id,method,params}` -> `{type:"res",id,ok,payload|error}`; the server also sends
`{type:"event",event,payload}`, and a reply streams as `chat` events (state delta, final, error, aborted).
The token travels in the upgrade request (gateway/client/websocket.py); the `connect` request that follows
carries it too, so that a gateway still running an earlier version, which waits for it, lets us in.
"""

from __future__ import annotations

import itertools
import json
import socket
from typing import Any

from openclaw_cli.agent.turn.requests import EventSink
from openclaw_cli.core.errors import OpenclawError

DEFAULT_PORT = 18789
WS_PATH = "/ws"
CONNECT_TIMEOUT = 2.0
REPLY_TIMEOUT = 600.0  # a turn may include several slow model calls


class GatewayError(OpenclawError):
    """The gateway refused a request or the connection broke."""


def gateway_listening(host: str, port: int, timeout: float = 0.3) -> bool:
    """Whether something accepts TCP connections there (a refused port answers at once)."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


class GatewayChat:
    def __init__(
        self,
        url: str,
        token: str | None,
        agent_id: str,
        session_key: str,
        *,
        user_id: str | None = None,
        claim: str | None = None,
        owner: bool = False,
    ) -> None:
        from websockets.exceptions import WebSocketException

        from openclaw_cli.gateway.client.websocket import GatewayRefused, open_ws

        self.mode = f"gateway {url}"
        self.agent_id = agent_id
        self.session_key = session_key
        self.user_id = user_id  # the person typing; sent with every call that reads or writes memory
        # `--user` as typed: the gateway applies the claim rules to it as the CLI did (claims.py), and the
        # owner's name is never sent as a claim, so the owner is `asOwner` unless an address was typed
        self.claim = claim
        self.owner = owner
        self._ids = itertools.count(1)
        try:
            self._ws = open_ws(url, token, open_timeout=CONNECT_TIMEOUT, max_size=None)
        except GatewayRefused as exc:
            raise GatewayError(exc.message, hint=exc.hint) from exc
        except (OSError, WebSocketException) as exc:
            raise GatewayError(
                f"cannot connect to the gateway at {url} ({exc})", hint="is it running?"
            ) from exc
        self.request("connect", {"token": token or "", "client": "openclaw-chat"})

    # -- frames ---------------------------------------------------------------------------------------

    def _receive(self, timeout: float) -> dict[str, Any]:
        from websockets.exceptions import ConnectionClosed

        try:
            raw = self._ws.recv(timeout=timeout)
        except TimeoutError as exc:
            raise GatewayError("the gateway did not answer in time") from exc
        except ConnectionClosed as exc:
            raise GatewayError(f"the gateway closed the connection ({exc.rcvd or 'no reason'})") from exc
        try:
            frame = json.loads(raw)
        except ValueError as exc:
            raise GatewayError("the gateway sent a frame that is not JSON") from exc
        if not isinstance(frame, dict):
            raise GatewayError("the gateway sent a frame that is not an object")
        return frame

    def request(
        self, method: str, params: dict[str, Any], on_event: EventSink | None = None, timeout: float = 60.0
    ) -> Any:
        """Send one request and return its payload; events arriving meanwhile go to `on_event`."""
        frame_id = self._send_frame(method, params)
        while True:
            frame = self._receive(timeout)
            if frame.get("type") == "res" and str(frame.get("id")) == frame_id:
                if not frame.get("ok"):
                    raise GatewayError(f"{method}: {_error_text(frame.get('error'))}")
                return frame.get("payload")
            if frame.get("type") == "event" and on_event is not None:
                on_event("gateway-event", frame)

    def _send_frame(self, method: str, params: dict[str, Any]) -> str:
        frame_id = str(next(self._ids))
        self._ws.send(json.dumps({"type": "req", "id": frame_id, "method": method, "params": params}))
        return frame_id

    # -- the chat calls -------------------------------------------------------------------------------

    def send(self, text: str, on_event: EventSink) -> dict[str, Any]:
        """chat.send, then the `chat` events of its run until final, error or aborted."""
        early: list[dict[str, Any]] = []
        payload = self.request(
            "chat.send",
            self._as_person({"sessionKey": self.session_key, "agentId": self.agent_id, "text": text}),
            lambda _kind, frame: early.append(frame),
        )
        run_id = str((payload or {}).get("runId", ""))
        reply: list[str] = []
        told: set[str] = set()  # notices come as they happen and again with the result: say them once
        pending = list(early)
        while True:
            try:
                frame = pending.pop(0) if pending else self._receive(REPLY_TIMEOUT)
            except KeyboardInterrupt:  # Ctrl-C: stop this reply, keep the chat (the run ends "aborted")
                self._send_frame("chat.abort", {"runId": run_id})
                continue
            if frame.get("type") != "event":
                continue
            body = frame.get("payload") or {}
            if frame.get("event") == "notice" and body.get("runId") in (None, run_id):
                text = str(body.get("text", ""))
                if text not in told:
                    told.add(text)
                    on_event("notice", {"text": text})
                continue
            if frame.get("event") != "chat" or str(body.get("runId")) != run_id:
                continue
            state = body.get("state")
            if state == "delta":
                reply.append(str(body.get("text", "")))
                on_event("delta", {"text": str(body.get("text", ""))})
            elif state in ("final", "error", "aborted"):
                return {
                    "runId": run_id,
                    "status": {"final": "ok"}.get(state, state),
                    "reply": str(body.get("text") or "".join(reply)) if state == "final" else "".join(reply),
                    "error": body.get("error") or (body.get("text") if state == "error" else None),
                    "notices": list(body.get("notices") or []),
                }

    def compact(self) -> dict[str, Any]:
        return dict(
            self.request(
                "sessions.compact",
                {"sessionKey": self.session_key, "agentId": self.agent_id},
                timeout=REPLY_TIMEOUT,
            )
            or {}
        )

    def memory_search(self, query: str) -> list[dict[str, Any]]:
        if self.user_id is None:  # without a person the gateway answers the operator's view: not ours
            return []
        payload = self.request("memory.search", self._as_person({"query": query, "agentId": self.agent_id}))
        results = payload.get("results", payload) if isinstance(payload, dict) else payload
        return list(results or [])

    def session_search(self, query: str) -> list[dict[str, Any]]:
        if self.user_id is None:  # without a person the gateway answers the operator's view: not ours
            return []
        params = self._as_person({"query": query, "agentId": self.agent_id, "k": 5})
        payload = self.request("session.search", params)
        return list(payload.get("results", []) if isinstance(payload, dict) else [])

    def remember(self, text: str) -> dict[str, Any]:
        if self.user_id is None:
            from openclaw_cli.core.errors import InvalidInput
            from openclaw_cli.identity.persons import ANONYMOUS_REASON

            raise InvalidInput(f"not remembered: {ANONYMOUS_REASON}", hint="start the chat with --user")
        return dict(
            self.request("memory.add", self._as_person({"text": text, "agentId": self.agent_id})) or {}
        )

    def forget(self, record_id: str) -> dict[str, Any]:
        params = self._as_person({"id": record_id, "agentId": self.agent_id})
        payload = dict(self.request("memory.delete", params) or {})
        return {"id": payload.get("deleted", record_id), **payload}

    def status(self) -> dict[str, Any]:
        payload = self.request("status", {})
        return {
            "mode": self.mode,
            "sessionKey": self.session_key,
            **(payload if isinstance(payload, dict) else {}),
        }

    def preload(self) -> None:
        """Nothing to load here: the gateway warmed its model client and memory at start."""

    def close(self) -> None:
        self._ws.close()

    def _as_person(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.claim is not None:
            return {**params, "userId": self.claim}
        if self.owner:  # the home's operator chatting as the owner (the main session, the owner's DM)
            return {**params, "asOwner": True}
        return {**params, "userId": self.user_id} if self.user_id is not None else params


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error.get("code") or error)
    return str(error or "failed")
