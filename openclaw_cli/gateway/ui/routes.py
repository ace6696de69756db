"""The Control UI's routes under /ui/ (gateway/server.py mounts them): sign-in and out, who the UI acts as,
and the guards every page and every write goes through.

A page without a live session is answered 401 (with a link to the sign-in form), never the page; a POST
without the session's CSRF token, or from another Origin, is answered 403 and changes nothing.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from openclaw_cli.core.errors import OpenclawError
from openclaw_cli.gateway.auth import authenticate
from openclaw_cli.gateway.ui import admin_pages, memory_pages
from openclaw_cli.gateway.ui.render import HERE, Ui, environment, redirect
from openclaw_cli.gateway.ui.sessions import (
    COOKIE,
    LOGIN_COOKIE,
    UiSession,
    UiSessions,
    cookie_args,
    csrf_ok,
    same_origin,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from starlette.requests import Request

    from openclaw_cli.gateway.app import GatewayApp

Handler = Callable[[Ui, "Request", UiSession], Awaitable[Response]]
MAX_FORM_BYTES = 1_000_000


def build_ui(gateway: GatewayApp, env: Mapping[str, str]) -> Ui:
    return Ui(gateway, UiSessions(), dict(env), environment())


def ui_routes(ui: Ui) -> list[BaseRoute]:
    def guarded(handler: Handler, *, write: bool = False) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            session = ui.sessions.of(request)
            if session is None:
                return ui.page(request, "denied.html", {}, status=401)
            if write:
                form = await _form(request)
                if not same_origin(request) or not csrf_ok(session.csrf, form.get("csrf")):
                    return ui.page(request, "denied.html", {"forged": True}, status=403)
                request.state.form = form
            try:
                return await handler(ui, request, session)
            except OpenclawError as exc:  # a domain error: said on a page, with what to do
                context = {"session": session, "error": exc.message, "hint": exc.hint}
                return ui.page(request, "error.html", context, status=_status(exc))

        return endpoint

    async def login_form(request: Request) -> Response:
        value = secrets.token_urlsafe(24)
        response = ui.page(request, "login.html", {"login_csrf": value})
        response.set_cookie(LOGIN_COOKIE, value, max_age=600, **cookie_args(request))  # type: ignore[arg-type]
        return response

    async def login(request: Request) -> Response:
        form = await _form(request)
        expected = request.cookies.get(LOGIN_COOKIE)
        if not same_origin(request) or not expected or not csrf_ok(expected, form.get("csrf")):
            return ui.page(request, "denied.html", {"forged": True}, status=403)
        gw = ui.gateway
        client = request.client.host if request.client else "unknown"
        refusal = authenticate(gw.core.options.token, form.get("token") or None, client, gw.failures)
        if refusal is not None:
            context = {"login_csrf": expected, "error": refusal.message.split(":")[0]}
            response = ui.page(request, "login.html", context, status=refusal.status)
            if refusal.retry_after:
                response.headers["Retry-After"] = str(refusal.retry_after)
            return response
        session = ui.sessions.create()
        response = redirect("/ui/memories")
        response.set_cookie(COOKIE, session.sid, **cookie_args(request))  # type: ignore[arg-type]
        response.delete_cookie(LOGIN_COOKIE, path="/")
        return response

    async def logout(ui: Ui, request: Request, session: UiSession) -> Response:
        ui.sessions.end(session.sid)
        response = redirect("/ui/login")
        response.delete_cookie(COOKIE, path="/")
        return response

    async def act_as(ui: Ui, request: Request, session: UiSession) -> Response:
        from openclaw_cli.identity import claims
        from openclaw_cli.identity import persons as identity

        person = str(request.state.form.get("person", "")).strip()
        owner = identity.owner_id(ui.gateway.core.settings)
        if not person or person == owner:
            session.acting_as = None
        else:
            session.acting_as = claims.claimed_person(person, ui.gateway.core.settings, "the person")
        return redirect("/ui/memories")

    async def home(request: Request) -> Response:
        target = "/ui/memories" if ui.sessions.of(request) else "/ui/login"
        return redirect(target)

    pages: list[tuple[str, Handler, bool]] = [
        ("/logout", logout, True),
        ("/act", act_as, True),
        *memory_pages.PAGES,
        *admin_pages.PAGES,
    ]
    routes: list[BaseRoute] = [
        Route("/", home, methods=["GET"]),
        Route("/login", login_form, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Mount("/static", app=StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    for path, handler, write in pages:
        routes.append(Route(path, guarded(handler, write=write), methods=["POST" if write else "GET"]))
    return [Mount("/ui", routes=routes)]


async def _form(request: Request) -> dict[str, str]:
    """The posted form's text fields (a form larger than MAX_FORM_BYTES is refused by its parser)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_FORM_BYTES:
        return {}
    form = await request.form(max_files=0, max_fields=50)
    return {key: value for key, value in form.items() if isinstance(value, str)}


def _status(exc: OpenclawError) -> int:
    from openclaw_cli.core.errors import Conflict, InvalidInput, NotFound, UsageError
    from openclaw_cli.gateway.rpc import protocol as p

    if isinstance(exc, NotFound) or getattr(exc, "code", None) == p.NOT_FOUND:
        return 404
    if isinstance(exc, InvalidInput | UsageError) or getattr(exc, "code", None) == p.INVALID_PARAMS:
        return 400
    if isinstance(exc, Conflict):
        return 409
    return 503
