"""The MCP server's work in its own process, when no gateway of the home runs: the agent's services
(agent/services.py: the warm memory service, its lock, the transcript index), loaded once at start.

Each answer has the shape of the gateway method it stands in for (gateway/rpc/methods.py), so ops.py shapes
one kind of payload whichever path answered, and a gateway running or not gives the same results.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import InvalidInput, NotFound

if TYPE_CHECKING:
    from openclaw_cli.agent.services import AgentServices
    from openclaw_cli.mcp.context import McpContext
    from openclaw_cli.memory.service import MemoryService

log = logging.getLogger("openclaw.mcp")


class LocalMemory:
    """The agent's services in this process; every use of the memory holds its lock (tools run in
    worker threads, and an HTTP server serves several clients at once)."""

    def __init__(self, ctx: McpContext) -> None:
        from openclaw_cli.agent.services import AgentServices

        self.ctx = ctx
        self.services: AgentServices = AgentServices(ctx.home, ctx.agent_id, ctx.settings)
        self._warm: threading.Thread | None = None

    # ------------------------------------------------------------------ start and stop

    def start_warming(self) -> None:
        """Load the embedder, open the stores, read their vectors and catch the transcript index up, in
        the background: the server answers `initialize` and `tools/list` meanwhile, and the first
        memory_search waits (on the memory lock) only for what is still loading, never for a load that
        could have happened at start."""
        self._warm = threading.Thread(target=self.warm, name="mcp-warm", daemon=True)
        self._warm.start()

    def warm(self) -> None:
        from openclaw_cli.agent.warm import WARM_QUERY

        try:
            with self.services.memory_lock:
                self.services.memory.embedder()
                self.memory_search(WARM_QUERY, 5, ())
            self.services.search_transcripts(WARM_QUERY, 5, self.ctx.person)
        except Exception as exc:  # noqa: BLE001 - the first call meets the same error and says it
            log.warning("warming the memory failed: %s: %s", exc.__class__.__name__, exc)

    def wait_warm(self) -> None:
        if self._warm is not None:
            self._warm.join()

    def close(self) -> None:
        self.services.close()

    # ------------------------------------------------------------------ the gateway's methods, here

    def memory_search(self, query: str, k: int, categories: tuple[str, ...]) -> dict[str, Any]:
        """gateway `memory.search` acting for the person (its `recall` path)."""
        from openclaw_cli.memory.inject import recall

        memory = self.services.memory
        lock = self.services.memory_lock
        hits, warnings = recall(memory, query, k, self.ctx.person, None, None, lock, categories=categories)
        return {"results": [hit.to_dict(False) for hit in hits], "warnings": warnings}

    def session_search(self, query: str, k: int) -> dict[str, Any]:
        """gateway `session.search` acting for the person: their own sessions (every one for the owner)."""
        return self.services.search_transcripts(query, k, self.ctx.person)

    def memory_add(self, text: str, category: str, attribute: str | None) -> dict[str, Any]:
        """gateway `memory.add` for the person: the write path every writer takes."""
        from openclaw_cli.memory.writing.candidate import Candidate
        from openclaw_cli.memory.writing.write_path import write_memories

        candidate = Candidate(text, category, user_id=self.ctx.person, attribute=attribute)
        with self.services.memory_lock:
            memory = self.services.memory
            [outcome] = write_memories(memory, [candidate])
            if outcome.action == "skipped":
                raise outcome.error or InvalidInput(outcome.reason)
            record = memory.get(outcome.record_id) if outcome.record_id else None
        return outcome.added_dict(record)

    def memory_delete(self, record_id: str) -> dict[str, Any]:
        """gateway `memory.delete` for the person: their own memory or the agent's, never another's."""
        from openclaw_cli.agent.tools.builtin import may_touch

        with self.services.memory_lock:
            memory = self.services.memory
            if not may_touch(memory, record_id, self.ctx.person):
                raise NotFound(f"no memory with id {record_id!r} of {self.ctx.person}")
            record = memory.delete(record_id)
        return {"deleted": record.id}

    # ------------------------------------------------------------------ reads no gateway method serves

    def read(self, work: Any) -> Any:
        """`work(memory service)` under the lock: history and stats read the stores directly, with a
        gateway running or not, as `openclaw memory history` does (SQLite lets readers beside a writer);
        neither needs a model."""
        with self.services.memory_lock:
            memory: MemoryService = self.services.memory
            return work(memory)
