"""`openclaw memory notes show|edit`: read and edit the workspace Markdown, sealed (encryptWorkspace) or plain."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from openclaw_cli.cli import common

GIVE_UP = (
    "With security.encryptWorkspace on, MEMORY.md and the daily logs are sealed on disk (AES-256-GCM): no "
    "other editor, grep or sync tool can read them any more; these commands are the way to read and "
    "edit them, and they need the passphrase (or `openclaw security unlock`)."
)
app = typer.Typer(
    help="Read and edit the workspace notes (MEMORY.md, SHARED.md, daily logs), sealed or plain.",
    no_args_is_help=True,
    epilog="Examples:\n\n  openclaw memory notes show\n\n  openclaw memory notes edit today\n\n"
    "  openclaw memory notes show 2026-03-24 --json\n\n" + GIVE_UP,
)
WhichArg = Annotated[
    str, typer.Argument(help="MEMORY.md (default), SHARED.md, today, or a day's log as YYYY-MM-DD.")
]


def _note(which: str):  # type: ignore[no-untyped-def]
    from openclaw_cli.memory.workspace.files import workspace_dir
    from openclaw_cli.security.workspace_notes import resolve

    st = common.state()
    root = workspace_dir(st.home, st.agent, st.settings.memory)
    return resolve(root, which, datetime.now().astimezone().date())


@app.command(
    "show",
    epilog="Examples:\n\n  openclaw memory notes show\n\n  openclaw memory notes show today --json\n\n"
    + GIVE_UP,
)
def show_cmd(
    which: WhichArg = "MEMORY.md",
    as_json: Annotated[bool, typer.Option("--json", help=common.JSON_HELP)] = False,
) -> None:
    """Print a workspace note file's text, decrypted when it is sealed."""
    from openclaw_cli.security.workspace_notes import show

    note = _note(which)
    text = show(note)
    if as_json:
        common.emit_json({"name": note.name, "path": str(note.path), "sealed": note.sealed, "text": text})
    else:
        typer.echo(text, nl=False)


def _run_editor(path: Path) -> int:
    """$VISUAL, else $EDITOR, else vi, on `path` (the variable may hold arguments: `code -w`)."""
    import shlex
    import subprocess

    env = common.state().env
    command = shlex.split(env.get("VISUAL") or env.get("EDITOR") or "vi")
    try:
        return subprocess.call([*command, str(path)])
    except FileNotFoundError:
        common.fail(f"the editor {command[0]!r} was not found", hint="set EDITOR to an editor you have")


@app.command(
    "edit",
    epilog="Examples:\n\n  openclaw memory notes edit\n\n  EDITOR=nano openclaw memory notes edit today\n\n"
    + GIVE_UP,
)
def edit_cmd(which: WhichArg = "MEMORY.md", quiet: common.QuietOpt = False) -> None:
    """Edit a workspace note file in $EDITOR and write it back atomically (sealed again if it was sealed).

    The text is put in a 0600 temporary file in a private directory ($XDG_RUNTIME_DIR/openclaw, else the
    home's run/), removed afterwards; nothing is written when the editor fails or nothing changed.
    """
    from openclaw_cli.cli import passphrase_edge
    from openclaw_cli.security.workspace_notes import edit

    st = common.state()
    note = _note(which)
    changed = edit(note, passphrase_edge.run_dir(st.env, st.home.root), _run_editor)
    if not quiet:
        common.echo(f"{note.name}: {'saved' if changed else 'unchanged'}")


def register(memory_app: typer.Typer) -> None:
    memory_app.add_typer(app, name="notes")
