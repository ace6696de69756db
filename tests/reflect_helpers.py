"""Helpers for reflection tests: a model that reflects like a plain, honest one, and database snapshots."""

from __future__ import annotations

import json
import re
from typing import Any

from openclaw_cli.config.loading import Settings
from openclaw_cli.memory.service import MemoryService

MEMORY_LINE = re.compile(r"^(m\d+) \[(\d{4}-\d{2}-\d{2})\] (.*)$", re.MULTILINE)
CATEGORY = re.compile(r"^Memories \((\w+)\):", re.MULTILINE)


def llm_settings(url: str, **llm: Any) -> Settings:
    return Settings(llm={"model": "openai/fake-chat", "apiBase": url, "maxRetries": 1, **llm})


def prompt_of(body: dict[str, Any]) -> tuple[str, list[tuple[str, str]]]:
    """(category, [(reference, text)]) of a reflection request."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    category = CATEGORY.search(user)
    assert category, user
    return category.group(1), [(ref, text) for ref, _, text in MEMORY_LINE.findall(user)]


def summarising_model(body: dict[str, Any]) -> str:
    """One insight per group, on the group's category, citing every memory it was shown."""
    category, lines = prompt_of(body)
    return json.dumps(
        {
            "insights": [
                {
                    "topic": f"{category} pattern",
                    "insight": f"Across {len(lines)} {category} memories: "
                    + "; ".join(t for _, t in lines[:3]),
                    "detail": "seen repeatedly",
                    "confidence": 0.8,
                    "evidence": [ref for ref, _ in lines],
                }
            ]
        }
    )


def snapshot(service: MemoryService) -> dict[str, Any]:
    """Everything reflection could change: every record, the history, the meta table."""
    out: dict[str, Any] = {}
    for store in service.existing_stores():
        out[str(store.path)] = {
            "records": [tuple(r) for r in store.conn.execute("SELECT * FROM records ORDER BY rowid")],
            "history": [tuple(r) for r in store.conn.execute("SELECT * FROM history ORDER BY seq")],
            "meta": [tuple(r) for r in store.conn.execute("SELECT * FROM meta ORDER BY key")],
        }
    return out
