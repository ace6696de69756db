"""The built-in tools the model may call: memory_search, memory_add, memory_forget, session_search,
and skill_read when the agent has a skill (openclaw_cli/skills/).

Arguments come from the model, so they are validated like user input (pydantic); a bad call is answered
with an error the model can read and correct, never raised into the turn.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from openclaw_cli.agent.tools.own_notes import NOTE_DESCRIPTION, NoteArgs, write_note
from openclaw_cli.core.errors import OpenclawError
from openclaw_cli.core.textcheck import tool_arguments

if TYPE_CHECKING:
    from openclaw_cli.memory.inject import Expander
    from openclaw_cli.memory.service import MemoryService

MAX_RESULTS = 10


class _Args(BaseModel):
    model_config = ConfigDict(extra="ignore")


Source = Literal["memory", "sessions"]


class SearchArgs(_Args):
    query: str = Field(min_length=1, max_length=2000)
    limit: int = Field(5, ge=1, le=MAX_RESULTS)
    sources: list[Source] = Field(
        default_factory=lambda: list[Source](["memory"]),
        min_length=1,
        max_length=2,
        description='where to look: "memory" (long-term memory), "sessions" (what was said in past '
        "conversations with this person), or both, ranked as one list",
    )


class SessionSearchArgs(_Args):
    query: str = Field(min_length=1, max_length=2000)
    limit: int = Field(5, ge=1, le=MAX_RESULTS)


class AddArgs(_Args):
    text: str = Field(min_length=1, max_length=4000)
    category: Literal["profile", "preference", "event", "case", "lesson", "note"] = "note"
    attribute: str | None = Field(
        None,
        max_length=64,
        description="for a profile fact, what it is about (job, city): a new value replaces the old one",
    )


class ForgetArgs(_Args):
    id: str = Field(min_length=1, max_length=128)


class SkillReadArgs(_Args):
    name: str = Field(min_length=1, max_length=64)


def _spec(name: str, description: str, schema: type[BaseModel]) -> dict[str, Any]:
    parameters = schema.model_json_schema()
    parameters.pop("title", None)
    for field in parameters.get("properties", {}).values():
        field.pop("title", None)
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


@functools.cache
def tool_specs(skills: bool = False) -> list[dict[str, Any]]:
    """The tools offered to the model (OpenAI function schemas), built once on first use; skill_read
    only to an agent that has a skill (`skills`)."""
    skill_read = _spec(
        "skill_read",
        "Read a skill's instructions (its SKILL.md body) by name, from the Skills list.",
        SkillReadArgs,
    )
    return [
        _spec(
            "memory_search",
            "Search long-term memory (facts, preferences, events about the user) for a query; with "
            'sources ["memory", "sessions"] also what was said in past conversations, in one ranking.',
            SearchArgs,
        ),
        _spec("memory_add", "Store one durable fact or preference in long-term memory.", AddArgs),
        _spec("memory_forget", "Delete one memory by its id (as shown by memory_search).", ForgetArgs),
        _spec(
            "session_search",
            "Search what was said in past conversations with this person (exact wording, who said it, "
            "when), when long-term memory does not hold it.",
            SessionSearchArgs,
        ),
        _spec("memory_note", NOTE_DESCRIPTION, NoteArgs),
        *([skill_read] if skills else []),
    ]


TOOL_NAMES = frozenset(
    {"memory_search", "memory_add", "memory_forget", "memory_note", "session_search", "skill_read"}
)
# (query, limit) -> the transcript search's answer, as the person of the turn may see it.
SessionSearch = Callable[[str, int], dict[str, Any]]
# name -> the skill's body and folder (skills/service.SkillView.read), for this turn's agent.
SkillReader = Callable[[str], dict[str, Any]]


def run_tool(
    name: str,
    arguments: str,
    memory: MemoryService,
    user_id: str | None,
    session_search: SessionSearch | None = None,
    expander: Expander | None = None,
    lock: AbstractContextManager[Any] | None = None,
    notes: bool = False,
    skill_reader: SkillReader | None = None,
) -> dict[str, Any]:
    """Run one tool call; the result (or the error) as a JSON-able dict for the tool message.

    `expander`: a model that may expand a weak memory_search query (memory/inject.recall). `lock` is
    held while a tool uses memory, but not while the model expands a query. `notes`: memory_search may
    return the owner's workspace notes (agent/turn/private_notes.py)."""
    raw = tool_arguments(arguments)
    if isinstance(raw, str):
        return {"error": raw}
    guard = lock or nullcontext()
    try:
        if name == "memory_search":
            args = SearchArgs.model_validate(raw)
            if args.sources != ["memory"]:
                from openclaw_cli.agent.tools.search_sources import search_both

                return search_both(
                    args.query,
                    args.limit,
                    args.sources,
                    memory,
                    user_id,
                    session_search,
                    expander,
                    guard,
                    notes,
                )
            return _search(args, memory, user_id, expander, guard, notes)
        with guard:
            if name == "memory_add":
                return _add(AddArgs.model_validate(raw), memory, user_id)
            if name == "memory_forget":
                return _forget(ForgetArgs.model_validate(raw), memory, user_id)
            if name == "memory_note":
                return write_note(memory, user_id, NoteArgs.model_validate(raw))
            if name == "session_search" and session_search is not None:
                return _session_search(SessionSearchArgs.model_validate(raw), session_search)
        if name == "skill_read" and skill_reader is not None:  # no memory: outside the lock
            return skill_reader(SkillReadArgs.model_validate(raw).name)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ())) or "arguments"
        return {"error": f"invalid arguments ({where}: {first.get('msg')})"}
    except OpenclawError as exc:
        return {"error": exc.message}
    return {"error": f"unknown tool {name!r}; the tools are {', '.join(sorted(TOOL_NAMES))}"}


def _search(
    args: SearchArgs,
    memory: MemoryService,
    user_id: str | None,
    expander: Expander | None,
    guard: AbstractContextManager[Any],
    notes: bool,
) -> dict[str, Any]:
    from openclaw_cli.memory.inject import recall

    found, _warnings = recall(
        memory, args.query, args.limit, user_id, expander=expander, lock=guard, notes=notes
    )
    hits = [{"id": hit.record.id, "category": hit.record.category, "text": hit.record.l0} for hit in found]
    with guard:
        memory.record_hits([hit["id"] for hit in hits])  # recalled by the model: an FSRS review
    return {"results": hits}


def _session_search(args: SessionSearchArgs, search: SessionSearch) -> dict[str, Any]:
    found = search(args.query, args.limit)
    keep = ("sessionKey", "index", "role", "sender", "ts", "text", "score", "kind")
    return {"results": [{k: hit[k] for k in keep} for hit in found["results"]], "warnings": found["warnings"]}


def _add(args: AddArgs, memory: MemoryService, user_id: str | None) -> dict[str, Any]:
    """Through the write path, like every other writer: a changed value is never dropped as a
    duplicate, and what is not stored says what it matched and why, so the model can tell the person."""
    from openclaw_cli.identity.persons import ANONYMOUS_REASON
    from openclaw_cli.memory.writing.candidate import Candidate
    from openclaw_cli.memory.writing.write_path import write_memories

    if user_id is None:
        return {"error": f"not stored: {ANONYMOUS_REASON}"}
    candidate = Candidate(
        l0=args.text,
        category=args.category,
        user_id=user_id,
        attribute=args.attribute,
        source={"kind": "agent-tool"},
    )
    [outcome] = write_memories(memory, [candidate])
    if outcome.action == "skipped":
        return {"error": f"not stored: {outcome.reason}"}
    result: dict[str, Any] = {"id": outcome.record_id, "action": outcome.action, "reason": outcome.reason}
    if outcome.action == "duplicate":
        result["stored"] = None
        result["matched"] = memory.get(outcome.record_id).l0 if outcome.record_id else None
    else:
        result["stored"] = args.text
    return result


def _forget(args: ForgetArgs, memory: MemoryService, user_id: str | None) -> dict[str, Any]:
    from openclaw_cli.memory.store.records import validate_record_id

    record_id = validate_record_id(args.id)
    if not may_touch(memory, record_id, user_id):
        return {"error": f"no memory {record_id} of this person"}  # another's: not even its existence
    record = memory.delete(record_id)
    return {"deleted": record.id, "text": record.l0}


def may_touch(memory: MemoryService, record_id: str, user_id: str | None) -> bool:
    """Whether the person `user_id` may forget the memory: their own, or the agent's (shared by design)."""
    from openclaw_cli.core.errors import NotFound

    try:
        record = memory.get(record_id)
    except NotFound:
        return True  # the delete itself says it does not exist
    return record.scope == "agent" or (user_id is not None and record.user_id == user_id)
