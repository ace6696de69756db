"""What the Control UI's browser tests and benchmarks share: the system's Chromium, a seeded store, the XSS
corpus, the pages screenshotted."""

from __future__ import annotations

import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from openclaw_cli.memory.agent_memory import NewMemory
from tests.memory_helpers import service_for

# Each would set window.__pwned (or open a dialog) if the page ran it.
XSS = (
    "<script>window.__pwned=1;alert(1)</script>",
    '<img src=x onerror="window.__pwned=2;alert(2)">',
    '"><svg onload="window.__pwned=3">',
    "</textarea><script>window.__pwned=4</script>",
    "' onmouseover='window.__pwned=5' x='",
    "{{ 7*7 }} {% raw %}",
    "javascript:window.__pwned=6",
)
SCREENS = (
    "/ui/memories",
    "/ui/memories?q=Alice",
    "/ui/people",
    "/ui/sessions",
    "/ui/channels",
    "/ui/chat",
    "/ui/health",
    "/ui/workspace?file=MEMORY.md",
)
MEMORIES = (
    ("alice", "profile", "Alice works as a nurse in Lyon", "job"),
    ("alice", "preference", "Alice prefers tea over coffee", None),
    ("bob", "event", "Bob goes sailing every weekend", None),
    ("bob", "preference", "Bob likes jazz", None),
    ("bob", "preference", "Bob prefers window seats", None),
    ("bob", "profile", "Bob's daughter is called Mia", "daughter"),
    ("default", "preference", "我喜欢喝乌龙茶", None),
    ("default", "profile", "The owner's cat is named Pixel", "cat"),
    ("<b>x</b>", "note", "a person whose id is markup", None),
)


def chromium_path() -> str:
    """Debian's Chromium (`.ci/run` installs it with apt-get): the only browser these tests drive."""
    found = shutil.which("chromium")
    if found is None:
        raise AssertionError("chromium is not installed: apt-get install -y chromium")
    return found


def seed_store(home: Path) -> None:
    """The memories above, the XSS corpus as mallory's, MEMORY.md, and an open Telegram pairing request."""
    from openclaw_cli.channels.report import access_store

    service = service_for(home)
    try:
        for user, category, text, attribute in MEMORIES:
            service.add(NewMemory(l0=text, category=category, user_id=user, attribute=attribute))
        for text in XSS:
            service.add(NewMemory(l0=text, category="note", user_id="mallory"))
    finally:
        service.close()
    workspace = home / "agents" / "main" / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "MEMORY.md").write_text(
        "# Memory\n- The owner prefers tabs over spaces\n- " + XSS[0] + "\n", encoding="utf-8"
    )
    access_store(home, "telegram").request("424242", XSS[1], 3600)


class Attacker:
    """Another origin's page whose form posts to the gateway on load (a cross-site request forgery)."""

    def __init__(self, target: str) -> None:
        page = (
            f'<html><body onload="document.forms[0].submit()"><form method="post" action="{target}">'
            '<input name="csrf" value="guess"></form></body></html>'
        ).encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        # localhost, not 127.0.0.1: another site for the browser, so SameSite=Strict keeps the cookie home
        self.url = f"http://localhost:{self.server.server_address[1]}/"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
