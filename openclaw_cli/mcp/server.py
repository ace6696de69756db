"""The MCP server itself, on the official SDK's high-level API (`MCPServer`, mcp 2.x; `FastMCP` in 1.x):
six tools, three resources and one prompt over ops.py, for the one person the server acts for.

Arguments are declared with their limits, so each tool's JSON schema tells a model what it may send and
the SDK refuses the rest before a tool runs. Every failure a caller can cause comes back as a tool error
of one line (`OneLineServer`): a domain error's message and hint, an argument's name and what is wrong
with it; a crash says only which tool failed (its traceback goes to the log, on stderr).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from pydantic import Field, ValidationError

import openclaw_cli
from openclaw_cli.core.errors import OpenclawError
from openclaw_cli.core.textcheck import find_bad_text
from openclaw_cli.mcp.ops import MAX_K, SOURCES
from openclaw_cli.mcp.transport import SURROGATE_MARK

if TYPE_CHECKING:
    from openclaw_cli.mcp.ops import McpOps

Category = Literal["profile", "preference", "event", "case", "lesson", "insight", "note"]
Source = Literal["memory", "sessions"]
INSTRUCTIONS = (
    "Long-term memory of one person (openclaw): facts, preferences, events and lessons remembered across "
    "conversations and tools, plus what was said in past chat sessions. Search it before answering "
    "anything personal; store durable facts the person states; never invent ids."
)
RECALL_PROMPT = (
    "Before you answer, recall what you already know about {topic}. Call memory_search with a query "
    'about {topic} (add sources ["memory", "sessions"] when the exact wording of a past conversation '
    "matters). Use what it returns that is relevant (each result has a relevance in [0, 1]), say briefly "
    "what you remembered and how sure it is, and do not claim to remember anything it did not return."
)


class OneLineServer(MCPServer[Any]):
    """MCPServer whose tool errors are one line each, and which refuses text that is not text."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        _refuse_bad_text(arguments)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(f"{name}: {_first_problem(cause)}") from cause
            # the SDK's prefix, said once: `memory_forget: no memory with id ...`
            text = str(exc).removeprefix(f"Error executing tool {name}: ")
            raise ToolError(f"{name}: {' '.join(text.split())}") from cause


def _refuse_bad_text(arguments: dict[str, Any]) -> None:
    for key, value in arguments.items():
        if isinstance(value, str) and SURROGATE_MARK in value:
            raise ToolError(
                f"invalid argument {key}: it holds a lone surrogate (a \\uD800-\\uDFFF escape without its "
                "pair); send the character itself"
            )
    bad = find_bad_text(arguments)
    if bad is not None:
        raise ToolError(f"invalid argument {bad.describe()}")


def _first_problem(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or "arguments"
    more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
    message = " ".join(str(first.get("msg", "invalid")).split())
    return f"invalid argument {where}: {message}{more}"


def _tool_error(exc: OpenclawError) -> ToolError:
    text = " ".join(exc.message.split())
    return ToolError(f"{text}; {' '.join(exc.hint.split())}" if exc.hint else text)


def build_server(ops: McpOps) -> OneLineServer:
    server = OneLineServer(
        "openclaw",
        title="openclaw memory",
        instructions=INSTRUCTIONS,
        version=openclaw_cli.__version__,
        log_level="WARNING",
    )
    _tools(server, ops)
    _resources(server, ops)

    @server.prompt(name="recall", description="Recall what memory holds about a topic before answering.")
    def recall(topic: Annotated[str, Field(description="What the question is about.")]) -> str:
        return RECALL_PROMPT.format(topic=topic)

    return server


def _run(work: Any) -> dict[str, Any]:
    try:
        result: dict[str, Any] = work()
    except OpenclawError as exc:
        raise _tool_error(exc) from exc
    return result


Query = Annotated[str, Field(min_length=1, max_length=2000, description="What to look for, in any words.")]
K = Annotated[int, Field(ge=1, le=MAX_K, description=f"How many results, at most (1-{MAX_K}).")]
MemoryId = Annotated[
    str, Field(min_length=1, max_length=128, description="A memory id, as memory_search returned it.")
]


def _tools(server: OneLineServer, ops: McpOps) -> None:
    @server.tool(
        description="Search the person's long-term memory (facts, preferences, events, lessons, notes) "
        "by meaning and keywords. Results are best first, each with its id, text, relevance in [0, 1], "
        "category, date and, for workspace notes, path:line. sources ['sessions'] (or both) also searches "
        "what was said in past conversations. An empty list means nothing relevant is remembered."
    )
    def memory_search(
        query: Query,
        k: K = 10,
        categories: Annotated[
            list[Category], Field(max_length=7, description="Only these categories (default: all).")
        ] = [],  # noqa: B006 - never mutated; the schema shows the default
        sources: Annotated[
            list[Source], Field(max_length=2, description="memory (default), sessions, or both.")
        ] = ["memory"],  # noqa: B006 - as above
    ) -> dict[str, Any]:
        return _run(lambda: ops.memory_search(query, k, categories, sources or list(SOURCES[:1])))

    @server.tool(
        description="Store one durable fact about the person in long-term memory (one line, in the "
        "person's words or a clear paraphrase). category: profile (who they are; give attribute, e.g. "
        "'city', so a new value replaces the old), preference, event, case, lesson or note. The answer "
        "says whether it was added, merged into an existing memory or already known."
    )
    def memory_add(
        text: Annotated[str, Field(min_length=1, max_length=4000, description="The fact, one line.")],
        category: Annotated[Category, Field(description="What kind of memory it is.")] = "note",
        attribute: Annotated[
            str | None,
            Field(min_length=1, max_length=64, description="For a profile fact: what it is about ('city')."),
        ] = None,
    ) -> dict[str, Any]:
        return _run(lambda: ops.memory_add(text, category, attribute))

    @server.tool(
        description="Forget one memory by its id (from memory_search): it is removed from every index; its "
        "history is kept. Only the person's own memories (and the assistant's shared ones) can be forgotten."
    )
    def memory_forget(id: MemoryId) -> dict[str, Any]:  # noqa: A002 - the argument's name in the schema
        return _run(lambda: ops.memory_forget(id))

    @server.tool(
        description="Every change of one memory (added, updated, merged, deleted), oldest first, with the "
        "old and new text: how a fact came to be what it is."
    )
    def memory_history(id: MemoryId) -> dict[str, Any]:  # noqa: A002 - as above
        return _run(lambda: ops.memory_history(id))

    @server.tool(
        description="Search what was said in past conversations with the person (exact wording, who said "
        "it, when), when long-term memory does not hold it. Each result has its session, message index, "
        "role, date and relevance in [0, 1]."
    )
    def session_search(query: Query, k: K = 10) -> dict[str, Any]:
        return _run(lambda: ops.session_search(query, k))

    @server.tool(
        description="Write a note to the owner's workspace: today's log, or MEMORY.md (curated long-term "
        "notes) when durable is true. Notes are searchable with memory_search (as path:line). For anyone "
        "but the owner the note is stored in their own memory instead, and the answer says so."
    )
    def memory_note(
        text: Annotated[str, Field(min_length=1, max_length=16_000, description="The note (Markdown).")],
        durable: Annotated[bool, Field(description="MEMORY.md instead of today's log.")] = False,
    ) -> dict[str, Any]:
        return _run(lambda: ops.memory_note(text, durable))


def _resources(server: OneLineServer, ops: McpOps) -> None:
    def read(work: Any) -> Any:
        try:
            return work()
        except OpenclawError as exc:
            raise ResourceError(str(_tool_error(exc))) from exc

    @server.resource(
        "memory://MEMORY.md",
        name="MEMORY.md",
        description="The owner's curated long-term notes (read-only; the owner's server only).",
        mime_type="text/markdown",
    )
    def memory_file() -> str:
        text: str = read(lambda: ops.workspace_file("memory"))
        return text

    @server.resource(
        "memory://today",
        name="today's log",
        description="Today's log of notes, memory/YYYY-MM-DD.md (read-only; the owner's server only).",
        mime_type="text/markdown",
    )
    def today_file() -> str:
        text: str = read(lambda: ops.workspace_file("today"))
        return text

    @server.resource(
        "memory://stats",
        name="memory stats",
        description="How many memories the person has, by category, and whether a gateway serves them.",
        mime_type="application/json",
    )
    def stats() -> dict[str, Any]:
        result: dict[str, Any] = read(ops.stats)
        return result
