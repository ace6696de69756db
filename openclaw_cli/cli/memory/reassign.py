"""`openclaw memory reassign`: give one person's memories to another (e.g. from `default` to `alice`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from openclaw_cli.cli import common
from openclaw_cli.cli.memory import helpers as memory_common
from openclaw_cli.core.errors import UsageError

if TYPE_CHECKING:
    from openclaw_cli.memory.writing.reassign import ReassignReport

REASSIGN_EPILOG = """Examples:

  openclaw memory reassign --from default --to alice --dry-run

  openclaw memory reassign --from default --to telegram:123 --where session=agent:main:main --yes

  openclaw memory reassign --from default --to alice --where since=2026-03-01 --where category=preference

  openclaw memory reassign --from default --to alice --all-agents --yes --json
"""
PREVIEW_LINES = 20
JsonOpt = Annotated[bool, typer.Option("--json", help=common.JSON_HELP)]


def reassign_cmd(
    from_user: Annotated[str, typer.Option("--from", help="The person whose memories move (a user id).")],
    to_user: Annotated[str, typer.Option("--to", help="The person they move to (a user id).")],
    where: Annotated[
        list[str] | None,
        typer.Option(
            "--where",
            "-w",
            help="Only memories matching FIELD=VALUE (repeatable; all must match): session=KEY_OR_ID, "
            "category=CATEGORY, since=YYYY-MM-DD (created that UTC day or later), id=MEMORY_ID.",
        ),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would move; change nothing.")] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Move without asking.")] = False,
    all_agents: Annotated[
        bool,
        typer.Option("--all-agents", help="Every agent's store, not only this agent's (and the shared one)."),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Move memories from one person to another, with a `reassign` history row for each.

    Covers this agent's store, and the shared one when memory.shareUserMemory is on; --all-agents covers
    every store. Only live user-scope memories move, each store in one transaction; their vectors and the
    names they introduce move with them, so `memory search --user TO` finds them. Without --yes (or
    --dry-run) it asks on a terminal and refuses when standard input is not one. `openclaw doctor` names
    the memories conversations wrote under `default`.
    """
    from openclaw_cli.memory.writing.reassign import ReassignRequest, reassign

    st = common.state()
    request = ReassignRequest(from_user, to_user, tuple(where or ()), all_agents, dry_run)
    confirm = None if yes else _confirm
    with memory_common.service() as service:
        report = reassign(
            st.home,
            st.agent,
            service.settings.share_user_memory,
            request,
            lambda path: service.store(path, create=False),
            confirm,
            agents=service.stored_agents(),
        )
    if as_json:
        common.emit_json(report.to_dict())
    else:
        _render(report)
    if report.cancelled:
        common.fail("nothing was moved", hint="answer y to move them, or pass --yes")


def _confirm(report: ReassignReport) -> bool:
    """Ask on a terminal; refuse (exit 2) when nobody can answer."""
    if not sys.stdin.isatty():
        raise UsageError(
            f"refusing to move {report.matched} memories of {report.from_user!r} without --yes "
            "(standard input is not a terminal)",
            hint="add --yes to move them; --dry-run lists them",
        )
    _preview(report, err=True)
    question = f"Move {report.matched} memories of {report.from_user!r} to {report.to_user!r}?"
    return bool(typer.confirm(question, default=False, err=True))


def _preview(report: ReassignReport, *, err: bool = False) -> None:
    from openclaw_cli.memory.writing.reassign import describe

    shown = 0
    for store in report.stores:
        if not store.records:
            continue
        typer.echo(f"{store.agent} ({store.path}):", err=err)
        for record in store.records:
            if shown == PREVIEW_LINES:
                typer.echo(f"  ... and {report.matched - shown} more (--json lists them all)", err=err)
                return
            typer.echo(f"  {describe(record)}", err=err)
            shown += 1


def _render(report: ReassignReport) -> None:
    for agent in report.not_covered:
        common.warn(
            f"agent {agent}'s store also holds memories of {report.from_user!r}; --all-agents covers it"
        )
    if report.matched == 0:
        matched = f" matching {' and '.join(report.where)}" if report.where else ""
        common.echo(f"no memories of {report.from_user}{matched}: nothing to move")
        return
    if report.cancelled:
        return
    if report.dry_run:
        common.echo(f"would move {report.matched} memories of {report.from_user} to {report.to_user}:")
        _preview(report)
        return
    stores = ", ".join(f"{s.agent} {len(s.records)}" for s in report.stores if s.records)
    common.echo(f"moved {report.matched} memories of {report.from_user} to {report.to_user} ({stores})")


def register(app: typer.Typer) -> None:
    """Add `reassign` to the `memory` group (cli/memory/commands.py calls this once)."""
    app.command("reassign", epilog=REASSIGN_EPILOG)(reassign_cmd)
