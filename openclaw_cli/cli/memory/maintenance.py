"""`openclaw memory status` and `openclaw memory index`: what a store holds, and keeping its indexes
whole (for cron: `openclaw memory index --check`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from openclaw_cli.cli import common
from openclaw_cli.cli.memory import helpers as memory_common
from openclaw_cli.cli.memory.helpers import JsonOpt
from openclaw_cli.cli.progress import progress_bar, spinner


def status_cmd(as_json: JsonOpt = False) -> None:
    """Counts by scope and category, persons, embedder, pending vectors, index health and file sizes.

    `persons` lists every person (user id) with memories this agent reads, with their number of live
    user-scope memories; with memory.shareUserMemory each database also lists its own.
    """
    with memory_common.service() as service:
        status = service.status()
    if as_json:
        common.emit_json(status)
        return
    configured = status["configuredEmbedder"]
    dims = configured["dimensions"] or "dimensions unknown"
    common.echo(
        f"agent {status['agent']}; configured embedder: {configured['provider']}:{configured['model']} ({dims})"
    )
    if status["embedderProblem"]:
        common.warn(status["embedderProblem"])
    if not status["databases"]:
        common.echo("no memory database yet")
    else:
        common.echo("persons: " + _persons(status["persons"]))
    for db in status["databases"]:
        common.echo(f"{db['path']}: {db['records']} memories, {db['pendingVectors']} vectors pending")
        for scope, cats in db["byScope"].items():
            common.echo(f"  {scope}: " + ", ".join(f"{c} {n}" for c, n in cats.items()))
        if len(status["databases"]) > 1:
            common.echo("  persons: " + _persons(db["persons"]))
        common.echo(f"  embedder: {common.human(db['embedder'])}")
        profile = db["searchProfile"]
        common.echo(
            f"  search profile: {profile['name']}"
            + ("" if profile["tuned"] else " (not tuned for this embedder)")
        )
        common.echo("  index: " + ("ok" if db["index"]["ok"] else "; ".join(db["index"]["problems"])))
        if "server" in db:  # memory.backend postgres
            server = db["server"]
            common.echo(
                f"  server: PostgreSQL {server['serverVersion']}, pgvector {server['pgvectorVersion']}, "
                f"schema v{server['schemaVersion']}; rows: "
                + ", ".join(f"{t} {n}" for t, n in server["rows"].items())
            )
        else:
            common.echo("  files: " + ", ".join(f"{n} {s} B" for n, s in db["files"].items()))


def _persons(listed: list[dict[str, Any]]) -> str:
    from openclaw_cli.memory.store.persons import Person, summary

    return summary([Person(p["userId"], p["memories"]) for p in listed])


def _daily_backups() -> list[dict[str, Any]]:
    """Today's copy of every memory database under the home, for cron (memory.backup.keepDays)."""
    from datetime import date

    from openclaw_cli.memory.upkeep.recovery import daily_backups

    st = common.state()
    done = daily_backups(st.home, st.settings.memory.backup.keep_days, date.today())
    for backup in done:
        if backup.problem:
            common.warn(backup.problem)
    return [backup.to_dict() for backup in done]


def index_cmd(
    check_only: Annotated[
        bool, typer.Option("--check", help="Only verify; exit 1 if something is wrong.")
    ] = False,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Re-embed everything and swap the new index in.")
    ] = False,
    as_json: JsonOpt = False,
    quiet: common.QuietOpt = False,
) -> None:
    """Sync the workspace Markdown, then verify and repair the keyword and vector indexes, and rebuild the
    session transcript index (`openclaw session search`) from the session files, embedding every turn.

    For cron, `openclaw memory index --check` only verifies (the transcript index too), and exits 1 when
    something is wrong; it also writes today's backup of every memory database when there is none yet
    (memory.backup.keepDays). --quiet prints only what is wrong (or, repairing, what was repaired).
    """
    if check_only and rebuild:
        raise typer.BadParameter("--check and --rebuild exclude each other")
    from openclaw_cli.cli import job_lock

    if check_only and not job_lock.take("indexCheck", common.state().agent, "memory index --check", quiet=quiet):
        return
    with memory_common.service() as service:
        transcripts = service.transcripts()
        if check_only:
            reports = [r.to_dict() for r in service.check_indexes()]
            turns = transcripts.check().to_dict()
            transcripts.close()
            ok = all(r["ok"] for r in reports) and turns["ok"]
            backups = _daily_backups()
            if as_json:
                common.emit_json({"ok": ok, "databases": reports, "transcripts": turns, "backups": backups})
            else:
                for r in reports:
                    if not (quiet and r["ok"]):
                        common.echo(f"{r['path']}: " + ("ok" if r["ok"] else "; ".join(r["problems"])))
                said = (
                    "ok" if turns["built"] else "not built yet (the first search or `memory index` builds it)"
                )
                if not (quiet and turns["ok"]):
                    common.echo("transcripts: " + (said if turns["ok"] else "; ".join(turns["problems"])))
            if not ok:
                raise typer.Exit(1)
            return
        total = (
            service.live_count() if rebuild else service.pending_count()
        ) + service.workspace_file_count()
        with progress_bar("re-embedding" if rebuild else "filling vectors", total) as advance:
            synced, done = service.index(rebuild=rebuild, progress=advance)
        with spinner("indexing session transcripts"):
            turns = transcripts.repair()
        transcripts.close()
    outcome = [r.to_dict() for r in done]
    workspace = None if synced is None else synced.to_dict()
    if as_json:
        common.emit_json(
            {"rebuilt" if rebuild else "repaired": outcome, "workspace": workspace, "transcripts": turns}
        )
        return
    if workspace is not None and (workspace["files"] or workspace["removed"] or workspace["problems"]):
        for problem in workspace["problems"]:
            common.warn(problem)
        common.echo(common.human({k: v for k, v in workspace.items() if k != "problems"}))
    for r in outcome:
        if r.get("warning"):
            common.warn(r["warning"])
        counts = {k: v for k, v in r.items() if k != "warning"}
        if not quiet or any(counts.values()):  # quiet: only a store whose indexes needed work
            common.echo(common.human(counts))
    if quiet:
        return  # the transcript index is rebuilt from the session files every time: no news
    if not outcome:
        common.echo("no memory database yet")
    if turns["turns"]:
        common.echo(f"transcripts: {turns['turns']} turns indexed, {turns['embedded']} embedded")


def register(app: typer.Typer) -> None:
    """Add these commands to the `memory` group, in the order of its --help (cli/memory/commands.py calls this once)."""
    app.command(
        "status",
        epilog=(
            "Examples:\n\n  "
            "openclaw memory status\n\n  "
            "openclaw memory status --json | jq '.databases[0].pendingVectors'\n\n  "
            "openclaw memory status --json | jq -r '.persons[] | \"\\(.userId) \\(.memories)\"'"
        ),
    )(status_cmd)
    app.command(
        "index",
        epilog=(
            "Examples:\n\n  "
            "openclaw memory index --check   # cron: exit 1 when something is wrong\n\n  "
            "openclaw memory index --check --quiet   # cron: prints nothing when all is well\n\n  "
            "openclaw memory index            # fill pending vectors, drop orphans and tombstones\n\n  "
            "openclaw memory index --rebuild  # re-embed after changing memory.embedding"
        ),
    )(index_cmd)
