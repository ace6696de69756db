"""Realistic archived transcripts for the compression benchmark: messages.jsonl lines as the session writer
stores them (compact JSON, ensure_ascii off), bilingual (the importance fixture's English and Chinese
conversations, interleaved), with tool calls and their JSON results every few turns, a person id on user
lines, and the model and token count on assistant lines.

No conversation repeats within one transcript up to ~2,700 lines: a repeated one would compress unrealistically
well (it would fall inside the compressor's window).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

CONVERSATIONS = Path(__file__).resolve().parent.parent / "fixtures" / "importance" / "conversations.jsonl"
TOOLS = ("memory_search", "web_fetch", "calendar_list", "memory_add")


def _conversations() -> list[list[dict[str, Any]]]:
    lines = CONVERSATIONS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["messages"] for line in lines if line.strip()]


def _tool_lines(rng: random.Random, idx: int, ts: str, text: str) -> list[dict[str, Any]]:
    """An assistant tool call and the tool's JSON result, quoting the conversation as real results do."""
    tool = rng.choice(TOOLS)
    call_id = f"call_{rng.getrandbits(64):016x}"
    arguments = json.dumps({"query": text[:60], "limit": rng.choice((3, 5, 8))}, ensure_ascii=False)
    hits = [
        {"id": f"m-{rng.getrandbits(48):012x}", "score": round(rng.random(), 4), "text": text[: rng.randint(30, 160)]}
        for _ in range(rng.randint(1, 4))
    ]
    return [
        {
            "idx": idx,
            "role": "assistant",
            "content": "",
            "ts": ts,
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": tool, "arguments": arguments}}],
            "model": "openai/gpt-4o-mini",
            "tokens": rng.randint(12, 40),
        },
        {
            "idx": idx + 1,
            "role": "tool",
            "content": json.dumps({"results": hits}, ensure_ascii=False),
            "ts": ts,
            "tool_call_id": call_id,
        },
    ]


def transcript(lines: int, seed: int = 11) -> bytes:
    """A messages.jsonl of `lines` lines."""
    rng = random.Random(seed)
    conversations = _conversations()
    rng.shuffle(conversations)
    out: list[dict[str, Any]] = []
    second = 1_760_000_000
    turn = 0
    while len(out) < lines:
        for message in conversations[turn % len(conversations)]:
            second += rng.randint(5, 400)
            ts = f"2025-{1 + second // 2_600_000 % 12:02d}-{1 + second // 86_400 % 28:02d}T{second // 3600 % 24:02d}:{second // 60 % 60:02d}:{second % 60:02d}.{rng.randint(0, 999):03d}Z"
            record: dict[str, Any] = {"idx": len(out), "role": message["role"], "content": message["content"], "ts": ts}
            if message["role"] == "user":
                record["userId"] = "telegram:" + str(100_000 + turn % 7)
            else:
                record["model"] = "openai/gpt-4o-mini"
                record["tokens"] = max(1, len(message["content"]) // 4)
            out.append(record)
            if message["role"] == "user" and rng.random() < 0.2:
                out.extend(_tool_lines(rng, len(out), ts, message["content"]))
        turn += 1
    return b"".join(
        json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n" for r in out[:lines]
    )
