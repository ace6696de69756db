"""`openclaw memory purge`: forget one user for good (seed 000 §12, right to be forgotten)."""

from __future__ import annotations

from typing import Annotated

import typer

from openclaw_cli.cli import common
from openclaw_cli.errors import InvalidInput

PURGE_EPILOG = """Examples:

  openclaw memory purge --user alice --yes

  openclaw memory purge --user alice --all-agents --sessions --yes --json
"""
JsonOpt = Annotated[bool, typer.Option("--json", help=common.JSON_HELP)]


def purge_cmd(
    user: Annotated[str, typer.Option("--user", "-u", help="The user whose memories are removed.")],
    yes: Annotated[bool, typer.Option("--yes", help="Confirm: this cannot be undone.")] = False,
    all_agents: Annotated[
        bool, typer.Option("--all-agents", help="Purge every agent's store, not only this agent's.")
    ] = False,
    sessions: Annotated[
        bool, typer.Option("--sessions", help="Also delete the user's session transcripts.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Forget one user: every memory, its history and its vectors, with no byte left behind.

    Covers this agent's store and the shared one; --all-agents covers every agent's. Without it, agents
    whose stores still hold the user's memories are named and the exit status is 1.
    """
    if not yes:
        raise InvalidInput(
            f"refusing to purge all memories of {user!r} without --yes", hint="add --yes to confirm"
        )
    from openclaw_cli.cli.memory import _service

    with _service() as service:
        report = service.purge_user(user, all_agents=all_agents, sessions=sessions)
    if as_json:
        common.emit_json(report.to_dict())
    else:
        sessions_done = f" and {report.sessions} sessions" if sessions else ""
        common.echo(f"purged {report.memories} memories{sessions_done} of {user}")
    if report.warning:
        common.fail(report.warning, hint=f"openclaw memory purge --user {user} --all-agents --yes")


def register(app: typer.Typer) -> None:
    """Add `purge` to the `memory` group (cli/memory.py calls this once)."""
    app.command("purge", epilog=PURGE_EPILOG)(purge_cmd)
