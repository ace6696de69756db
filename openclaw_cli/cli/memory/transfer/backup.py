"""`openclaw memory backup | restore | recover`: copies of the memory databases, putting one back, and
salvaging a damaged one (memory/upkeep/recovery.py)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from openclaw_cli.cli import common
from openclaw_cli.cli.memory import helpers as memory_common
from openclaw_cli.core.errors import InvalidInput, OpenclawError, UsageError

if TYPE_CHECKING:
    from openclaw_cli.memory.upkeep.recovery import RecoverReport

BACKUP_EPILOG = """Examples:

  openclaw memory backup                      # a copy beside each database, in memory/backups/

  openclaw memory backup -o ~/memory-2026-05-01.sqlite

  openclaw memory backup --quiet              # for cron: prints nothing unless it fails

  openclaw memory backup --list --json | jq -r '.[].backups[0].path'
"""
RESTORE_EPILOG = """Examples:

  openclaw memory backup --list

  openclaw memory restore ~/.openclaw/agents/main/memory/backups/daily-2026-05-01.sqlite --yes
"""
RECOVER_EPILOG = """Examples:

  openclaw memory recover          # what a salvage would bring back; nothing is changed

  openclaw memory recover --yes --json | jq '{salvaged: .[0].salvaged, lost: .[0].lostRecords}'
"""
LISTED_LOST = 20
JsonOpt = Annotated[bool, typer.Option("--json", help=common.JSON_HELP)]
SharedOpt = Annotated[
    bool, typer.Option("--shared", help="The shared user store (memory.shareUserMemory), not the agent's.")
]


def _now() -> datetime:
    return datetime.now(UTC)


def backup_cmd(
    output: Annotated[
        str | None, typer.Option("--output", "-o", help="Write the copy to FILE (replaced if it exists).")
    ] = None,
    shared: SharedOpt = False,
    list_only: Annotated[
        bool, typer.Option("--list", help="List the backups instead of writing one.")
    ] = False,
    daily: Annotated[
        bool,
        typer.Option(
            "--daily",
            help="Today's copy of every memory database under the home, if none yet; older ones past "
            "memory.backup.keepDays are deleted (the gateway's daily backup job).",
        ),
    ] = False,
    as_json: JsonOpt = False,
    quiet: common.QuietOpt = False,
) -> None:
    """Copy the memory database with SQLite's online backup API (safe while others write).

    Without -o, every database the agent reads gets a copy in `memory/backups/` beside it; -o copies the
    agent's own database (with --shared, the shared user store) to FILE. Daily copies
    are also written by `openclaw session sweep` and `openclaw memory index --check` (kept
    memory.backup.keepDays days, like the databases restores replaced), and a copy is made before every
    schema migration. --list shows them with their ages, and the files a restore or a salvage kept beside
    the database.
    """
    memory_common.only_on_files("backup")
    from openclaw_cli.memory.upkeep import recovery

    if list_only and output is not None:
        raise UsageError("--list and --output exclude each other")
    if daily:
        _daily(list_only or output is not None or shared, as_json, quiet)
        return
    with memory_common.service() as service:
        if list_only:
            listed = recovery.list_all(service, _now())
            if as_json:
                common.emit_json(listed)
            else:
                _render_list(listed)
            return
        written = recovery.backup_now(service, None if output is None else Path(output), shared, _now())
    if as_json:
        common.emit_json({"written": [str(p) for p in written]})
        return
    if quiet:  # for cron: the copy is the news only when it fails, which raises
        return
    for path in written:
        common.echo(f"backed up to {path}")


def _daily(other_options: bool, as_json: bool, quiet: bool) -> None:
    """`--daily`: what `session sweep` writes too, on its own, under the job lock the schedule shares."""
    from openclaw_cli.cli import job_lock
    from openclaw_cli.memory.upkeep.recovery import daily_backups
    from openclaw_cli.scheduler.lock import WHOLE_HOME

    if other_options:
        raise UsageError("--daily covers every database of the home: give it without --list, -o or --shared")
    if not job_lock.take("backup", WHOLE_HOME, "memory backup --daily", quiet=quiet):
        return
    st = common.state()
    done = daily_backups(st.home, st.settings.memory.backup.keep_days, date.today())  # local, as sweep's
    problems = [backup.problem for backup in done if backup.problem]
    if as_json:
        common.emit_json({"backups": [backup.to_dict() for backup in done]})
    elif not quiet:
        common.echo(f"{sum(1 for backup in done if backup.written)} daily backup(s) written")
    if problems:
        raise OpenclawError("; ".join(problems), hint="see `openclaw memory backup --list`")


def _render_list(listed: list[dict[str, Any]]) -> None:
    for entry in listed:
        common.echo(f"{entry['database']}: {len(entry['backups'])} backup(s)")
        for item in entry["backups"]:
            age = _age(item["ageSeconds"])
            common.echo(
                f"  {item['modified']}  {age:>9}  {item['kind']:<8} {item['size']:>12} B  {item['path']}"
            )


def _age(seconds: int) -> str:
    """How old a copy is, in the largest whole unit: `3 d old`, `5 h old`, `12 min old`."""
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit} old"
    return f"{seconds} s old"


def restore_cmd(
    file: Annotated[str, typer.Argument(help="The copy to restore (a backup or `memory backup -o` file).")],
    shared: SharedOpt = False,
    yes: Annotated[bool, typer.Option("--yes", help="Confirm replacing the database.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Replace the agent's memory database with a copy, atomically; the replaced one is kept beside it.

    The copy is checked before anything changes: integrity_check, then its whole schema (every table,
    column, index, trigger and virtual table, and user_version) against what this version's migrations
    build; a damaged, foreign or altered file is refused and the database is left as it was. The copy's
    stored vectors are checked against their texts (norms, and a sample re-embedded), and those that
    disagree are re-embedded before it goes in. Refused while this home's gateway runs: stop it first.
    """
    memory_common.only_on_files("restore")
    from openclaw_cli.memory.upkeep.recovery import restore_from

    if not file:
        raise InvalidInput("the file name is empty", hint="give the backup file to restore")
    if not yes:
        _preview(file, shared, as_json)
        common.fail("nothing was restored: add --yes to replace the memory database with this copy")
    with memory_common.service() as service:
        report = restore_from(service, Path(file), shared, _now())
    if report.warning:
        common.warn(report.warning)
    if as_json:
        common.emit_json(report.to_dict())
        return
    common.echo(f"restored {report.records} memories into {report.path} from {report.source}")
    if report.vectors_reembedded:
        common.echo(
            f"{report.vectors_reembedded} stored vectors were not their text's: re-embedded"
            + (
                f" ({report.vectors_pending} still pending: run `openclaw memory index`)"
                if report.vectors_pending
                else ""
            )
        )
    if report.kept:
        common.echo(f"the replaced database is kept as {report.kept}")


def _preview(file: str, shared: bool, as_json: bool) -> None:
    """What the copy would put in (counts, dates, schema version, embedder) and what it would replace."""
    from openclaw_cli.memory.upkeep.recovery import target_db
    from openclaw_cli.memory.upkeep.restore_preview import preview

    with memory_common.service() as service:
        found = preview(target_db(service, shared), Path(file))
    if as_json:
        common.emit_json({**found.to_dict(), "restored": False})
        return
    categories = ", ".join(f"{n} {c}" for c, n in sorted(found.by_category.items())) or "none"
    common.echo(f"{found.source} holds {found.records} memories ({categories}) of {found.persons} persons")
    if found.oldest:
        common.echo(f"  recorded {found.oldest[:10]} to {found.newest[:10] if found.newest else '?'}")
    common.echo(f"  schema {found.migration or 'unknown'}; vectors by {found.embedder or 'no embedder yet'}")
    now = "no database" if found.current_records is None else f"{found.current_records} memories"
    common.echo(f"it would replace {found.database} ({now}), which is kept beside it")


def recover_cmd(
    yes: Annotated[
        bool, typer.Option("--yes", help="Replace each damaged database with its salvage.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Salvage a damaged memory database: every record that still reads, the rest from the newest backup.

    The keyword index and the vectors are rebuilt from the records, and the damaged file is kept beside
    the new one (`memory.sqlite.damaged-TIME`). Reports how many memories were salvaged, restored from the
    backup and lost, with the lost ids where the id index, the backup or the history knows them. Without
    --yes nothing is changed: it only says what a salvage would bring back. `openclaw doctor --fix` runs it
    when a database's records are damaged. Refused while this home's gateway runs.
    """
    memory_common.only_on_files("recover")
    from openclaw_cli.memory.upkeep.recovery import recover

    with memory_common.service() as service:
        reports = recover(service, _now(), apply=yes)
    if as_json:
        common.emit_json([r.to_dict() for r in reports])
        return
    if not reports:
        common.echo("no memory database yet")
    for report in reports:
        _render_recovery(report)


def _render_recovery(report: RecoverReport) -> None:
    if report.damage is None:
        common.echo(f"{report.database}: no damage found, left as it is")
        return
    done = report.salvage
    verb = "salvaged" if report.applied else "would salvage"
    source = f" (from {done.backup})" if done.backup else " (no backup found)"
    common.echo(f"{report.database}: {report.damage}")
    common.echo(
        f"  {verb} {done.salvaged} memories; {len(done.restored)} restored from a backup{source}; "
        f"{len(done.lost)} lost"
    )
    for entry in done.lost[:LISTED_LOST]:
        keywords = f"  ({entry['keywords'][:60]})" if entry.get("keywords") else ""
        common.echo(f"  lost: {entry['id']}{keywords}")
    if len(done.lost) > LISTED_LOST:
        common.echo(f"  ... and {len(done.lost) - LISTED_LOST} more (see --json)")
    if not done.ids_complete:
        common.warn("the id index is damaged too: more memories may be lost than are named")
    if report.applied:
        common.echo(f"  the damaged file is kept as {report.kept}")
        if report.vectors_pending:
            common.echo(f"  {report.vectors_pending} vectors pending: `openclaw memory index` fills them")
    else:
        common.echo("  nothing was changed: run `openclaw memory recover --yes` to replace the database")
    if report.warning:
        common.warn(report.warning)


def register(app: typer.Typer) -> None:
    """Add `backup`, `restore` and `recover` to the `memory` group (cli/memory/commands.py calls this once)."""
    app.command("backup", epilog=BACKUP_EPILOG)(backup_cmd)
    app.command("restore", epilog=RESTORE_EPILOG)(restore_cmd)
    app.command("recover", epilog=RECOVER_EPILOG)(recover_cmd)
