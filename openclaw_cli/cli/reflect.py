"""`openclaw reflect`: distil insights from the memories not yet reflected on (seed 000 §7)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from openclaw_cli.cli import common
from openclaw_cli.cli.progress import progress_bar

if TYPE_CHECKING:
    from openclaw_cli.memory.reflect.run import ReflectReport

app = typer.Typer(
    invoke_without_command=True,
    subcommand_metavar="",  # a command without subcommands: `openclaw reflect [OPTIONS]`
    epilog="Examples:\n\n  openclaw reflect\n\n  openclaw reflect --if-due    # for cron\n\n"
    "  openclaw reflect --dry-run --category preference --json",
)


@app.callback()
def reflect_cmd(
    ctx: typer.Context,
    if_due: Annotated[
        bool, typer.Option("--if-due", help="Only run when due; otherwise exit 0 quietly (for cron).")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Ask the model and show the insights; change nothing.")
    ] = False,
    category: Annotated[
        str | None,
        typer.Option(
            "--category", "-c", help="Only this category: profile, preference, event, case, lesson."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help=common.JSON_HELP)] = False,
    quiet: common.QuietOpt = False,
) -> None:
    """Distil insights from unreflected memories with the chat model (llm.model).

    Unreflected memories are grouped by category; the model gives at most memory.reflection.maxInsights
    insights per group, each with a confidence and its evidence; they are stored as `insight`.

    A run is due at memory.reflection.minUnreflected unreflected memories (50), or when some wait and
    memory.reflection.intervalHours (24) have passed since the last run. The evidence's stability is
    halved and insights start at 3x its mean; every memory reflected on is marked. Nothing is changed
    when the model is missing or fails. Only one run at a time (a lock under the agent's memory directory).
    """
    from openclaw_cli.identity.persons import owner_id
    from openclaw_cli.memory.reflect.run import REFLECTABLE, run_reflection, unreflected_count
    from openclaw_cli.memory.service import MemoryService

    if ctx.invoked_subcommand is not None:
        return
    if category is not None and category not in REFLECTABLE:
        raise typer.BadParameter(
            f"cannot reflect on {category!r}: use one of {', '.join(REFLECTABLE)}", param_hint="'--category'"
        )
    st = common.state()
    service = MemoryService(st.home, st.agent, st.agent_settings.memory, owner=owner_id(st.agent_settings))
    try:
        total = 0 if if_due else unreflected_count(service, category)
        with progress_bar("reflecting", total) as advance:
            report = run_reflection(
                service,
                st.agent_settings,
                lock_dir=st.home.memory_dir(st.agent),
                dry_run=dry_run,
                category=category,
                if_due=if_due,
                progress=advance,
            )
    finally:
        service.close()
    # Not run (not due, nothing waiting) is no news with --if-due or --quiet; insights written are.
    _render(report, as_json, quiet=(if_due or quiet) and not report.ran)


def _render(report: ReflectReport, as_json: bool, *, quiet: bool) -> None:
    if as_json:
        common.emit_json(report.to_dict())
        return
    if quiet:
        return
    if not report.ran:
        common.echo(f"nothing to do: {report.reason}")
        return
    verb = "would write" if report.dry_run else "wrote"
    for outcome in report.groups:
        group = outcome.group
        who = f", user {group.user_id}" if group.user_id else f", {group.scope} memory"
        common.echo(
            f"{group.category}{who}: {_count(len(group.records), 'memory', 'memories')}, "
            f"{_count(len(outcome.insights), 'insight')}"
        )
        for insight in outcome.insights:
            action = "" if report.dry_run else f" ({insight.action})"
            common.echo(f"  [{insight.confidence:.2f}] {insight.candidate.l0}{action}")
            common.echo(f"        evidence: {', '.join(insight.evidence)}")
        for skipped in outcome.skipped:
            common.warn(f"skipped insight {skipped['insight']!r}: {skipped['reason']}")
        if outcome.ignored_evidence:
            common.warn(f"ignored evidence the model made up: {', '.join(outcome.ignored_evidence)}")
        for note in outcome.notes:
            common.warn(note)
    written = sum(len(o.insights) for o in report.groups) if report.dry_run else report.insights_written
    marked = "" if report.dry_run else f", {_count(report.reflected, 'memory', 'memories')} marked reflected"
    common.echo(
        f"{verb} {_count(written, 'insight')} from {_count(report.model_calls, 'model call')}{marked}"
    )


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"
