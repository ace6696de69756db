"""What one turn is given and gives back: TurnRequest, TurnResult and the event sink type.

Kept apart from runtime.py (which drives turns) and loop.py (which runs them) so both can use these types
without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from openclaw_cli.agent.turn.steering import Steering
    from openclaw_cli.llm.usage import Usage

EventSink = Callable[[str, dict[str, Any]], None]
# Said when a turn has no model to answer (here: the chat shows it at start without loading the loop).
# What to set for a model, hosted or on a local OpenAI-compatible server (llama.cpp, vLLM, LM Studio, Ollama).
MODEL_HINT = (
    "set one with `openclaw config set llm.model openai/gpt-4o-mini` (its key from OPENAI_API_KEY or "
    "`llm.apiKey`); for a local OpenAI-compatible server (llama.cpp, vLLM, LM Studio, Ollama) set "
    "`llm.model openai/MODEL-NAME` and `llm.apiBase http://127.0.0.1:PORT/v1`: on loopback no key is needed"
)
NO_MODEL = (
    "No model is configured, so there is no reply; your messages are stored and facts in them are "
    f"still extracted. To {MODEL_HINT.replace('set one with', 'set a model, run', 1)}."
)
TurnStatus = Literal["ok", "error", "aborted"]


@dataclass(frozen=True)
class TurnRequest:
    agent_id: str
    session_key: str
    text: str
    run_id: str
    sender: str | None = None  # who spoke, in a group chat
    user_id: str | None = None  # whose long-term memory the turn reads and writes
    # Messages steered in while the turn runs: taken before each model call, closed when it ends.
    steering: Steering | None = field(default=None, compare=False, repr=False)
    # The message is already in the session at this idx (steered into an earlier run, steer-backlog):
    # it is answered again without being stored twice.
    replay_idx: int | None = None


@dataclass
class TurnResult:
    run_id: str
    session_id: str
    status: TurnStatus
    reply: str = ""
    error: str | None = None
    notices: list[str] = field(default_factory=list)
    user_message_idx: int | None = None  # where the user's message was stored
    memory_ids: list[str] = field(default_factory=list)  # memories injected into the prompt
    compacted: bool = False  # older messages were summarised during this turn
    usage: Usage | None = None  # summed over the turn's model calls; None when none reported any
    stages: dict[str, float] = field(default_factory=dict)  # ms per stage of the turn (agent/turn/stages.py)

    def usage_dict(self) -> dict[str, Any] | None:
        if self.usage is None:
            return None
        used = self.usage
        return {"inputTokens": used.prompt_tokens, "outputTokens": used.completion_tokens, "cost": used.cost}

    def public_dict(self) -> dict[str, Any]:
        return {
            "runId": self.run_id,
            "sessionId": self.session_id,
            "status": self.status,
            "reply": self.reply,
            "error": self.error,
            "notices": self.notices,
            "usage": self.usage_dict(),
        }
