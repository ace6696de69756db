"""A fake Telegram Bot API server on 127.0.0.1, for the gateway's Telegram channel (a real process).

    fake = FakeTelegram().start()
    fake.api_base                      # "http://127.0.0.1:PORT": channels.telegram.apiBase
    fake.dm(1001, "hello")             # a private message from user 1001: queued for getUpdates
    fake.group(-500, 1001, "@claw_bot hi")
    fake.wait_sent(1)                  # the messages the bot sent (sendMessage), waited for with a deadline
    fake.fail_next("sendMessage", 429, retry_after=1) / fail_next(..., 502) / drop_next("sendMessage")
    fake.reject_html_next()            # the next HTML sendMessage is refused: "can't parse entities"
    hold = fake.hold("sendMessage")    # the next such request blocks: hold.entered.wait(); never answered
    fake.conflict = True               # getUpdates answers 409 Conflict (a second poller)

getUpdates honours `offset` as Telegram does: updates below it are forgotten for good. A held request is
never recorded as delivered: the test kills the gateway while it waits, then releases it.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

from tests.fake_openai import STOP_POLL_S

TOKEN = "123456:TEST-fake-token-do-not-print"
BOT_ID = 999
BOT_USERNAME = "claw_bot"


@dataclass
class Hold:
    method: str
    skip: int = 0  # let this many such requests through first
    entered: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


@dataclass
class FakeTelegram:
    token: str = TOKEN
    conflict: bool = False
    updates: list[dict[str, Any]] = field(default_factory=list)
    sent: list[dict[str, Any]] = field(default_factory=list)  # sendMessage params, as delivered
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # every request
    files: dict[str, bytes] = field(default_factory=dict)  # file_path -> bytes
    # time.perf_counter() when getUpdates handed out each update id (first time), and of each sendMessage
    handed_at: dict[int, float] = field(default_factory=dict)
    sent_at: list[float] = field(default_factory=list)
    _next_update: int = 1
    _next_message: int = 1
    _failures: deque[tuple[str, int, int | None, str | None]] = field(default_factory=deque)
    _holds: list[Hold] = field(default_factory=list)
    _cond: threading.Condition = field(default_factory=threading.Condition)
    _server: ThreadingHTTPServer | None = None

    @property
    def api_base(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FakeTelegram:
        self._server = _QuietServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, args=(STOP_POLL_S,), daemon=True).start()
        return self

    def stop(self) -> None:
        for hold in self._holds:
            hold.release.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    # ------------------------------------------------------------------ the test's controls

    def push(self, message: dict[str, Any]) -> int:
        with self._cond:
            update_id = self._next_update
            self._next_update += 1
            message.setdefault("message_id", 10_000 + update_id)
            message.setdefault("date", int(time.time()))
            self.updates.append({"update_id": update_id, "message": message})
            self._cond.notify_all()
        return update_id

    def dm(self, user: int, text: str, **extra: Any) -> int:
        sender = {"id": user, "is_bot": False, "first_name": f"user{user}"}
        return self.push({"chat": {"id": user, "type": "private"}, "from": sender, "text": text, **extra})

    def group(self, chat: int, user: int, text: str, **extra: Any) -> int:
        sender = {"id": user, "is_bot": False, "first_name": f"user{user}"}
        chat_obj = {"id": chat, "type": "supergroup", "title": "g"}
        return self.push({"chat": chat_obj, "from": sender, "text": text, **extra})

    def fail_next(self, method: str, status: int, *, retry_after: int | None = None) -> None:
        with self._cond:
            self._failures.append((method, status, retry_after, None))

    def drop_next(self, method: str) -> None:
        """The next such request's connection is closed without an answer."""
        with self._cond:
            self._failures.append((method, 0, None, "drop"))

    def reject_html_next(self) -> None:
        with self._cond:
            self._failures.append(("sendMessage", 400, None, "html"))

    def hold(self, method: str, skip: int = 0) -> Hold:
        hold = Hold(method, skip)
        with self._cond:
            self._holds.append(hold)
        return hold

    def wait_sent(self, count: int, deadline: float = 30.0) -> list[dict[str, Any]]:
        end = time.monotonic() + deadline
        with self._cond:
            while len(self.sent) < count:
                left = end - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"expected {count} sent messages, got {len(self.sent)}: {self.sent}")
                self._cond.wait(left)
            return list(self.sent)

    def texts_to(self, chat: int) -> list[str]:
        return [str(m["text"]) for m in self.sent if str(m["chat_id"]) == str(chat)]

    def acknowledged(self) -> int:
        """The highest offset a getUpdates asked with: updates below it are gone."""
        offsets = [int(p.get("offset") or 0) for name, p in self.calls if name == "getUpdates"]
        return max(offsets, default=0)

    # ------------------------------------------------------------------ serving

    def _take_failure(self, method: str) -> tuple[int, int | None, str | None] | None:
        for index, (name, status, retry, kind) in enumerate(self._failures):
            if name == method:
                del self._failures[index]
                return status, retry, kind
        return None

    def _take_hold(self, method: str) -> Hold | None:
        for index, hold in enumerate(self._holds):
            if hold.method == method and not hold.entered.is_set():
                if hold.skip > 0:
                    hold.skip -= 1
                    return None
                del self._holds[index]
                return hold
        return None

    def answer(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """(status, body), or None to close the connection without an answer."""
        with self._cond:
            self.calls.append((method, params))
            failure = self._take_failure(method)
            hold = self._take_hold(method)
        if hold is not None:
            hold.entered.set()
            hold.release.wait()
            return None
        if failure is not None:
            status, retry, kind = failure
            if kind == "drop":
                return None
            if kind == "html" and params.get("parse_mode") != "HTML":
                failure = None  # only the HTML attempt is refused
            elif kind == "html":
                return 400, _error(400, "Bad Request: can't parse entities: unsupported start tag")
            else:
                parameters = {"retry_after": retry} if retry is not None else None
                said = {429: "Too Many Requests", 403: "Forbidden: bot was blocked by the user"}
                return status, _error(status, said.get(status, "Bad Gateway"), parameters)
        return 200, {"ok": True, "result": self._result(method, params)}

    def _result(self, method: str, params: dict[str, Any]) -> Any:
        if method == "getMe":
            return {"id": BOT_ID, "is_bot": True, "first_name": "Claw", "username": BOT_USERNAME}
        if method == "getUpdates":
            return self._get_updates(params)
        if method == "sendMessage":
            with self._cond:
                message_id = self._next_message
                self._next_message += 1
                self.sent.append(params)
                self.sent_at.append(time.perf_counter())
                self._cond.notify_all()
            chat = {"id": int(params["chat_id"]), "type": "private"}
            return {"message_id": message_id, "date": int(time.time()), "chat": chat, "text": params["text"]}
        if method == "getFile":
            path = f"files/{params['file_id']}"
            return {"file_id": params["file_id"], "file_unique_id": "u", "file_path": path}
        return True

    def _get_updates(self, params: dict[str, Any]) -> Any:
        offset = int(params.get("offset") or 0)
        timeout = min(float(params.get("timeout") or 0), 2.0)
        end = time.monotonic() + timeout
        with self._cond:
            if self.conflict:
                raise _Conflict
            self.updates = [u for u in self.updates if u["update_id"] >= offset]
            while not self.updates and time.monotonic() < end:
                self._cond.wait(end - time.monotonic())
            now = time.perf_counter()
            for update in self.updates:
                self.handed_at.setdefault(update["update_id"], now)
            return list(self.updates)


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a gateway killed or stopped mid-request resets its connections: expected here


class _Conflict(Exception):
    pass


def _error(status: int, description: str, parameters: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
    if parameters:
        body["parameters"] = parameters
    return body


def _params(content_type: str, raw: bytes) -> dict[str, Any]:
    if "json" in content_type:
        value = json.loads(raw or b"{}")
        return value if isinstance(value, dict) else {}
    params: dict[str, Any] = {}
    for key, values in parse_qs(raw.decode("utf-8"), keep_blank_values=True).items():
        value = values[-1]
        try:
            decoded = json.loads(value)
            params[key] = decoded if isinstance(decoded, dict | list) else value
        except ValueError:
            params[key] = value
    return params


def _handler(fake: FakeTelegram) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in two writes: with Nagle on, the body waited for the client's delayed
        # ACK (~40 ms) and the benchmark measured the fake.
        disable_nagle_algorithm = True

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            prefix = f"/bot{fake.token}/"
            if not self.path.startswith(prefix):
                self._send(404, _error(404, "Not Found"))
                return
            method = self.path[len(prefix) :]
            try:
                answer = fake.answer(method, _params(self.headers.get("content-type", ""), raw))
            except _Conflict:
                self._send(409, _error(409, "Conflict: terminated by other getUpdates request"))
                return
            if answer is None:
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.close()
                return
            self._send(*answer)

        def do_GET(self) -> None:  # noqa: N802
            prefix = f"/file/bot{fake.token}/"
            fake.calls.append(("download", {"path": self.path[len(prefix) :]}))
            data = fake.files.get(self.path[len(prefix) :]) if self.path.startswith(prefix) else None
            if data is None:
                self._send(404, _error(404, "Not Found"))
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
