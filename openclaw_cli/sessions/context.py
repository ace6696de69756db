"""What a model would be sent under a token budget: the summary (if any) plus a sliding window.

The window is taken from the tail of the messages after the summary checkpoint. An assistant message
with toolCalls and the tool messages answering it form one unit: kept together or dropped together,
and a tool result whose call is not in the window is never sent on its own.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openclaw_cli.errors import InvalidInput
from openclaw_cli.fsutil import atomic_write_json
from openclaw_cli.sessions.store import SessionStore
from openclaw_cli.sessions.tokens import DEFAULT_ENCODING, count_tokens

TOKENS_FILENAME = "tokens.json"  # cached token counts (derived data, safe to delete)


@dataclass
class Context:
    summary: str | None
    summary_tokens: int
    messages: list[dict[str, Any]]
    tokens: int
    budget: int
    dropped: int  # messages after the checkpoint that did not fit
    problems: list[Any] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "summary": self.summary,
            "summaryTokens": self.summary_tokens,
            "messages": self.messages,
            "tokens": self.tokens,
            "budget": self.budget,
            "dropped": self.dropped,
        }


def message_cost(message: dict[str, Any]) -> int:
    """Tokens of a message: its `tokens` field when it has one, else counted now."""
    tokens = message.get("tokens")
    return tokens if isinstance(tokens, int) and tokens >= 0 else count_message(message)


def count_message(message: dict[str, Any]) -> int:
    tokens = count_tokens(str(message.get("content", "")))
    if message.get("toolCalls"):
        tokens += count_tokens(json.dumps(message["toolCalls"], ensure_ascii=False))
    return tokens


def _fingerprint(message: dict[str, Any]) -> str:
    text = json.dumps([message.get("content"), message.get("toolCalls")], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def fill_token_counts(directory: Path, messages: list[dict[str, Any]], *, write_cache: bool = True) -> None:
    """Give every message a `tokens` count, from the session's cache (tokens.json) where it is valid.

    Appends do not count tokens (the tokenizer is slow to load), so counts are made here, on the first
    budget computed, and cached per message idx with a hash of its content: the cache is derived data,
    rebuilt whenever it is missing, damaged or stale, and written atomically (a race only loses work).
    """
    path = directory / TOKENS_FILENAME
    try:
        cached = json.loads(path.read_bytes())
        counts = cached["counts"] if cached.get("encoding") == DEFAULT_ENCODING else {}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        counts = {}
    changed = False
    for message in messages:
        if isinstance(message.get("tokens"), int):
            continue
        key, fingerprint = str(message["idx"]), _fingerprint(message)
        entry = counts.get(key) if isinstance(counts, dict) else None
        if not (isinstance(entry, list) and len(entry) == 2 and entry[0] == fingerprint):
            entry = [fingerprint, count_message(message)]
            counts[key] = entry
            changed = True
        message["tokens"] = int(entry[1])
    if changed and write_cache:
        with contextlib.suppress(OSError):
            atomic_write_json(path, {"encoding": DEFAULT_ENCODING, "counts": counts}, durable=False)


def group_units(messages: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Split messages into units; a tool call and its results form one unit, orphan results are dropped."""
    units: list[list[dict[str, Any]]] = []
    open_calls: set[str] = set()
    for message in messages:
        if message.get("role") == "tool":
            call_id = message.get("toolCallId")
            if units and call_id in open_calls:
                units[-1].append(message)
            continue  # a result without its call in view cannot be sent alone
        calls = message.get("toolCalls") if message.get("role") == "assistant" else None
        open_calls = (
            {str(c.get("id")) for c in calls if isinstance(c, dict)} if isinstance(calls, list) else set()
        )
        units.append([message])
    return units


def build_context(
    messages: list[dict[str, Any]], summary: str | None, checkpoint: int | None, budget: int
) -> Context:
    """The summary (when it fits) and the newest whole units of messages after `checkpoint` within budget."""
    if budget < 0:
        raise InvalidInput("the token budget must be zero or more")
    summary_tokens = count_tokens(summary) if summary else 0
    use_summary = bool(summary) and summary_tokens <= budget
    remaining = budget - (summary_tokens if use_summary else 0)
    after = [m for m in messages if checkpoint is None or m["idx"] > checkpoint]
    kept: list[list[dict[str, Any]]] = []
    for unit in reversed(group_units(after)):
        cost = sum(message_cost(m) for m in unit)
        if cost > remaining:
            break  # a sliding window: nothing older than the first unit that does not fit
        kept.append(unit)
        remaining -= cost
    window = [m for unit in reversed(kept) for m in unit]
    used = budget - remaining
    return Context(
        summary if use_summary else None,
        summary_tokens if use_summary else 0,
        window,
        used,
        budget,
        len(after) - len(window),
    )


def session_context(store: SessionStore, key_or_id: str, budget: int) -> Context:
    """context(key, budget): what a model would be sent for a session's current state."""
    session_id = store.resolve(key_or_id)
    saved = store.read_context(session_id)
    result = store.read_messages(session_id)
    fill_token_counts(store.session_dir(session_id), result.messages)
    checkpoint = saved.get("summaryCheckpoint")
    summary = saved.get("summary")
    context = build_context(
        result.messages,
        summary if isinstance(summary, str) else None,
        checkpoint if isinstance(checkpoint, int) and not isinstance(checkpoint, bool) else None,
        budget,
    )
    context.problems = list(result.problems)
    return context
