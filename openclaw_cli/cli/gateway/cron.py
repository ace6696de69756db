"""`openclaw cron list|run`: the gateway's own schedule (scheduler/): its jobs, their last and next runs,
and one job run now by the running gateway."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from openclaw_cli.cli import common
from openclaw_cli.core.errors import OpenclawError

app = typer.Typer(
    help="The gateway's scheduled jobs (cron.jobs): session sweep, daily backup, index check, reflection.",
    no_args_is_help=True,
    epilog="Examples:\n\n  openclaw cron list\n\n  openclaw cron list --json\n\n  openclaw cron run sweep",
)
JsonOpt = Annotated[bool, typer.Option("--json", help=common.JSON_HELP)]
GRACE = 60.0  # past the job's own timeout, for the gateway to stop it and answer


def _token() -> str | None:
    from openclaw_cli.gateway.client.reads import home_token

    st = common.state()
    return home_token(st.home, st.env.get("OPENCLAW_GATEWAY_TOKEN"))


@app.command("list", epilog="Examples:\n\n  openclaw cron list\n\n  openclaw cron list --json")
def list_cmd(as_json: JsonOpt = False) -> None:
    """Each job with its schedule, last run, result, duration and next run.

    The next runs are the running gateway's; without one, the last runs it recorded are shown and
    nothing is scheduled (system cron may still call the commands shown)."""
    from openclaw_cli.gateway.client.reads import ask_gateway

    st = common.state()
    answer = ask_gateway(st.home, _token(), "cron.list", {})
    if answer.answered and isinstance(answer.payload, dict):
        enabled, rows = bool(answer.payload.get("enabled")), list(answer.payload.get("jobs", []))
    else:
        from openclaw_cli.scheduler.service import offline_rows

        enabled, rows = st.settings.cron.enabled, offline_rows(st.home, st.settings.cron)
    if as_json:
        common.emit_json({"gateway": answer.via, "reason": answer.reason, "enabled": enabled, "jobs": rows})
        return
    state = answer.via or "not running" + (f" ({answer.reason})" if answer.reason else "")
    common.echo(f"gateway: {state}; cron.enabled={str(enabled).lower()}")
    for row in rows:
        common.echo(_line(row))


def _line(row: dict[str, Any]) -> str:
    last = "never run" if row["lastRun"] is None else f"last {row['lastRun']} {row['result']}"
    took = "" if row["durationSeconds"] is None else f" in {row['durationSeconds']:.1f} s"
    running = "  (running now)" if row.get("running") else ""
    why = f"  ({row['detail']})" if row.get("detail") else ""
    schedule = row["schedule"] or "off"
    return f"{row['job']:<11} {schedule:<14} {last}{took}{why}  next {row['nextRun'] or '-'}{running}"


@app.command("run", epilog="Examples:\n\n  openclaw cron run sweep\n\n  openclaw cron run index-check --json")
def run_cmd(
    job: Annotated[str, typer.Argument(help="sweep, backup, indexCheck (index-check) or reflect.")],
    as_json: JsonOpt = False,
) -> None:
    """Run one job now, in the running gateway (after the job it is running, if any); exit 1 if it fails.

    Without a running gateway this is an error: run the job's own command instead (`openclaw cron list`
    shows it), as system cron does."""
    from openclaw_cli.gateway.client.reads import ask_gateway
    from openclaw_cli.scheduler.jobs import job_named
    from openclaw_cli.scheduler.service import job_settings

    st = common.state()
    found = job_named(job)
    timeout = job_settings(st.settings.cron, found.name).timeout_seconds
    answer = ask_gateway(st.home, _token(), "cron.run", {"job": found.name}, reply_timeout=timeout + GRACE)
    if not answer.answered or not isinstance(answer.payload, dict):
        why = answer.reason or "no gateway is running for this home"
        raise OpenclawError(
            f"cannot run {found.name} in the gateway: {why}",
            hint=f"start it with `openclaw gateway run`, or run `{' '.join(found.command(None))}` yourself",
        )
    run = answer.payload
    if as_json:
        common.emit_json(run)
    else:
        detail = f" ({run['detail']})" if run.get("detail") else ""
        common.echo(f"{run['job']}: {run['result']} in {run['durationSeconds']:.1f} s{detail}")
    if run.get("result") != "ok":
        raise typer.Exit(1)
