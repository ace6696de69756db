"""The importance-pruning eval (issue 53): how many facts stated early in a conversation are still in the
context when they are asked about at its end, at a fixed history budget, importance vs sliding window.

fixtures/importance/conversations.jsonl (tools/gen_importance_conversations.py) holds the conversations.
For each question, the history is the whole conversation plus the question, fitted by the agent's own
assembly (agent/context.py: old tool results cut, whole tool units, the question always sent); a fact is
kept when its needle is in a kept message. Run `python -m tests.importance_eval` for the table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openclaw_cli.agent.context import assemble
from openclaw_cli.sessions.budget.token_counts import count_message

CONVERSATIONS = Path(__file__).resolve().parent.parent / "fixtures" / "importance" / "conversations.jsonl"
BUDGETS = (300, 600, 1000)
STRATEGIES = ("sliding", "importance")


@dataclass
class Conversation:
    id: str
    lang: str
    split: str
    messages: list[dict[str, Any]]
    probes: list[dict[str, str]]


def load(split: str | None = None) -> list[Conversation]:
    conversations = []
    for line in CONVERSATIONS.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        if split is None or item["split"] == split:
            messages = [{"idx": i, **m} for i, m in enumerate(item["messages"])]
            for message in messages:
                message["tokens"] = count_message(message)
            conversations.append(
                Conversation(item["id"], item["lang"], item["split"], messages, item["probes"])
            )
    return conversations


def kept_facts(conversation: Conversation, budget: int, strategy: str) -> int:
    """How many of the conversation's questions find their fact in what the model would be sent."""
    kept = 0
    for probe in conversation.probes:
        question = {"idx": len(conversation.messages), "role": "user", "content": probe["question"]}
        question["tokens"] = count_message(question)
        history = [*conversation.messages, question]
        prompt = assemble("", history, None, None, budget, strategy=strategy)
        sent = [str(m.get("content") or "") for m in prompt.history if m is not question]
        kept += any(probe["needle"].lower() in text.lower() for text in sent)
    return kept


def table(split: str) -> dict[tuple[str, int, str], tuple[int, int]]:
    """(language or "all", budget, strategy) -> (facts kept, facts asked)."""
    conversations = load(split)
    out: dict[tuple[str, int, str], tuple[int, int]] = {}
    for budget in BUDGETS:
        for strategy in STRATEGIES:
            for lang in ("en", "zh", "all"):
                chosen = [c for c in conversations if lang in ("all", c.lang)]
                kept = sum(kept_facts(c, budget, strategy) for c in chosen)
                out[(lang, budget, strategy)] = (kept, sum(len(c.probes) for c in chosen))
    return out


def main() -> None:
    for split in ("tune", "report"):
        conversations = load(split)
        tokens = sorted(sum(m["tokens"] for m in c.messages) for c in conversations)
        print(f"{split}: {len(conversations)} conversations, median {tokens[len(tokens) // 2]} tokens")
        results = table(split)
        for budget in BUDGETS:
            cells = []
            for lang in ("en", "zh", "all"):
                parts = []
                for strategy in STRATEGIES:
                    kept, asked = results[(lang, budget, strategy)]
                    parts.append(f"{strategy} {kept}/{asked}")
                cells.append(f"{lang}: " + ", ".join(parts))
            print(f"  budget {budget}: " + " | ".join(cells))


if __name__ == "__main__":
    main()
