"""`openclaw memory inject`: show the memory block the agent would get, for troubleshooting."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from openclaw_cli.cli import common
from openclaw_cli.cli.memory import helpers as memory_common

EPILOG = (
    "Examples:\n\n  openclaw memory inject --query 'which editor theme should I pick?'\n\n"
    "  openclaw memory inject --session agent:main:main --json\n\n"
    "  openclaw memory inject --query 咖啡 --user lin\n\n"
    "  openclaw memory inject --query 'would a steak dinner suit me?' --expand"
)


def register(app: typer.Typer) -> None:
    """Add `inject` to the `memory` group (cli/memory/commands.py calls this once)."""
    app.command("inject", epilog=EPILOG)(inject_cmd)


def inject_cmd(
    query: Annotated[
        str | None, typer.Option("--query", "-q", help="Build the block for this text ('-' reads stdin).")
    ] = None,
    session: Annotated[
        str | None,
        typer.Option("--session", "-s", help="Build it from this session's recent messages (key or id)."),
    ] = None,
    user: Annotated[
        str | None,
        typer.Option(
            "--user", "-u", help="The person the block is for (default: the owner); never another's."
        ),
    ] = None,
    expand: memory_common.ExpandOpt = False,
    as_json: Annotated[bool, typer.Option("--json", help=common.JSON_HELP)] = False,
    local: memory_common.LocalOpt = False,
) -> None:
    """Print the Markdown memory block that would be added to the system prompt.

    One line per memory, `- [category, recorded YYYY-MM-DD] text` (the Chinese template when the
    conversation is Chinese), the best few with their detail, within memory.inject.memoryMaxTokens.
    It holds the person's own memories and the agent's, never another person's.
    Read-only: unlike the agent's own recall, it does not count as a review of the memories.
    When a gateway runs for this home it builds the block (same output); --local builds it here.
    Without --expand the block comes from the local search alone, whatever model is configured.
    """
    if (query is None) == (session is None):
        raise typer.BadParameter("give --query TEXT or --session KEY, not both or neither")
    text = common.read_text_arg(query) if query is not None else None
    block = None
    if not local:
        params: dict[str, Any] = {"query": text} if text is not None else {"session": session}
        params |= ({"userId": user} if user else {}) | ({"expand": True} if expand else {})
        block = memory_common.through_gateway("memory.inject", params)
    if block is None:
        block = _inject_here(text, session, user, expand)
    if as_json:
        common.emit_json(block)
        return
    for warning in block["warnings"]:
        common.warn(warning)
    common.echo(block["text"] or "(no memories to inject)")


def _inject_here(text: str | None, session: str | None, user: str | None, expand: bool) -> dict[str, Any]:
    """The block built in this process (no gateway, or --local): MemoryBlock.to_dict."""
    from openclaw_cli.identity.claims import claimed_person
    from openclaw_cli.identity.persons import owner_id
    from openclaw_cli.memory.inject import build_memory_block, session_messages
    from openclaw_cli.sessions.store import SessionStore

    st = common.state()
    expander = memory_common.asked_expander() if expand else None
    messages = None
    if session is not None:
        messages = session_messages(SessionStore(st.home, st.agent), session)
    # --user is claimed as the gateway claims `userId` (the owner is the default, never a typed name)
    person = claimed_person(user, st.settings, "--user") if user else owner_id(st.settings)
    with memory_common.service(one_shot=True) as service:
        memory_common.announce_model_preparation(service)
        block = build_memory_block(
            service,
            st.agent_settings.memory.inject,
            query=text,
            messages=messages,
            user_id=person,
            record_hits=False,
            expander=expander,
        )
    return block.to_dict()
