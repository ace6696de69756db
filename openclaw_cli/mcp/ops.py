"""What each MCP tool and resource does, for the one person the server acts for (issue 51).

Through the home's running gateway when there is one (its warm models, its single writer: remote.py), else
in this process (local.py); both answer with the gateway's payloads, shaped here once (views.py). Arguments
are checked here, before either path, so that a bad one gets the same one-line error with a gateway
running or not, and an id that is not this person's reads exactly as an id that does not exist.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import NotFound, OpenclawError
from openclaw_cli.mcp import views
from openclaw_cli.memory.search.sources import SOURCES as SOURCES  # one list; server.py reads it here

if TYPE_CHECKING:
    from openclaw_cli.mcp.context import McpContext
    from openclaw_cli.mcp.local import LocalMemory
    from openclaw_cli.mcp.remote import GatewayLink
    from openclaw_cli.memory.service import MemoryService

MAX_K = 50  # results per call: what a model can read; the search itself allows more


class Refused(OpenclawError):
    """What this server's person may not read (the owner's workspace files, for anyone else)."""


class McpOps:
    def __init__(self, ctx: McpContext, link: GatewayLink | None, local: LocalMemory) -> None:
        self.ctx = ctx
        self.link = link
        self.local = local

    # ------------------------------------------------------------------ paths

    def _through(self, method: str, params: dict[str, Any], here: Callable[[], Any]) -> Any:
        """The gateway's answer to `method` acting for the person, else `here()` in this process."""
        if self.link is not None:
            sent = {**params, "agentId": self.ctx.agent_id, **self.ctx.gateway_identity()}
            payload = self.link.call(method, sent)
            if payload is not None:
                return payload
        return here()

    def _not_found(self, record_id: str) -> NotFound:
        return NotFound(
            f"no memory with id {record_id!r} for {self.ctx.person}",
            hint="use an id that memory_search returned",
        )

    # ------------------------------------------------------------------ tools

    def memory_search(
        self, query: str, k: int, categories: Sequence[str], sources: Sequence[str]
    ) -> dict[str, Any]:
        """Memories and/or the person's transcript turns in one ranking (memory/search/sources.py), as
        `memory search --source` and the agent's tool merge them."""
        from openclaw_cli.memory.search.sources import search_sources

        _check_query(query, k)
        kept = tuple(dict.fromkeys(categories))
        params = {"query": query, "k": k, "categories": list(kept)}
        merged = search_sources(
            tuple(dict.fromkeys(sources)) or ("memory",),
            k,
            lambda: self._through("memory.search", params, lambda: self.local.memory_search(query, k, kept)),
            lambda: self._session_payload(query, k),
            query=query,
        )
        results = [
            views.memory_hit(hit) if hit["source"] == "memory" else views.session_hit(hit)
            for hit in merged["results"]
        ]
        return {"query": query, "person": self.ctx.person, "results": results, "warnings": merged["warnings"]}

    def session_search(self, query: str, k: int) -> dict[str, Any]:
        _check_query(query, k)
        found = self._session_payload(query, k)
        return {
            "query": query,
            "person": self.ctx.person,
            "results": [views.session_hit(hit) for hit in found["results"]],
            "warnings": found.get("warnings", []),
        }

    def _session_payload(self, query: str, k: int) -> dict[str, Any]:
        params = {"query": query, "k": k}
        result: dict[str, Any] = self._through(
            "session.search", params, lambda: self.local.session_search(query, k)
        )
        return result

    def memory_add(self, text: str, category: str, attribute: str | None) -> dict[str, Any]:
        from openclaw_cli.memory.store.records import validate_category

        validate_category(category)
        params: dict[str, Any] = {"text": text, "category": category, "scope": "user", "attribute": attribute}
        payload = self._through(
            "memory.add", params, lambda: self.local.memory_add(text, category, attribute)
        )
        return views.added(payload)

    def memory_forget(self, record_id: str) -> dict[str, Any]:
        from openclaw_cli.memory.store.records import validate_record_id

        validate_record_id(record_id)
        try:
            payload = self._through(
                "memory.delete", {"id": record_id}, lambda: self.local.memory_delete(record_id)
            )
        except NotFound as exc:  # unknown, or another person's: the same words, so nothing is revealed
            raise self._not_found(record_id) from exc
        return {"deleted": payload["deleted"]}

    def memory_history(self, record_id: str) -> dict[str, Any]:
        from openclaw_cli.memory.store.records import validate_record_id

        validate_record_id(record_id)

        def read(memory: MemoryService) -> list[dict[str, Any]]:
            try:
                entries = memory.history(record_id)
            except NotFound as exc:
                raise self._not_found(record_id) from exc
            if not entries or not self._visible(entries[-1]):
                raise self._not_found(record_id)
            return entries

        entries = self.local.read(read)
        return {"id": record_id, "history": [views.history_entry(entry) for entry in entries]}

    def _visible(self, entry: dict[str, Any]) -> bool:
        """Whether the memory, as its latest change left it, is this person's own or the agent's."""
        value = entry.get("new") or entry.get("old") or {}
        if value.get("scope") == "agent":
            return not _private_note(value)
        return bool(value.get("userId") == self.ctx.person)

    def memory_note(self, text: str, durable: bool) -> dict[str, Any]:
        """The owner's workspace Markdown (today's log, or MEMORY.md when `durable`); the workspace is
        the owner's alone, so anyone else's note goes to their own memory instead, and the answer says so."""
        from openclaw_cli.agent.tools.own_notes import NOT_THE_OWNERS, workspace_note

        if not self.ctx.owner:
            return {"written": "memory", **self.memory_add(text, "note", None), "note": NOT_THE_OWNERS}
        return workspace_note(
            self.ctx.home, self.ctx.agent_id, self.ctx.agent_settings.memory, text, durable=durable
        )

    # ------------------------------------------------------------------ resources

    def workspace_file(self, which: str) -> str:
        """MEMORY.md or today's log, read-only: the owner's alone; '' while the file does not exist."""
        from openclaw_cli.memory.workspace.files import (
            MAX_SESSION_FILE_BYTES,
            MEMORY_FILE,
            UnsafeFile,
            daily_log_name,
            read_bounded,
            workspace_dir,
        )

        name = MEMORY_FILE if which == "memory" else daily_log_name(datetime.now().astimezone().date())
        if not self.ctx.owner:
            raise Refused(
                f"{name} is the owner's; this server acts for {self.ctx.person}",
                hint="start `openclaw mcp` without --user to act for the owner",
            )
        root = workspace_dir(self.ctx.home, self.ctx.agent_id, self.ctx.agent_settings.memory)
        try:
            data, _size = read_bounded(root, root / name, MAX_SESSION_FILE_BYTES)
        except FileNotFoundError:
            return ""
        except UnsafeFile as exc:
            raise Refused(str(exc)) from exc
        return data.decode("utf-8", errors="replace")

    def stats(self) -> dict[str, Any]:
        """How many memories the person has, by category, and how many of the agent's they share."""

        def count(memory: MemoryService) -> dict[str, Any]:
            own = memory.list_records(user_id=self.ctx.person, scope="user")
            agent = [r for r in memory.list_records(scope="agent") if not r.private_note]
            by_category: dict[str, int] = {}
            for record in own:
                by_category[record.category] = by_category.get(record.category, 0) + 1
            dates = sorted(record.created_at for record in own)
            return {
                "person": self.ctx.person,
                "owner": self.ctx.owner,
                "agent": self.ctx.agent_id,
                "memories": len(own),
                "byCategory": dict(sorted(by_category.items())),
                "oldest": dates[0].isoformat() if dates else None,
                "newest": dates[-1].isoformat() if dates else None,
                "agentMemories": len(agent),
            }

        result: dict[str, Any] = self.local.read(count)
        result["gateway"] = self.link is not None and self.link.running()
        return result


def _check_query(query: str, k: int) -> None:
    """The search's own checks (empty, too long, NUL), made before either path is taken."""
    from openclaw_cli.memory.search.result import SearchRequest, validate_request

    validate_request(SearchRequest(query=query, k=k))


def _private_note(value: dict[str, Any]) -> bool:
    """MemoryRecord.private_note, on a history row's value: a chunk of the owner's workspace notes."""
    from openclaw_cli.memory.store.records import SHARED_NOTES_FILE

    source = value.get("source")
    if value.get("category") != "note" or not isinstance(source, dict):
        return False
    return source.get("path") not in (None, SHARED_NOTES_FILE)
