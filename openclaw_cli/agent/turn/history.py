"""The session history a turn's model round works from: read once, counted once (issue 23).

A turn used to read messages.jsonl three times before its first model call (for the memory query,
for the compaction check, for the prompt), counting every message's tokens twice. Now the first
round's prompt, the memory query and the compaction pre-check share one read; a later round (after a
tool result or a steered message the turn stored) reads again.

Token counts are remembered in this process too (token_memo.py): tokens.json keeps them across processes,
but checking it means hashing every message of the session on every read.

The pre-check applies the compaction rule to that read: only when it is due does the locked
compaction (compaction.py, which reads again under its lock) run. Another process's appends since the
read are seen by the next turn's check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from openclaw_cli.agent.compaction import saved_summary
from openclaw_cli.agent.summarise import compaction_rule
from openclaw_cli.agent.turn.stages import span
from openclaw_cli.sessions.budget.token_counts import count_message, fill_token_counts

if TYPE_CHECKING:
    from openclaw_cli.agent.turn.state import TurnContext


# Messages a turn may find uncounted and count itself (its question, the last reply, a tool unit or
# two); more means a session this process has not read yet, whose counts tokens.json may hold. What is
# counted here reaches tokens.json (derived data) when it is next filled: a compaction, another process.
FEW_NEW = 8


@dataclass(frozen=True)
class History:
    messages: list[dict[str, Any]]  # each with its `tokens` count
    summary: str | None
    checkpoint: int | None  # the idx of the last message the summary covers


def read_history(turn: TurnContext, session_id: str) -> History:
    store, stages = turn.services.sessions, turn.result.stages
    with span(stages, "session read"):
        messages = store.read_messages(session_id).messages
    with span(stages, "token counting"):
        memo = turn.services.token_memo
        memo.fill(session_id, messages)
        uncounted = [m for m in messages if not isinstance(m.get("tokens"), int)]
        if len(uncounted) > FEW_NEW:  # the first read here: tokens.json's counts are worth reading
            fill_token_counts(store.session_dir(session_id), messages)
        else:  # what was said since the last turn: counting it costs less than tokens.json's round trip
            for message in uncounted:
                message["tokens"] = count_message(message)
        memo.remember(session_id, messages)
    with span(stages, "session read"):
        summary, checkpoint = saved_summary(store, session_id)
    return History(messages, summary, checkpoint)


def compaction_due(turn: TurnContext, history: History, budget: int) -> bool:
    """Whether the compaction rule is due by `history` (the rule compaction.py applies under its lock)."""
    from openclaw_cli.sessions.budget.tokens import count_tokens

    rule = compaction_rule(turn.settings, budget)
    checkpoint = history.checkpoint
    pending = [m for m in history.messages if checkpoint is None or m["idx"] > checkpoint]
    return rule.due(pending, count_tokens(history.summary) if history.summary else 0)
