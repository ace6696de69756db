"""Pages of the Control UI: Jinja2 templates with autoescape on (every piece of user text is escaped), and the
headers every UI response carries (a Content-Security-Policy that allows scripts from this origin's static
files only, so a stored `<script>` could not run even if it were not escaped; no framing; no referrer to other sites)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.responses import HTMLResponse, RedirectResponse, Response

if TYPE_CHECKING:
    from jinja2 import Environment
    from starlette.requests import Request

    from openclaw_cli.gateway.app import GatewayApp
    from openclaw_cli.gateway.ui.sessions import UiSession, UiSessions

HERE = Path(__file__).resolve().parent
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",  # no-referrer would make the browser send `Origin: null` on our own forms
    "Cache-Control": "no-store",
}
NAV = (
    ("memories", "Memories"),
    ("people", "People"),
    ("sessions", "Sessions"),
    ("channels", "Channels"),
    ("chat", "Chat"),
    ("health", "Health"),
)


def environment() -> Environment:
    from jinja2 import Environment, FileSystemLoader

    return Environment(loader=FileSystemLoader(str(HERE / "templates")), autoescape=True)


@dataclass
class Ui:
    """What the UI's handlers share: the gateway, its sessions, the templates, the environment (doctor)."""

    gateway: GatewayApp
    sessions: UiSessions
    env: dict[str, str]
    templates: Environment

    def page(
        self, request: Request, template: str, context: dict[str, Any], *, status: int = 200
    ) -> Response:
        session: UiSession | None = context.get("session")
        from openclaw_cli.identity import persons as identity

        owner = identity.owner_id(self.gateway.core.settings)
        body = self.templates.get_template(template).render(
            nav=NAV,
            owner=owner,
            acting_as=(session.acting_as if session else None) or owner,
            csrf=session.csrf if session else context.get("login_csrf", ""),
            **context,
        )
        return secured(HTMLResponse(body, status_code=status))


def secured(response: Response) -> Response:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def redirect(url: str) -> Response:
    """After a POST: the page to show (303, so a reload does not post again)."""
    return secured(RedirectResponse(url, status_code=303))
