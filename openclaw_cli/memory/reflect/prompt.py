"""What reflection asks the model, and the shape its answer must have (seed 000 §7).

The memories of one group are shown as numbered lines (`m1`, `m2`, ...) rather than by record id: short
references cost a few tokens each where an id costs ~25, and a model copies `m12` more faithfully than a
UUID. The reply names its evidence by those references; anything else is set aside by the caller.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from openclaw_cli.memory.store.records import MemoryRecord

TOPIC_CHARS = 64
_NOT_WORD = re.compile(r"[\W_]+")

SYSTEM_PROMPT = """You reflect on what an assistant remembers about a user and distil higher-level insights.

You are given numbered memories of one kind ({category}), each with the date it was recorded.
Find at most {max_insights} insights: general conclusions that several memories support (habits, \
tendencies, lasting preferences, recurring problems), not a restatement of a single memory.

Answer with JSON only, in this shape:
{{"insights": [{{"topic": "short label of what it is about, e.g. editor theme",
  "insight": "one sentence",
  "detail": "optional: one or two sentences of reasoning",
  "confidence": 0.0 to 1.0,
  "evidence": ["m1", "m4"]}}]}}

Rules:
- evidence lists only the references (m1, m2, ...) of memories shown below that support the insight;
- write each insight in the language most of the memories are written in;
- keep what the memories say: do not turn "hates broccoli" into "likes vegetables";
- when nothing general can be said, answer {{"insights": []}}."""


class InsightReply(BaseModel):
    """One insight as the model states it."""

    model_config = ConfigDict(extra="ignore")

    topic: str = Field(min_length=1, max_length=200)
    insight: str = Field(min_length=1, max_length=2000)
    detail: str | None = Field(None, max_length=4000)
    confidence: float = Field(ge=0, le=1)
    evidence: list[str] = Field(default_factory=list, max_length=500)
    # Insights are always stored as `insight`; a model that labels one otherwise is reported, not obeyed.
    category: str | None = None


class ReflectionReply(BaseModel):
    model_config = ConfigDict(extra="ignore")

    insights: list[InsightReply] = Field(max_length=100)

    @model_validator(mode="before")
    @classmethod
    def _bare_list(cls, value: Any) -> Any:
        """A bare JSON list is the list of insights (models often drop the wrapper object)."""
        return {"insights": value} if isinstance(value, list) else value


def reference(position: int) -> str:
    return f"m{position + 1}"


def memory_line(position: int, record: MemoryRecord) -> str:
    text = " ".join(record.l0.split())
    return f"{reference(position)} [{record.created_at:%Y-%m-%d}] {text}"


def build_messages(category: str, records: Sequence[MemoryRecord], max_insights: int) -> list[dict[str, str]]:
    lines = "\n".join(memory_line(n, record) for n, record in enumerate(records))
    return [
        {"role": "system", "content": SYSTEM_PROMPT.format(category=category, max_insights=max_insights)},
        {"role": "user", "content": f"Memories ({category}):\n{lines}"},
    ]


def topic_key(topic: str) -> str:
    """The insight's attribute: its topic folded to lower-case words, so "Editor theme" and "editor
    theme!" are one topic, and the writer's latest-wins merge replaces the older insight on it."""
    words = _NOT_WORD.sub(" ", topic.casefold()).split()
    return " ".join(words)[:TOPIC_CHARS].strip() or "general"
