"""TurnContext: what the steps of one turn share (loop.py runs them, replies.py talks to the model)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from openclaw_cli.agent.services import AgentServices
    from openclaw_cli.agent.turn_types import EventSink, TurnRequest, TurnResult
    from openclaw_cli.config import Settings


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

    def notice(self, text: str) -> None:
        self.result.notices.append(text)
        self.sink("notice", {"text": text})
