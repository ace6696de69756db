"""The memory blocks a chat turn injects for the eval's conversations, over the eval store, as recorded.

`fixtures/inject_blocks.json` holds, for a fixed set of turns, the ids of the memories each block shows
and a SHA-256 of its text, as the code before the turn's speed work (issue 54) built them. Speed work
must leave every block as it was: tests/test_inject_golden.py builds them again and compares.

The turns: every question of `conversation_queries.jsonl`, every fourth of `queries.jsonl`, and the eval's
conversations themselves (`conversations.jsonl`), a turn's query being what the gateway searches for: the
user's message, with the last messages of the session before it (loop.py: MEMORY_CONTEXT_MESSAGES).
Searched as the gateway searches (a warm MemoryService, default settings, no query expansion, the
memories' FSRS state left as it is).

Recording again (only when a change of results is intended and reviewed):
`.venv/bin/python -m tests.inject_golden` from the repository root.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from openclaw_cli.config.loading import Settings
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.inject import build_memory_block
from openclaw_cli.memory.service import MemoryService
from tests.evalset import NOW, load_jsonl
from tests.memory_helpers import with_shared_models

GOLDEN = Path(__file__).resolve().parent.parent / "fixtures" / "inject_blocks.json"
CONTEXT_MESSAGES = 6  # agent/turn/loop.py MEMORY_CONTEXT_MESSAGES
EVERY_QUERY = 4  # every fourth question of queries.jsonl
EVERY_TURN = 3  # every third user turn of each conversation


def turns() -> Iterator[dict[str, Any]]:
    """The fixed set of turns: a name, the person, the message and the messages before it."""
    for number, item in enumerate(load_jsonl("conversation_queries.jsonl")):
        yield {"name": f"cq-{number}", "user": item["userId"], "query": item["query"], "messages": []}
    for number, item in enumerate(load_jsonl("queries.jsonl")):
        if number % EVERY_QUERY == 0:
            yield {"name": f"q-{number}", "user": item["userId"], "query": item["query"], "messages": []}
    sessions: dict[str, list[dict[str, Any]]] = {}
    for row in load_jsonl("conversations.jsonl"):
        sessions.setdefault(row["session"], []).append(row)
    for session, rows in sessions.items():
        said: list[dict[str, Any]] = []
        users = 0
        for row in rows:
            text = row["l0"].split(": ", 1)[1] if ": " in row["l0"] else row["l0"]
            message = {"role": row["speaker"], "content": text}
            if row["speaker"] == "user":
                users += 1
                if users % EVERY_TURN == 1:
                    recent = [*said, message][-CONTEXT_MESSAGES:]
                    yield {
                        "name": f"{session}-{row['turn']}",
                        "user": row["userId"],
                        "query": text,
                        "messages": recent,
                    }
            said.append(message)


def warm_service(home: Path) -> MemoryService:
    """The eval store at `home` opened as the gateway opens its agent's memory: warm, default settings."""
    return MemoryService(Home(home), "main", with_shared_models(Settings()).memory, warm=True)


def block_of(service: MemoryService, turn: dict[str, Any]) -> dict[str, Any]:
    block = build_memory_block(
        service,
        with_shared_models(Settings()).memory.inject,
        query=turn["query"],
        messages=turn["messages"],
        user_id=turn["user"],
        record_hits=False,
        now=NOW,
    )
    return {"ids": block.record_ids, "sha256": hashlib.sha256(block.text.encode("utf-8")).hexdigest()}


def blocks(service: MemoryService) -> dict[str, dict[str, Any]]:
    return {turn["name"]: block_of(service, turn) for turn in turns()}


def _record() -> None:
    import sys
    import tempfile

    from tests.evalset import build_service

    with tempfile.TemporaryDirectory() as directory:
        build_service(Path(directory)).close()
        service = warm_service(Path(directory))
        found = blocks(service)
        service.close()
    GOLDEN.write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    sys.stdout.write(f"{len(found)} blocks recorded in {GOLDEN}\n")


if __name__ == "__main__":
    _record()
