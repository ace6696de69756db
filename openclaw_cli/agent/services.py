"""The long-lived objects of one agent in a process: its session store, memory and extraction services."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from openclaw_cli.agent.after_turn import AfterTurn
from openclaw_cli.agent.token_memo import TokenMemo
from openclaw_cli.sessions.lifecycle import ResetPolicy, SessionManager
from openclaw_cli.sessions.store import SessionStore
from openclaw_cli.sessions.writer import Durability
from openclaw_cli.skills.service import AgentSkills

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.core.paths import Home
    from openclaw_cli.memory.extraction.run import ExtractionService
    from openclaw_cli.memory.query_expansion import ModelExpander
    from openclaw_cli.memory.service import MemoryService
    from openclaw_cli.memory.transcripts.index import TranscriptIndex
    from openclaw_cli.plugins.host import PluginHost


class AgentServices:
    """Built on first use and kept for the process (the memory service keeps its vectors warm).

    The memory databases are used from the turn threads of every session of the agent; `memory_lock`
    makes those uses one at a time (a search takes milliseconds, a turn seconds).
    """

    def __init__(
        self, home: Home, agent_id: str, settings: Settings, env: Mapping[str, str] | None = None
    ) -> None:
        from openclaw_cli.identity.agent_config import for_agent
        from openclaw_cli.identity.auth_profiles import profile_signature, with_auth_profile

        self.home = home
        self.agent_id = agent_id
        # its own workspace and model, when it names them, and its auth profile's key (the file's state
        # is noted first: a change while it is read makes the runtime build these services again)
        self.auth_signature = profile_signature(home, agent_id)
        self.settings = with_auth_profile(for_agent(settings, agent_id), home, agent_id)
        self.sessions = SessionStore(home, agent_id, Durability.from_settings(self.settings.session))
        self.manager = SessionManager(self.sessions, ResetPolicy.from_settings(self.settings.session))
        self.memory_lock = threading.RLock()
        self.after_turn = AfterTurn()  # what a turn leaves for after its reply (its usage totals)
        self.token_memo = TokenMemo()  # token counts of the messages of recently read sessions
        # SKILL.md files, re-read only when they change; `env` (the process's, from the CLI or gateway
        # edge) decides skills' requires.env and PATH.
        self.skills = AgentSkills(home, self.agent_id, dict(env or {}))
        self.plugins: PluginHost | None = None  # the process's plugins (AgentRuntime sets them)
        self._memory: MemoryService | None = None
        self._extraction: ExtractionService | None = None
        self._transcripts: TranscriptIndex | None = None
        # Each append is indexed for `session search` on a background thread (memory/transcripts/index.py).
        self.sessions.listeners.append(lambda session_id: self.transcripts.session_changed(session_id))

    @property
    def memory(self) -> MemoryService:
        with self.memory_lock:
            if self._memory is None:
                from openclaw_cli.identity.persons import owner_id
                from openclaw_cli.memory.service import MemoryService

                owner = owner_id(self.settings)
                self._memory = MemoryService(
                    self.home, self.agent_id, self.settings.memory, warm=True, owner=owner
                )
            return self._memory

    @property
    def query_expander(self) -> ModelExpander | None:
        """The model that may expand a weak memory query of a turn (memory.queryExpansion), if any."""
        from openclaw_cli.memory.query_expansion import expander_for

        return expander_for(self.settings)

    @property
    def transcripts(self) -> TranscriptIndex:
        if self._transcripts is None:
            with self.memory_lock:
                if self._transcripts is None:
                    from openclaw_cli.memory.transcripts.index import TranscriptIndex

                    self._transcripts = TranscriptIndex(
                        self.home,
                        self.agent_id,
                        self.settings.memory,
                        lambda: self.memory.embedder(),
                        long_lived=True,
                    )
        return self._transcripts

    def search_transcripts(self, query: str, k: int, person: str | None) -> dict[str, Any]:
        """Past sessions' turns matching `query`, as `person` may see them (the `session_search` tool and
        chat's /search): their own sessions, every session for the owner, none without an identity."""
        from openclaw_cli.identity.persons import owner_id
        from openclaw_cli.memory.transcripts.filters import viewer_filter
        from openclaw_cli.memory.transcripts.search import TranscriptRequest

        if person is None:
            return {"results": [], "warnings": ["this conversation has no identity: no sessions to search"]}
        request = TranscriptRequest(query, k, viewer_filter(person, owner=owner_id(self.settings)))
        return self.transcripts.search(request).to_dict(request)

    @property
    def extraction(self) -> ExtractionService:
        with self.memory_lock:
            if self._extraction is None:
                from openclaw_cli.memory.extraction.run import ExtractionService

                self._extraction = ExtractionService(
                    self.home, self.agent_id, self.settings, self.memory, self.sessions
                )
            return self._extraction

    def settle_extraction(self) -> None:
        """Run the pending background extractions now and wait for them (before a purge, which must
        not meet one that read the person's messages); the service starts again when next used.
        What turns left for after their replies is finished first (it writes to their sessions)."""
        self.after_turn.settle()
        with self.memory_lock:
            extraction, self._extraction = self._extraction, None
        if extraction is not None:
            extraction.close(wait=True)

    def close(self) -> None:
        self.after_turn.close()
        # The transcript index first, and outside memory_lock: closing joins its thread, which may be
        # waiting for that lock to load the embedder (and must not load it again once memory is closed).
        transcripts, self._transcripts = self._transcripts, None
        if transcripts is not None:
            transcripts.close()
        with self.memory_lock:
            if self._extraction is not None:
                self._extraction.close(wait=True)
                self._extraction = None
            if self._memory is not None:
                self._memory.close()
                self._memory = None
        self.sessions.close()
