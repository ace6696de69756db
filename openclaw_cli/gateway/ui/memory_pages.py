"""The Memories pages: search (the `memory.search` method with `explain`, so the same engine and the same
explanation lines as `memory search --explain`), the listing with filters, one memory with its history,
edit (memory/edit.py, as `memory edit`) and delete (`memory.delete`), and the owner's workspace Markdown.

Acting as a person other than the owner narrows every read to that person's memories and every write to
the memories they may touch (agent/tools.may_touch, the rule the agent's own forget tool follows).
"""

from __future__ import annotations

import re
from datetime import date
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import InvalidInput, NotFound
from openclaw_cli.gateway.ui.render import redirect

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from openclaw_cli.gateway.ui.render import Ui
    from openclaw_cli.gateway.ui.sessions import UiSession
    from openclaw_cli.memory.service import MemoryService

PAGE_SIZE = 100
SEARCH_K = 50
MAX_QUERY = 2000
WORKSPACE_FILE = re.compile(r"^(MEMORY\.md|memory/\d{4}-\d{2}-\d{2}\.md)$")


def agent_of(ui: Ui) -> str:
    return ui.gateway.core.agent_id(None)


async def with_memory(ui: Ui, work: Any) -> Any:
    return await ui.gateway.methods.with_memory(
        agent_of(ui), work
    )  # the gateway's warm service and its lock


def _day(value: str | None, what: str) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError as exc:
        raise InvalidInput(f"{what} must be a date like 2026-03-24") from exc


def _in_range(created: str, since: date | None, until: date | None) -> bool:
    day = date.fromisoformat(created[:10])
    return (since is None or day >= since) and (until is None or day <= until)


def persons_of(service: MemoryService) -> list[dict[str, Any]]:
    from openclaw_cli.memory.store.persons import merged, persons

    return [p.to_dict() for p in merged([persons(s.storage) for s in service.existing_stores()])]


async def memories(ui: Ui, request: Request, session: UiSession) -> Response:
    from openclaw_cli.memory.search.explain.lines import result_lines, words_line
    from openclaw_cli.memory.store.records import CATEGORIES

    args = request.query_params
    query = (args.get("q") or "").strip()[:MAX_QUERY]
    person = session.acting_as or (args.get("person") or None)
    category = args.get("category") or None
    if category is not None and category not in CATEGORIES:
        raise InvalidInput(f"unknown category {category!r}", hint=f"use one of {', '.join(CATEGORIES)}")
    since, until = _day(args.get("since"), "since"), _day(args.get("until"), "until")
    page = max(0, int(args.get("page", "0"))) if args.get("page", "0").isdigit() else 0
    context: dict[str, Any] = {
        "session": session,
        "query": query,
        "person": person or "",
        "category": category or "",
        "since": args.get("since", ""),
        "until": args.get("until", ""),
        "categories": CATEGORIES,
        "page": page,
    }
    if query:
        params: dict[str, Any] = {"query": query, "k": SEARCH_K, "explain": True}
        if person:
            params["filterUserId"] = person
        if category:
            params["categories"] = [category]
        found = await ui.gateway.methods.call("memory.search", params)
        hits = [h for h in found["results"] if _in_range(h["createdAt"], since, until)]
        for hit in hits:
            hit["explainLines"] = [line.strip() for line in result_lines(hit["explain"])]
        context.update(hits=hits, words=words_line(found["analysis"]), warnings=found["warnings"])
    else:

        def listing(service: MemoryService) -> tuple[list[Any], bool]:
            dated = since is not None or until is not None
            rows = service.list_records(
                user_id=person,
                category=category,
                limit=None if dated else PAGE_SIZE + 1,
                offset=0 if dated else page * PAGE_SIZE,
            )
            if dated:
                rows = [r for r in rows if _in_range(r.created_at.isoformat(), since, until)]
                rows = rows[page * PAGE_SIZE : (page + 1) * PAGE_SIZE + 1]
            return [r.public_dict() for r in rows[:PAGE_SIZE]], len(rows) > PAGE_SIZE

        rows, more = await with_memory(ui, listing)
        context.update(rows=rows, more=more)
    context["persons"] = await with_memory(ui, persons_of)
    return ui.page(request, "memories.html", context)


def _checked(service: MemoryService, record_id: str, session: UiSession) -> Any:
    from openclaw_cli.agent.tools.builtin import may_touch

    record = service.get(record_id)
    if session.acting_as is not None and not may_touch(service, record_id, session.acting_as):
        raise NotFound(f"no memory with id {record_id!r} of {session.acting_as}")
    return record


async def memory(ui: Ui, request: Request, session: UiSession) -> Response:
    from openclaw_cli.memory.search.result import note_location
    from openclaw_cli.memory.store.records import CATEGORIES

    record_id = request.path_params["record_id"]

    def read(service: MemoryService) -> tuple[Any, list[dict[str, Any]]]:
        record = _checked(service, record_id, session)
        return record, service.history(record_id)

    record, history = await with_memory(ui, read)
    location = note_location(record.source)
    context = {
        "session": session,
        "record": record.public_dict(),
        "history": history,
        "categories": CATEGORIES,
        "location": location,
        "note": record.workspace_note,
    }
    return ui.page(request, "memory.html", context)


async def edit(ui: Ui, request: Request, session: UiSession) -> Response:
    from openclaw_cli.identity.agent_config import for_agent
    from openclaw_cli.memory.edit import MemoryEdit, edit_memory

    record_id = request.path_params["record_id"]
    form = request.state.form
    limit = for_agent(ui.gateway.core.settings, agent_of(ui)).memory.max_text_chars
    change = MemoryEdit(
        record_id,
        form.get("text"),
        form.get("category") or None,
        form.get("attribute", ""),
        form.get("reason") or None,
    )

    def write(service: MemoryService) -> Any:
        _checked(service, record_id, session)
        return edit_memory(service, change, limit)

    await with_memory(ui, write)
    ui.gateway.core.wake_words()  # as after memory.add / memory.delete: the word tables are warmed again
    return redirect(f"/ui/memories/{record_id}")


async def delete(ui: Ui, request: Request, session: UiSession) -> Response:
    params: dict[str, Any] = {"id": request.path_params["record_id"]}
    if session.acting_as is not None:
        params["userId"] = session.acting_as
    await ui.gateway.methods.call("memory.delete", params)
    return redirect("/ui/memories")


async def workspace(ui: Ui, request: Request, session: UiSession) -> Response:
    """The owner's MEMORY.md and daily logs, read-only; `?file=` shows one, each line with its anchor."""
    if session.acting_as is not None:
        raise NotFound("the workspace notes are the owner's", hint="act as the owner to read them")
    root = ui.gateway.core.home.workspace_dir(agent_of(ui))
    files = ["MEMORY.md"] if (root / "MEMORY.md").is_file() else []
    if (root / "memory").is_dir():
        files += sorted((f"memory/{p.name}" for p in (root / "memory").glob("*.md")), reverse=True)
    files = [f for f in files if WORKSPACE_FILE.match(f)]
    name = request.query_params.get("file")
    lines: list[str] | None = None
    if name is not None:
        if not WORKSPACE_FILE.match(name) or name not in files:  # never a path outside the workspace
            raise NotFound(f"no workspace file {name!r}", hint="pick one from the list")
        from openclaw_cli.security import workspace_file  # plain or sealed, by the file's header

        lines = workspace_file.read(root / name).decode("utf-8", errors="replace").splitlines()
    context = {"session": session, "files": files, "file": name, "lines": lines}
    return ui.page(request, "workspace.html", context)


PAGES: list[tuple[str, Any, bool]] = [
    ("/memories", memories, False),
    ("/memories/{record_id}", memory, False),
    ("/memories/{record_id}/edit", edit, True),
    ("/memories/{record_id}/delete", delete, True),
    ("/workspace", workspace, False),
]
