"""What extraction asks the model, and how its JSON reply is checked.

Messages go to the model as numbered transcript lines, `[idx] timestamp speaker: text`, and the model
answers with the indexes each memory comes from. Long input is bounded, never sent whole: each message
is cut to MAX_MESSAGE_CHARS (its head and tail kept) and the transcript is split into chunks of at most
MAX_CHUNK_CHARS, one request each, so a 100,000-character paste costs a few bounded requests.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field, model_validator

from openclaw_cli.memory.text.bounded import bounded

# The categories extraction writes (seed 000 §6.1); insight comes from reflection, note from workspaces.
EXTRACT_CATEGORIES = ("profile", "preference", "event", "case", "lesson")
# What models commonly answer instead of the category names asked for.
_CATEGORY_ALIASES = {
    "fact": "profile",
    "facts": "profile",
    "profiles": "profile",
    "preferences": "preference",
    "events": "event",
    "cases": "case",
    "lessons": "lesson",
}
MAX_MESSAGE_CHARS = 4000
MAX_CHUNK_CHARS = 16000
MAX_L0_CHARS = 300
MAX_L1_CHARS = 2000

SYSTEM_PROMPT = """You extract long-term memories about a user from a conversation transcript.
Each transcript line is `[index] timestamp speaker: text`.
Extract only durable, useful information about {subject}: facts about them, their preferences,
events in their life or work, cases (problems and how they were solved) and lessons learned.
Ignore small talk, and what the assistant said unless the user confirmed it. Never invent anything.

Answer with JSON only, in this form:
{{"memories": [{{"category": "profile|preference|event|case|lesson",
  "l0": "one line, at most 100 characters, in the language of the conversation",
  "l1": "the detail: context, reasons, dates; a few sentences",
  "attribute": "for profile facts only: a short snake_case key such as name, job, city, employer",
  "messages": [the indexes of the transcript lines it comes from]}}]}}
Write l0 and l1 in the third person ("User prefers ..." / "用户喜欢 ..."), keeping the user's meaning
exactly (never turn "hates broccoli" into "likes vegetables"). Answer {{"memories": []}} when there is
nothing worth remembering."""


class ExtractedItem(BaseModel):
    category: str
    l0: str = Field(min_length=1)
    l1: str | None = None
    attribute: str | None = None
    messages: list[int] = Field(default_factory=list)


class ExtractionReply(BaseModel):
    memories: list[ExtractedItem]

    @model_validator(mode="before")
    @classmethod
    def _bare_list(cls, value: Any) -> Any:
        # Some models answer with the list alone.
        return {"memories": value} if isinstance(value, list) else value


def normal_category(name: str) -> str | None:
    """The extraction category `name` means, or None when it is none of them."""
    key = name.strip().lower()
    key = _CATEGORY_ALIASES.get(key, key)
    return key if key in EXTRACT_CATEGORIES else None


def speaker_of(message: dict[str, Any]) -> str:
    if message.get("role") == "user":
        return f"user ({message['sender']})" if message.get("sender") else "user"
    return str(message.get("role", "unknown"))


def transcript_line(message: dict[str, Any]) -> str:
    text = bounded(str(message.get("content") or ""), MAX_MESSAGE_CHARS)
    return f"[{message['idx']}] {message.get('ts', '')} {speaker_of(message)}: {text}"


def chunks(messages: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The messages in consecutive groups whose transcript fits MAX_CHUNK_CHARS (at least one each)."""
    groups: list[list[dict[str, Any]]] = []
    size = 0
    for message in messages:
        length = len(transcript_line(message)) + 1
        if groups and size + length <= MAX_CHUNK_CHARS:
            groups[-1].append(message)
            size += length
        else:
            groups.append([message])
            size = length
    return groups


def extraction_messages(chunk: Sequence[dict[str, Any]], speaker: str | None) -> list[dict[str, str]]:
    """The chat messages of one extraction request; `speaker` narrows a group chat to one person."""
    subject = f"the speaker {speaker!r} only" if speaker else "the user"
    transcript = "\n".join(transcript_line(m) for m in chunk)
    return [
        {"role": "system", "content": SYSTEM_PROMPT.format(subject=subject)},
        {"role": "user", "content": f"Transcript:\n{transcript}"},
    ]


def verbatim(messages: Sequence[dict[str, Any]], limit: int) -> str:
    """L2: the source messages word for word with their timestamps, within `limit` characters."""
    lines = [f"[{m.get('ts', '')}] {speaker_of(m)}: {m.get('content') or ''}" for m in messages]
    return bounded("\n".join(lines), limit)
