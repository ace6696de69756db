"""The agent's own Markdown memory (seed 003 §4.1): the `memory_note` tool, and "remember this" from the
owner written to today's log as well as to the store.

The workspace files (MEMORY.md, memory/YYYY-MM-DD.md) are the owner's notes (agent/turn/private_notes.py): only
the owner's turns write there. Anyone else's note goes to that person's own memory instead, and the answer
says so, so the model can tell them where it went.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from openclaw_cli.config.models import MemorySettings
    from openclaw_cli.core.paths import Home
    from openclaw_cli.memory.service import MemoryService
    from openclaw_cli.memory.writing.candidate import WriteOutcome


class NoteArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str = Field(min_length=1, max_length=4000, description="what to note, in one or a few sentences")
    durable: bool = Field(
        False, description="true: MEMORY.md (lasting facts and decisions); false: today's log"
    )


NOTE_DESCRIPTION = (
    "Write a note in the assistant's own Markdown memory: today's log, or MEMORY.md with durable=true for "
    "lasting facts, decisions and instructions. Only the owner's notes go there; anyone else's are kept in "
    "their own memory."
)


def write_note(memory: MemoryService, user_id: str | None, args: NoteArgs) -> dict[str, Any]:
    """The tool's answer: where the note went (`path:line` for the workspace)."""
    from openclaw_cli.identity.persons import ANONYMOUS_REASON

    if user_id is None:
        return {"error": f"not stored: {ANONYMOUS_REASON}"}
    if user_id != memory.owner:
        return _into_own_memory(memory, user_id, args.text)
    return workspace_note(memory.home, memory.agent_id, memory.settings, args.text, durable=args.durable)


# What the answer says when a note went to the person's own memory (the tool's and the MCP server's).
NOT_THE_OWNERS = "the workspace notes are the owner's: this was kept in this person's own memory instead"


def workspace_note(
    home: Home, agent_id: str, settings: MemorySettings, text: str, *, durable: bool
) -> dict[str, Any]:
    """The owner's note appended to today's log (MEMORY.md when `durable`), and the answer that says where:
    the one writer behind the agent's tool and the MCP server's. The log's day is the owner's local day, as
    `openclaw memory note` writes it."""
    from openclaw_cli.memory.workspace.files import append_note

    written = append_note(home, agent_id, settings, text, durable=durable, now=_local_now())
    return {"written": "workspace", "file": written.name, "location": f"{written.name}:{written.line}"}


def _into_own_memory(memory: MemoryService, user_id: str, text: str) -> dict[str, Any]:
    from openclaw_cli.memory.writing.candidate import Candidate
    from openclaw_cli.memory.writing.write_path import write_memories

    [outcome] = write_memories(
        memory, [Candidate(l0=text, category="note", user_id=user_id, source={"kind": "agent-note"})]
    )
    if outcome.action == "skipped":
        return {"error": f"not stored: {outcome.reason}"}
    return {
        "written": "memory",
        "id": outcome.record_id,
        "action": outcome.action,
        "note": NOT_THE_OWNERS,
    }


def log_remembered(
    memory: MemoryService, user_id: str | None, outcomes: Sequence[WriteOutcome]
) -> str | None:
    """ "Remember this" from the owner: each fact it stored also goes to today's log, at once (seed 003
    §4.1: the Markdown is the agent's memory a person can read and edit). Returns the log's name, or None
    when nothing was written there (not the owner, or nothing stored)."""
    from openclaw_cli.memory.workspace.files import append_note

    if user_id is None or user_id != memory.owner:
        return None
    name = None
    for outcome in outcomes:
        if outcome.action == "skipped":
            continue
        written = append_note(
            memory.home,
            memory.agent_id,
            memory.settings,
            outcome.candidate.l0,
            durable=False,
            now=_local_now(),
        )
        name = written.name
    return name


def _local_now() -> datetime:
    return datetime.now().astimezone()
