"""`openclaw memory note`: append to the agent's workspace Markdown (today's log, or MEMORY.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import typer

from openclaw_cli.cli import common

NOTE_EPILOG = """Examples:

  openclaw memory note 'deployed v2.3 to staging; rollback plan in PR 342'

  openclaw memory note --durable 'Lin prefers answers in Chinese'

  git log -1 --format=%s | openclaw memory note -
"""


def note_cmd(
    text: Annotated[str, typer.Argument(help="The note; '-' reads stdin.")],
    durable: Annotated[
        bool,
        typer.Option("--durable", help="Append to MEMORY.md (curated, long-term) instead of today's log."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help=common.JSON_HELP)] = False,
) -> None:
    """Append a note to today's log (memory/YYYY-MM-DD.md in the workspace), or to MEMORY.md.

    The workspace is agents/<agent>/workspace unless the agent's agents.list entry names one
    (`workspace`) or memory.workspace is set. Notes are indexed into
    `memory search` (as `note` results shown as path:lines) at the next search or `memory index`.
    """
    from openclaw_cli.core.input_lines import text_cap
    from openclaw_cli.memory.workspace.files import MAX_NOTE_CHARS, append_note

    st = common.state()
    written = append_note(
        st.home,
        st.agent,
        st.agent_settings.memory,
        common.read_text_arg(text, text_cap(MAX_NOTE_CHARS)),
        durable=durable,
        now=datetime.now().astimezone(),  # the log's day is the user's local day
    )
    if as_json:
        common.emit_json({"path": str(written.path), "file": written.name, "line": written.line})
    else:
        common.echo(f"noted in {written.path}:{written.line}")


def register(app: typer.Typer) -> None:
    """Add the workspace commands to the `memory` group (cli/memory/commands.py calls this once)."""
    app.command("note", epilog=NOTE_EPILOG)(note_cmd)
    from openclaw_cli.cli.memory import (  # notes show|edit: sealed (security.encryptWorkspace) or plain
        notes as memory_notes,
    )

    memory_notes.register(app)
