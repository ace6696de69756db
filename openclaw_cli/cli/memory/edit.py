"""`openclaw memory edit`: correct a memory's text, category or attribute, with a history row
(memory/edit.py, which the Control UI's edit form calls too)."""

from __future__ import annotations

from typing import Annotated

import typer

from openclaw_cli.cli import common
from openclaw_cli.cli.memory import helpers as memory_common

EDIT_EPILOG = """Examples:

  openclaw memory edit mem-0193... --text "Alice lives in Lyon"

  openclaw memory edit mem-0193... --category profile --attribute city --json

  openclaw memory edit mem-0193... --attribute ""
"""
JsonOpt = Annotated[bool, typer.Option("--json", help=common.JSON_HELP)]


def edit_cmd(
    record_id: Annotated[str, typer.Argument(help="Memory id.")],
    text: Annotated[str | None, typer.Option("--text", "-t", help="The memory's new text (L0).")] = None,
    category: Annotated[
        str | None,
        typer.Option(
            "--category", "-c", help="Its new category.", autocompletion=memory_common.complete_categories
        ),
    ] = None,
    attribute: Annotated[
        str | None,
        typer.Option("--attribute", help='What a profile fact is about (e.g. city); "" removes it.'),
    ] = None,
    reason: Annotated[str | None, typer.Option("--reason", help="Why, kept in the history row.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Correct a memory in place: same id, an `update` row in `memory history` holding the old value.

    A new text is embedded again (or left pending for `memory index` when no embedder is available).
    Lines of the workspace Markdown (MEMORY.md, daily logs) are edited in their files, not here.
    """
    from openclaw_cli.memory.edit import MemoryEdit, edit_memory

    limit = common.state().agent_settings.memory.max_text_chars
    with memory_common.service() as service:
        record, changed = edit_memory(
            service, MemoryEdit(record_id, text, category, attribute, reason), limit
        )
    if as_json:
        common.emit_json({**record.public_dict(), "changed": changed})
    elif changed:
        common.echo(f"edited {record.id}: {record.l0}")
    else:
        common.echo(f"{record.id} already says that: nothing changed")


def register(app: typer.Typer) -> None:
    """Add `edit` to the `memory` group (cli/memory/commands.py calls this once)."""
    app.command("edit", epilog=EDIT_EPILOG)(edit_cmd)
