"""The People, Sessions, Channels, Chat and Health pages: views of the gateway's own methods and services.

People: counts per person (memory/store/persons.py), reassign (memory/writing/reassign.py, as `memory
reassign --yes`) and purge (`memory.purge`, gateway/rpc/purge.py) behind a typed confirmation that lists what
goes. Sessions: `sessions.list`, `sessions.get`, `session.search`. Channels: `channels.status` and the
pairing store the `pairing` commands use. Health: `status`, `cron.list`, the backups `memory backup --list`
lists, and the findings of `doctor` (read-only: never --fix from a page).
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.gateway.ui.memory_pages import agent_of, persons_of, with_memory
from openclaw_cli.gateway.ui.render import redirect

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from openclaw_cli.gateway.ui.render import Ui
    from openclaw_cli.gateway.ui.sessions import UiSession
    from openclaw_cli.memory.service import MemoryService

PREVIEW = 20


def _owner_only(session: UiSession, what: str) -> None:
    if session.acting_as is not None:
        raise InvalidInput(f"{what} is the owner's to do", hint="act as the owner (the menu at the top)")


async def people(ui: Ui, request: Request, session: UiSession) -> Response:
    rows = await with_memory(ui, persons_of)
    if session.acting_as is not None:
        rows = [r for r in rows if r["userId"] == session.acting_as]
    return ui.page(request, "people.html", {"session": session, "people": rows})


async def reassign(ui: Ui, request: Request, session: UiSession) -> Response:
    from openclaw_cli.memory.writing.reassign import ReassignRequest
    from openclaw_cli.memory.writing.reassign import reassign as move

    _owner_only(session, "moving memories")
    form = request.state.form
    asked = ReassignRequest(form.get("from", "").strip(), form.get("to", "").strip())
    home, agent = ui.gateway.core.home, agent_of(ui)

    def work(service: MemoryService) -> Any:
        return move(
            home,
            agent,
            service.settings.share_user_memory,
            asked,
            lambda path: service.store(path, create=False),
            None,
            agents=service.stored_agents(),
        )

    report = await with_memory(ui, work)
    ui.gateway.core.wake_words()
    context = {"session": session, "people": await with_memory(ui, persons_of), "moved": report.to_dict()}
    return ui.page(request, "people.html", context)


async def purge_confirm(ui: Ui, request: Request, session: UiSession) -> Response:
    """What a purge of the person removes, and the field where the owner types their id to confirm."""
    _owner_only(session, "a purge")
    person = request.query_params.get("person", "")

    def preview(service: MemoryService) -> tuple[int, list[dict[str, Any]]]:
        rows = service.list_records(user_id=person)
        return len(rows), [r.public_dict() for r in rows[:PREVIEW]]

    count, sample = await with_memory(ui, preview)
    from openclaw_cli.sessions.index import list_sessions

    sessions = await asyncio.to_thread(list_sessions, ui.gateway.core.home.sessions_dir(agent_of(ui)))
    context = {
        "session": session,
        "person": person,
        "count": count,
        "sample": sample,
        "sessions": len(sessions),
    }
    return ui.page(request, "purge.html", context)


async def purge(ui: Ui, request: Request, session: UiSession) -> Response:
    _owner_only(session, "a purge")
    form = request.state.form
    person = form.get("person", "")
    if not person or form.get("confirm", "") != person:
        raise InvalidInput("the confirmation does not match", hint=f"type {person!r} exactly to purge")
    params = {"userId": person, "allAgents": True, "sessions": form.get("sessions") == "on"}
    report = await ui.gateway.methods.call("memory.purge", params)
    context = {"session": session, "people": await with_memory(ui, persons_of), "purged": report}
    return ui.page(request, "people.html", context)


async def sessions(ui: Ui, request: Request, session: UiSession) -> Response:
    args = request.query_params
    status = args.get("status") or None
    query = (args.get("q") or "").strip()[:2000]
    listing = await ui.gateway.methods.call("sessions.list", {"status": status} if status else {})
    context: dict[str, Any] = {
        "session": session,
        "sessions": listing["sessions"],
        "status": status or "",
        "query": query,
    }
    if query:
        params: dict[str, Any] = {"query": query, "k": 30}
        if session.acting_as is not None:
            params["userId"] = session.acting_as
        context["found"] = await ui.gateway.methods.call("session.search", params)
    return ui.page(request, "sessions.html", context)


async def transcript(ui: Ui, request: Request, session: UiSession) -> Response:
    target = request.query_params.get("id", "")
    if not target:
        raise InvalidInput("which session?", hint="pick one from the list")
    _owner_only(session, "reading whole transcripts")
    view = await ui.gateway.methods.call("sessions.get", {"sessionId": target})
    return ui.page(request, "transcript.html", {"session": session, **view})


async def channels(ui: Ui, request: Request, session: UiSession) -> Response:
    from openclaw_cli.channels.report import pairing_rows

    status = await ui.gateway.methods.call("channels.status", {})
    requests = await asyncio.to_thread(pairing_rows, ui.gateway.core.home.root)
    for row in requests:
        row["until"] = datetime.fromtimestamp(float(row["expiresAt"])).astimezone().strftime("%Y-%m-%d %H:%M")
    context = {"session": session, "channels": status["channels"], "requests": requests}
    return ui.page(request, "channels.html", context)


async def pairing(ui: Ui, request: Request, session: UiSession) -> Response:
    from openclaw_cli.channels.report import access_store

    _owner_only(session, "pairing")
    form = request.state.form
    store = access_store(ui.gateway.core.home.root, form.get("channel", ""))
    decide = store.approve if form.get("decision") == "approve" else store.deny
    await asyncio.to_thread(decide, form.get("code", ""))
    return redirect("/ui/channels")


async def chat(ui: Ui, request: Request, session: UiSession) -> Response:
    _owner_only(session, "the WebChat")  # the owner's main session
    return ui.page(request, "chat.html", {"session": session, "sessionKey": f"agent:{agent_of(ui)}:main"})


async def health(ui: Ui, request: Request, session: UiSession) -> Response:
    from openclaw_cli.doctor.checks import run_doctor
    from openclaw_cli.memory.upkeep.recovery import list_all

    gw = ui.gateway
    cron = await gw.methods.call("cron.list", {}) if "cron.list" in gw.methods.names else None
    backups = await with_memory(ui, lambda service: list_all(service, datetime.now().astimezone()))
    report = await asyncio.to_thread(run_doctor, gw.core.home, agent_of(ui), ui.env, False)
    context = {
        "session": session,
        "status": gw.core.status(),
        "cron": cron,
        "backups": backups,
        "findings": [f.to_dict() for f in report.findings],
    }
    return ui.page(request, "health.html", context)


PAGES: list[tuple[str, Any, bool]] = [
    ("/people", people, False),
    ("/people/reassign", reassign, True),
    ("/people/purge", purge_confirm, False),
    ("/people/purge", purge, True),
    ("/sessions", sessions, False),
    ("/sessions/view", transcript, False),
    ("/channels", channels, False),
    ("/channels/pairing", pairing, True),
    ("/chat", chat, False),
    ("/health", health, False),
]
