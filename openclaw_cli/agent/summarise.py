"""An agent's compaction of one of its sessions: the agent's model writes the summary, its memory flush
extracts from the messages first, the budget follows its settings (compaction.py does the folding).

Used by a turn (loop.py: when due, or after a context overflow), by `/compact` and by `openclaw session
compact` (runtime.compact_now), which therefore need not load the turn loop.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from openclaw_cli.agent import context as prompt_context
from openclaw_cli.agent.compaction import CompactionResult, compact_session, summary_request
from openclaw_cli.sessions.budget.context import CompactionRule

if TYPE_CHECKING:
    from openclaw_cli.agent.services import AgentServices
    from openclaw_cli.config.loading import Settings


def compact(
    services: AgentServices,
    settings: Settings,
    session_id: str,
    now: datetime,
    *,
    force: bool,
    history_budget: int | None = None,
    user_id: str | None = None,
) -> CompactionResult:
    """Flush then summarise the session's older messages (when due, or now if `force`).

    `history_budget` is what a turn has left for summary + history after its system prompt and tool
    schemas; without one (a compaction outside a turn) the window less the reply's share is used.
    """
    model = settings.llm.model
    if model is None:
        from openclaw_cli.core.errors import ConfigError

        raise ConfigError(
            "summaries need a model and none is configured",
            hint="set one with `openclaw config set llm.model openai/gpt-4o-mini`",
        )

    def summarise(previous: str | None, messages: list[dict[str, Any]]) -> str:
        from openclaw_cli.llm import calls as llm

        return llm.complete(
            model,
            # about 4 characters a token: the transcript takes at most half the window
            summary_request(previous, messages, max_chars=settings.llm.context_tokens * 2),
            settings.llm.api_base,
            api_key=settings.llm.api_key,
            max_retries=settings.llm.max_retries,
            timeout=settings.llm.timeout_seconds,
        )

    def flush(flushed_session: str, upto: int) -> None:
        with services.memory_lock:
            services.extraction.flush(flushed_session, upto, user_id)

    if history_budget is None:
        window = settings.llm.context_tokens
        history_budget = window - prompt_context.reply_reserve(window)
    rule = compaction_rule(settings, history_budget)
    return compact_session(services.sessions, session_id, rule, summarise, flush, now, force=force)


def compaction_rule(settings: Settings, history_budget: int) -> CompactionRule:
    context = settings.session.context
    return CompactionRule(context.summary_threshold, context.summary_ratio, max(1, history_budget))


def describe_compaction(outcome: CompactionResult) -> str:
    if not outcome.compacted:
        return f"Nothing to compact ({outcome.kept} recent message(s) are kept as they are)."
    return (
        f"Compacted: {outcome.summarised} message(s) summarised up to #{outcome.checkpoint}, "
        f"{outcome.kept} kept as they are."
    )
