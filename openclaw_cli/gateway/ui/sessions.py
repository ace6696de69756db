"""Who is signed in to the Control UI: sessions kept in the gateway's memory, a cookie, a CSRF token.

The person signs in once with the gateway token (gateway/auth.py: compared in constant time, and a client
with too many wrong tokens is answered 429 as on every other endpoint). The session id is 32 random bytes
in a cookie that is HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it) and
Secure when the page came over TLS. Sessions live in this process only: a gateway restart signs everyone
out, which is the safe failure. Each session has its own CSRF token, carried by every form of the UI and
checked on every POST, with the Origin header when the browser sends one.

The WebChat's WebSocket is authenticated by the same cookie (gateway/http/websocket.py asks `websocket_allowed`):
the browser sends it with the upgrade, so the token never appears in a URL nor in a page, and the Origin
of the upgrade must be this gateway's own (a cross-site page cannot open a socket with the cookie).
"""

from __future__ import annotations

import hmac
import secrets
import time
from dataclasses import dataclass, field

from starlette.requests import HTTPConnection

COOKIE = "openclaw_ui"
LOGIN_COOKIE = "openclaw_ui_login"  # the login form's own CSRF value (double-submit: no session yet)
IDLE_SECONDS = 12 * 3600
MAX_SESSIONS = 256


@dataclass
class UiSession:
    sid: str
    csrf: str
    acting_as: str | None = None  # None: the owner; else the person the owner picked
    seen: float = field(default_factory=time.monotonic)


class UiSessions:
    def __init__(self, idle_seconds: float = IDLE_SECONDS) -> None:
        self.idle = idle_seconds
        self._by_id: dict[str, UiSession] = {}

    def create(self) -> UiSession:
        self._expire()
        if len(self._by_id) >= MAX_SESSIONS:  # the oldest goes: a loop of logins cannot grow this
            self._by_id.pop(min(self._by_id.values(), key=lambda s: s.seen).sid)
        session = UiSession(secrets.token_urlsafe(32), secrets.token_urlsafe(32))
        self._by_id[session.sid] = session
        return session

    def end(self, sid: str) -> None:
        self._by_id.pop(sid, None)

    def of(self, conn: HTTPConnection) -> UiSession | None:
        """The live session the request's cookie names, or None."""
        sid = conn.cookies.get(COOKIE)
        if not sid:
            return None
        session = self._by_id.get(sid)
        now = time.monotonic()
        if session is None or now - session.seen > self.idle:
            self._by_id.pop(sid, None)
            return None
        session.seen = now
        return session

    def _expire(self) -> None:
        now = time.monotonic()
        for sid in [s.sid for s in self._by_id.values() if now - s.seen > self.idle]:
            del self._by_id[sid]

    def websocket_allowed(self, conn: HTTPConnection) -> bool:
        """A WebSocket upgrade from the UI's own pages: a live session cookie and this host's Origin."""
        return self.of(conn) is not None and same_origin(conn, required=True)


def same_origin(conn: HTTPConnection, *, required: bool = False) -> bool:
    """Whether the request's Origin (when sent; `required` for WebSockets) is this gateway's host."""
    origin = conn.headers.get("origin")
    if origin is None:
        return not required
    host = conn.headers.get("host", "")
    return origin in (f"http://{host}", f"https://{host}")


def csrf_ok(expected: str, given: str | None) -> bool:
    return given is not None and hmac.compare_digest(expected.encode(), given.encode())


def cookie_args(conn: HTTPConnection) -> dict[str, object]:
    return {
        "httponly": True,
        "samesite": "strict",
        "secure": conn.url.scheme in ("https", "wss"),
        "path": "/",
    }
