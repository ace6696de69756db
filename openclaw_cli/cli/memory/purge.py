"""`openclaw memory purge`: forget one user for good (seed 000 §12, right to be forgotten)."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Annotated

import typer

from openclaw_cli.cli import common
from openclaw_cli.core.errors import InvalidInput

if TYPE_CHECKING:
    from openclaw_cli.forget.everywhere import ForgetReport

PURGE_EPILOG = """Examples:

  openclaw memory purge --user alice --yes

  openclaw memory purge --user alice --all-agents --sessions --yes --json
"""
JsonOpt = Annotated[bool, typer.Option("--json", help=common.JSON_HELP)]


def purge_cmd(
    user: Annotated[str, typer.Option("--user", "-u", help="The person to forget (a name or channel:peer).")],
    yes: Annotated[bool, typer.Option("--yes", help="Confirm: this cannot be undone.")] = False,
    all_agents: Annotated[
        bool, typer.Option("--all-agents", help="Purge every agent's store, not only this agent's.")
    ] = False,
    sessions: Annotated[
        bool,
        typer.Option(
            "--sessions",
            help="Also delete the person's sessions and redact their messages in shared ones.",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Forget one person: every memory, its history and its vectors, with no byte left behind.

    Covers this agent's store and the shared one; --all-agents covers every agent's. That on every
    backend the home knows of: the configured one, the SQLite files under the home and the PostgreSQL
    server of memory.postgres.dsn whichever is configured, and the source of each migrate-backend (a
    server that cannot be reached is named and the exit status is 1). Memories others
    (or the agent) drew from the person's messages go too, and so do the person's entries in the gateway
    journal, their `openclaw chat` prompt history and lines of logs and exports under the home that
    quote them. With --sessions, the person's own sessions are deleted and their messages in shared
    sessions (and the replies to them) are redacted in place; summaries built from those are dropped.
    When a gateway runs for this home, it does the purge itself. Without --all-agents, agents that still
    hold the person are named and the exit status is 1; so are files left as they are. A person nobody
    knows is an error that lists the known ones.
    """
    if not yes:
        raise InvalidInput(
            f"refusing to purge all memories of {user!r} without --yes", hint="add --yes to confirm"
        )
    from openclaw_cli.forget.client import purge
    from openclaw_cli.forget.everywhere import ForgetRequest, resolve_person

    st = common.state()
    person = resolve_person(user, st.settings)
    request = ForgetRequest(person, st.agent, all_agents=all_agents, sessions=sessions)
    report = purge(st.home, st.settings, request, token=st.env.get("OPENCLAW_GATEWAY_TOKEN"))
    if as_json:
        common.emit_json(report.to_dict())
    else:
        common.echo(_summary(report, sessions))
        for store in report.stores:
            common.echo(
                f"  {store['store']}: {store['purged']} memories, {store['historyRows']} history rows"
            )
        if report.disk_note:
            common.echo(f"note: {report.disk_note}")
        for other in report.lookalikes:
            common.echo(
                f"note: {other!r} may be the same person under another id and was not purged; purge it too with "
                f"`openclaw memory purge --user {shlex.quote(other)} --yes`, or link both in session.identityLinks"
            )
    if report.warning:
        if report.unreachable:
            hint = report.unreachable[0]["hint"]
        elif report.not_covered:
            hint = f"openclaw memory purge --user {user} --all-agents --yes"
        else:  # only files left: the workspace's notes (and what cannot be cleaned) are never rewritten
            hint = "remove those lines yourself: a purge never rewrites the workspace's Markdown notes"
        common.fail(report.warning, hint=hint)


def _summary(report: ForgetReport, sessions: bool) -> str:
    # A migration's source holds copies of the same memories: the count is of rows, per store below.
    stores = f" in {len(report.stores)} stores" if len(report.stores) > 1 else ""
    parts = [f"purged {report.memories} memories of {report.user}{stores}"]
    if report.derived:
        parts.append(f"{report.derived} drawn from their messages")
    if sessions:
        parts.append(f"{report.sessions} sessions")
        parts.append(
            f"{report.redacted_messages} messages redacted in {report.redacted_sessions} shared sessions"
        )
    if report.journal:
        parts.append(f"{report.journal} journal entries")
    if report.files:
        parts.append(f"{len(report.files)} other files cleaned")
    via = " (by the running gateway)" if report.via == "gateway" else ""
    return ", ".join(parts) + via


def register(app: typer.Typer) -> None:
    """Add `purge` to the `memory` group (cli/memory/commands.py calls this once)."""
    app.command("purge", epilog=PURGE_EPILOG)(purge_cmd)
