"""Token counts of session messages, and their per-session cache (tokens.json).

Apart from context.py (the window a model is sent) so that the store can count a session's tokens
without importing context.py, which reads sessions through the store.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path
from typing import Any

from openclaw_cli.core.fsutil import atomic_write_json
from openclaw_cli.sessions.budget.tokens import DEFAULT_ENCODING, count_tokens

TOKENS_FILENAME = "tokens.json"  # cached token counts (derived data, safe to delete)


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
