"""TurnContext: what the steps of one turn share (loop.py runs them, replies.py talks to the model)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from openclaw_cli.agent.services import AgentServices
    from openclaw_cli.agent.turn.requests import EventSink, TurnRequest, TurnResult
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.llm.usage import Usage
    from openclaw_cli.skills.service import SkillView


class Cancel(Protocol):
    def is_set(self) -> bool: ...


@dataclass
class TurnContext:
    """Everything one turn's steps share."""

    services: AgentServices
    settings: Settings
    request: TurnRequest
    sink: EventSink
    cancel: Cancel
    now: Callable[[], datetime]
    result: TurnResult
    appended: int = 0  # messages this turn stored after its question (tool units, steered messages)
    notes: bool = False  # the owner's workspace notes may serve this turn (private_notes.notes_private)
    model: str | None = None  # the chat model this turn calls (the agent's own, when it names one)
    call_usage: Usage | None = None  # what the latest model call reported: its reply line's `tokens`
    skills: SkillView | None = None  # the agent's skills as this turn found them (skill_view)

    def reply_tokens(self) -> int | None:
        """The tokens the provider counted for the latest call's reply (its assistant line's `tokens`,
        seed 000 §2.2); None when it reported none."""
        return None if self.call_usage is None else self.call_usage.completion_tokens

    def notice(self, text: str) -> None:
        self.result.notices.append(text)
        self.sink("notice", {"text": text})

    def add_usage(self, used: Usage) -> None:
        """Count what one model call used in the turn's totals (the session's meta.json gets them)."""
        before = self.result.usage
        self.result.usage = used if before is None else before + used

    def skill_view(self) -> SkillView:
        """The agent's skills, scanned once per turn: an edited SKILL.md counts from the next turn."""
        if self.skills is None:
            self.skills = self.services.skills.view(self.settings)
        return self.skills

    def skill_reader(self) -> Callable[[str], dict[str, Any]] | None:
        """skill_read's answer for a name (an error the model can read for a bad one); None without
        skills, when the tool is not offered either."""
        from openclaw_cli.core.errors import OpenclawError

        view = self.skills
        if view is None or not view.available:
            return None

        def read(name: str) -> dict[str, Any]:
            try:
                return view.read(name, self.now().timestamp())
            except OpenclawError as exc:
                return {"error": exc.message}

        return read

    def expander(self) -> Callable[[str], tuple[str, ...]] | None:
        """The model that may expand the turn's weak memory queries (memory.queryExpansion), whose calls
        count in the turn's usage like its chat calls; None without one."""
        model = self.services.query_expander
        if model is None:
            return None

        def expand(query: str) -> tuple[str, ...]:
            answered = model.expand(query)
            if answered.usage is not None:
                self.add_usage(answered.usage)
            return answered.phrasings

        return expand
