"""Summary compression (seed 000 §2.5): older messages folded into a summary kept in context.json.

messages.jsonl is never rewritten: the summary and its checkpoint (the idx of the last message it
covers) go to context.json, and the summary being replaced is appended to summaries.jsonl first, so no
summary is ever lost. Before messages leave the context, the memory flush extracts from them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from openclaw_cli.core.fsutil import FILE_MODE
from openclaw_cli.security.files import append_record
from openclaw_cli.sessions.budget.context import CompactionRule, plan_compaction
from openclaw_cli.sessions.budget.token_counts import fill_token_counts
from openclaw_cli.sessions.budget.tokens import count_tokens
from openclaw_cli.sessions.locks import lock_for
from openclaw_cli.sessions.store import SessionStore, iso

SUMMARY_HISTORY = "summaries.jsonl"

# (previous summary or None, messages to fold in) -> the new summary
Summariser = Callable[[str | None, list[dict[str, Any]]], str]
# (session id, upto: first idx NOT to extract) -> anything; raises to stop the compaction
Flusher = Callable[[str, int], Any]


@dataclass
class CompactionResult:
    session_id: str
    compacted: bool
    reason: str  # compacted, not-due, nothing-to-compact
    checkpoint: int | None = None
    previous_checkpoint: int | None = None
    summarised: int = 0
    kept: int = 0
    summary_tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "sessionId": self.session_id,
            "compacted": self.compacted,
            "reason": self.reason,
            "checkpoint": self.checkpoint,
            "previousCheckpoint": self.previous_checkpoint,
            "summarised": self.summarised,
            "kept": self.kept,
            "summaryTokens": self.summary_tokens,
        }


def saved_summary(store: SessionStore, session_id: str) -> tuple[str | None, int | None]:
    saved = store.read_context(session_id)
    summary, checkpoint = saved.get("summary"), saved.get("summaryCheckpoint")
    valid_checkpoint = isinstance(checkpoint, int) and not isinstance(checkpoint, bool)
    return (summary if isinstance(summary, str) else None), (checkpoint if valid_checkpoint else None)


def compact_session(
    store: SessionStore,
    session_id: str,
    rule: CompactionRule,
    summarise: Summariser,
    flush: Flusher,
    now: datetime,
    *,
    force: bool = False,
) -> CompactionResult:
    """Summarise the older messages when the rule says so (or `force`): flush, summarise, record.

    Serialised per session (a file lock), so the gateway and `openclaw session compact` never both
    fold the same messages; the second one finds the new checkpoint and has nothing left to do.
    """
    store.ensure()
    with lock_for(store.locks_dir / f"compact-{store.session_dir(session_id).name}.lock").hold():
        summary, checkpoint = saved_summary(store, session_id)
        messages = store.read_messages(session_id).messages
        fill_token_counts(store.session_dir(session_id), messages)
        pending = [m for m in messages if checkpoint is None or m["idx"] > checkpoint]
        summary_tokens = count_tokens(summary) if summary else 0
        if not force and not rule.due(pending, summary_tokens):
            return CompactionResult(session_id, False, "not-due", checkpoint, checkpoint, 0, len(pending))
        plan = plan_compaction(messages, checkpoint, rule, last_exchange_only=force)
        if plan.empty:
            return CompactionResult(
                session_id, False, "nothing-to-compact", checkpoint, checkpoint, 0, len(pending)
            )
        flush(session_id, plan.checkpoint + 1)  # facts leave the context only once they are in memory
        new_summary = summarise(summary, plan.to_summarise).strip()
        if summary is not None:
            _keep_old_summary(store, session_id, summary, checkpoint, now)
        store.write_summary(session_id, new_summary, plan.checkpoint)
        return CompactionResult(
            session_id,
            True,
            "compacted",
            plan.checkpoint,
            checkpoint,
            len(plan.to_summarise),
            plan.kept,
            count_tokens(new_summary),
        )


def _keep_old_summary(
    store: SessionStore, session_id: str, summary: str, checkpoint: int | None, now: datetime
) -> None:
    """Append the summary about to be replaced to summaries.jsonl (a history row for the overwrite)."""
    path = store.session_dir(session_id) / SUMMARY_HISTORY
    line = json.dumps(
        {"summary": summary, "summaryCheckpoint": checkpoint, "replacedAt": iso(now)}, ensure_ascii=False
    )
    append_record(path, line.encode("utf-8"), mode=FILE_MODE)  # sealed in an encrypted home


# -- the model's part ------------------------------------------------------------------------------

SUMMARY_INSTRUCTIONS = (
    "You maintain the running summary of a conversation between a user and an assistant. "
    "Write a new summary that merges the previous summary (if any) with the messages given. Keep facts, "
    "decisions, open questions, names, numbers and what the user asked for; drop greetings and filler. "
    "Write in the language the conversation uses, in at most 200 words, as plain prose. "
    "Reply with the summary only."
)
MAX_MESSAGE_CHARS = 2000  # per message, in what the summariser is shown


def summary_request(
    previous: str | None, messages: list[dict[str, Any]], max_chars: int = 200_000
) -> list[dict[str, Any]]:
    """The chat messages asking the model for a summary, the transcript within `max_chars`.

    The summariser has the same context window as the chat: when the messages are too long together,
    each is cut shorter, and past that the oldest are left out (the previous summary covers them best).
    """
    room = max_chars - len(previous or "")
    per_message = max(200, min(MAX_MESSAGE_CHARS, room // max(1, len(messages))))
    lines = [_transcript_line(message, per_message) for message in messages]
    while len(lines) > 1 and sum(len(line) + 1 for line in lines) > room:
        lines.pop(0)
    left_out = len(messages) - len(lines)
    body = f"Previous summary:\n{previous}\n\n" if previous else "Previous summary: (none)\n\n"
    body += "Messages:\n" + (f"({left_out} earlier messages left out)\n" if left_out else "")
    body += "\n".join(lines)
    return [{"role": "system", "content": SUMMARY_INSTRUCTIONS}, {"role": "user", "content": body}]


def _transcript_line(message: dict[str, Any], limit: int) -> str:
    who = str(message.get("role", "?"))
    if message.get("sender"):
        who += f" ({message['sender']})"
    text = str(message.get("content", ""))
    if message.get("toolCalls"):
        names = [str(c.get("function", {}).get("name")) for c in message["toolCalls"] if isinstance(c, dict)]
        text += f" [called {', '.join(names)}]"
    if len(text) > limit:
        text = text[:limit] + "…"
    return f"[{message.get('idx')}] {who}: {text}"
