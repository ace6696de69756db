"""The Control UI's sign-ins (gateway/ui/sessions.py), in-process: the cookie's flags, idle expiry, the bound
on sessions, the Origin rule of writes and WebSockets. The browser tests (test_ui_browser.py) drive the rest."""

from __future__ import annotations

from starlette.requests import Request

from openclaw_cli.gateway.ui import sessions as s


def _request(*, scheme: str = "http", cookie: str | None = None, origin: str | None = None) -> Request:
    headers = [(b"host", b"127.0.0.1:5000")]
    if cookie is not None:
        headers.append((b"cookie", f"{s.COOKIE}={cookie}".encode()))
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    scope = {
        "type": "http",
        "scheme": scheme,
        "method": "GET",
        "path": "/ui/",
        "headers": headers,
        "server": ("127.0.0.1", 5000),
        "query_string": b"",
    }
    return Request(scope)


def test_the_cookie_is_httponly_strict_and_secure_over_tls() -> None:
    plain = s.cookie_args(_request())
    assert plain["httponly"] is True and plain["samesite"] == "strict" and plain["secure"] is False
    assert s.cookie_args(_request(scheme="https"))["secure"] is True


def test_a_session_is_found_by_its_cookie_until_it_ends_or_idles_out() -> None:
    store = s.UiSessions(idle_seconds=60)
    session = store.create()
    assert store.of(_request(cookie=session.sid)) is session
    assert store.of(_request(cookie="not-a-session")) is None
    assert store.of(_request()) is None
    session.seen -= 61
    assert store.of(_request(cookie=session.sid)) is None  # idle too long: gone for good
    again = store.create()
    store.end(again.sid)
    assert store.of(_request(cookie=again.sid)) is None


def test_sessions_are_bounded_and_the_oldest_goes() -> None:
    store = s.UiSessions()
    first = store.create()
    first.seen -= 10
    for _ in range(s.MAX_SESSIONS):
        store.create()
    assert store.of(_request(cookie=first.sid)) is None
    assert len({store.create().sid for _ in range(3)}) == 3  # ids are random, never reused


def test_origin_rules() -> None:
    assert s.same_origin(_request(origin="http://127.0.0.1:5000"))
    assert s.same_origin(_request())  # a form post without Origin (old browsers): the CSRF token decides
    assert not s.same_origin(_request(origin="http://evil.test"))
    assert not s.same_origin(_request(origin="null"))
    assert not s.same_origin(_request(), required=True)
    store = s.UiSessions()
    sid = store.create().sid
    assert store.websocket_allowed(_request(cookie=sid, origin="http://127.0.0.1:5000"))
    assert not store.websocket_allowed(_request(cookie=sid, origin="http://127.0.0.1:5001"))
    assert not store.websocket_allowed(_request(cookie=sid))


def test_csrf_tokens_compare_whole() -> None:
    assert s.csrf_ok("abc", "abc")
    assert not s.csrf_ok("abc", "ab") and not s.csrf_ok("abc", None) and not s.csrf_ok("abc", "")
