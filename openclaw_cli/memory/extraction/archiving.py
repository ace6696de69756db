"""A session's facts extracted before a sweep archives it (seed 000 §2.3), as the agent's own reset does.

A sweep archives sessions nobody has written to for a while; what was said there must reach long-term
memory first. With a model configured, the sweep extracts each session before archiving it. Without one it
extracts nothing (the explicit statements were saved when they were said) and keeps the session on a list of
sessions owed an extraction, `extract-pending.json` beside sessions.json, so that the first sweep with a
model extracts them: running the patterns alone now would move the session's checkpoint past what the model
should read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import OpenclawError
from openclaw_cli.core.fsutil import atomic_write_json

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.core.paths import Home
    from openclaw_cli.memory.extraction.run import ExtractionService
    from openclaw_cli.memory.service import MemoryService
    from openclaw_cli.sessions.store import SessionStore

PENDING_FILENAME = "extract-pending.json"


@dataclass
class ArchiveExtraction:
    """What the sweep's extractions did: per session, the memories written, or why not now."""

    extracted: dict[str, int] = field(default_factory=dict)  # session id -> memories added or merged
    pending: dict[str, str] = field(default_factory=dict)  # session id -> why it waits

    def to_dict(self) -> dict[str, Any]:
        return {"extracted": self.extracted, "pending": self.pending}


class ArchiveExtractor:
    """One sweep's extraction of the sessions it archives (and of those still owed one)."""

    def __init__(self, home: Home, agent_id: str, settings: Settings, sessions: SessionStore) -> None:
        self.home = home
        self.agent_id = agent_id
        self.settings = settings
        self.sessions = sessions
        self.done = ArchiveExtraction()
        self._memory: MemoryService | None = None
        self._service: ExtractionService | None = None
        self._path = sessions.root / PENDING_FILENAME

    @property
    def can_extract(self) -> bool:
        return bool(
            self.settings.memory.extraction.enabled
            and (self.settings.llm.extract_model or self.settings.llm.model)
        )

    def before_archive(self, session_id: str) -> None:
        """Extract `session_id` now, or note it as owed an extraction; never raises (the sweep goes on)."""
        if not self.settings.memory.extraction.enabled:
            return
        if not self.can_extract:
            self._owe(session_id, "no model is configured (llm.model)")
            return
        self._extract(session_id)

    def catch_up(self) -> None:
        """Extract the sessions archived while no model was configured, now that one is."""
        if not self.can_extract:
            return
        for session_id in list(self._owed()):
            self._extract(session_id)

    def close(self) -> None:
        if self._service is not None:
            self._service.close(wait=False)
        if self._memory is not None:
            self._memory.close()

    def _extract(self, session_id: str) -> None:
        try:
            report = self._extraction().flush(session_id)
        except OpenclawError as exc:
            self._owe(session_id, exc.message)
            return
        if report.model_error:  # the patterns ran; the model's share is owed
            self._owe(session_id, report.model_error)
            return
        self.done.extracted[session_id] = sum(1 for o in report.outcomes if o.action in ("added", "merged"))
        self._settle(session_id)

    def _extraction(self) -> ExtractionService:
        if self._service is None:
            from openclaw_cli.identity.persons import owner_id
            from openclaw_cli.memory.extraction.run import ExtractionService
            from openclaw_cli.memory.service import MemoryService

            self._memory = MemoryService(
                self.home, self.agent_id, self.settings.memory, fast_start=True, owner=owner_id(self.settings)
            )
            self._service = ExtractionService(
                self.home, self.agent_id, self.settings, self._memory, self.sessions
            )
        return self._service

    def _owed(self) -> dict[str, str]:
        try:
            value = json.loads(self._path.read_bytes())
        except (OSError, ValueError):
            return {}
        owed = value.get("sessions") if isinstance(value, dict) else None
        return {str(k): str(v) for k, v in owed.items()} if isinstance(owed, dict) else {}

    def _owe(self, session_id: str, reason: str) -> None:
        owed = self._owed()
        owed[session_id] = reason
        atomic_write_json(self._path, {"sessions": owed})
        self.done.pending[session_id] = reason

    def _settle(self, session_id: str) -> None:
        owed = self._owed()
        if owed.pop(session_id, None) is not None:
            atomic_write_json(self._path, {"sessions": owed})
