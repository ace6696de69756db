"""A fake Slack Web API on 127.0.0.1 (auth.test, chat.postMessage), and signed Events API requests.

fake = FakeSlack().start()
fake.api_base                  # channels.slack.apiBase
fake.posted                    # chat.postMessage bodies, as delivered
fake.fail_next(429) / fail_next(502)
post_event(gateway_url, SECRET, event_body(...), retry=1, timestamp=...)  # -> (status, body)
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fake_openai import STOP_POLL_S

SLACK_TOKEN = "xoxb-fake-slack-token-never-printed"
SIGNING_SECRET = "fake-signing-secret"
BOT_USER = "UBOT"


@dataclass
class FakeSlack:
    posted: list[dict[str, Any]] = field(default_factory=list)
    _failures: deque[int] = field(default_factory=deque)
    _cond: threading.Condition = field(default_factory=threading.Condition)
    _server: ThreadingHTTPServer | None = None

    @property
    def api_base(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/api/"

    def start(self) -> FakeSlack:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, args=(STOP_POLL_S,), daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def fail_next(self, status: int) -> None:
        with self._cond:
            self._failures.append(status)

    def wait_posted(self, count: int, deadline: float = 30.0) -> list[dict[str, Any]]:
        end = time.monotonic() + deadline
        with self._cond:
            while len(self.posted) < count:
                if time.monotonic() > end:
                    raise AssertionError(f"expected {count} posts, got {self.posted}")
                self._cond.wait(end - time.monotonic())
            return list(self.posted)

    def answer(self, method: str, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        with self._cond:
            if self._failures:
                status = self._failures.popleft()
                headers = {"Retry-After": "1"} if status == 429 else {}
                return (
                    status,
                    {"ok": False, "error": "ratelimited" if status == 429 else "fatal_error"},
                    headers,
                )
            if method == "auth.test":
                return 200, {"ok": True, "user_id": BOT_USER, "bot_id": "BBOT", "team_id": "T1"}, {}
            if method == "chat.postMessage":
                self.posted.append(body)
                self._cond.notify_all()
                return 200, {"ok": True, "channel": body.get("channel"), "ts": f"{time.time():.6f}"}, {}
        return 404, {"ok": False, "error": "unknown_method"}, {}


def _handler(fake: FakeSlack) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body = json.loads(raw) if raw and "json" in self.headers.get("content-type", "") else {}
            except ValueError:
                body = {}
            status, answer, headers = fake.answer(self.path.rsplit("/", 1)[-1], body)
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def event_body(
    user: str,
    text: str,
    *,
    channel: str = "D1",
    channel_type: str = "im",
    ts: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    stamp = ts or f"{time.time():.6f}"
    event = {
        "type": "message",
        "user": user,
        "text": text,
        "channel": channel,
        "channel_type": channel_type,
        "ts": stamp,
        **extra,
    }
    return {"type": "event_callback", "team_id": "T1", "event_id": f"Ev{stamp}", "event": event}


def post_event(
    gateway_http: str,
    body: dict[str, Any] | bytes,
    *,
    secret: str = SIGNING_SECRET,
    timestamp: int | None = None,
    retry: int | None = None,
) -> tuple[int, dict[str, Any]]:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"v0:{stamp}:".encode() + raw, hashlib.sha256).hexdigest()
    headers = {
        "Content-Type": "application/json",
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": f"v0={digest}",
    }
    if retry is not None:
        headers["X-Slack-Retry-Num"] = str(retry)
        headers["X-Slack-Retry-Reason"] = "http_timeout"
    request = urllib.request.Request(f"{gateway_http}/channels/slack/events", raw, headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.loads(reply.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")
