"""`openclaw memory migrate-backend`: a thin command over memory/portability/backends.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from openclaw_cli.cli import common
from openclaw_cli.cli.memory.helpers import JsonOpt
from openclaw_cli.cli.progress import progress_bar
from openclaw_cli.core.errors import UsageError

if TYPE_CHECKING:
    from openclaw_cli.memory.portability.backends import BackendMove, Mode, StoreMove

EXAMPLES = (
    "openclaw memory migrate-backend --to postgres --dsn postgresql://openclaw@db.internal/memory",
    "openclaw memory migrate-backend --to postgres --dsn postgresql://openclaw@db.internal/memory --switch",
    "openclaw --agent work memory migrate-backend --to postgres --merge --json",
    "openclaw memory migrate-backend --to sqlite --replace --switch",
)


def migrate_backend_cmd(
    to: Annotated[str, typer.Option("--to", help="The backend to move to: postgres or sqlite.")],
    dsn: Annotated[
        str | None,
        typer.Option(
            "--dsn", help="The PostgreSQL server (default: memory.postgres.dsn). Never printed whole."
        ),
    ] = None,
    merge: Annotated[
        bool,
        typer.Option("--merge", help="Into a target that holds memory: add the records (by id) it lacks."),
    ] = False,
    replace: Annotated[
        bool,
        typer.Option("--replace", "--force", help="Into a target that holds memory: empty it first."),
    ] = False,
    switch: Annotated[
        bool,
        typer.Option("--switch", help="Then set memory.backend (and memory.postgres.dsn) in openclaw.json."),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Move this agent's memory (and the shared user store) to the other backend, nothing re-embedded.

    Copies every record with its id, FSRS state and tombstone, the full history, the vectors as stored,
    the people, the workspace files' state and the reflection schedule, from the configured backend
    (memory.backend) to --to. The source is only read and is kept; `memory purge` covers it too (the
    server is recorded in the home, without its password, in memory-servers.json). Each store is written in one transaction and its
    counts are checked before it commits: if anything fails, the target is left as it was.

    A target that already holds memory is refused, unless --merge (add the records whose id it lacks,
    with their history and vectors; keep everything it has) or --replace (empty the target's store, then
    copy; its old records are gone, so export them first if you need them). The shared user store moves
    with the first agent; move the next agents with --merge.

    Without --switch the configuration is not changed: the command to switch is printed.
    """
    from openclaw_cli.memory.portability.backends import Side, plan_move

    if to not in ("postgres", "sqlite"):
        raise typer.BadParameter(f"unknown backend {to!r}: use postgres or sqlite", param_hint="'--to'")
    if merge and replace:
        raise UsageError("--merge and --replace exclude each other", hint="choose one")
    mode: Mode = "merge" if merge else "replace" if replace else "empty"
    st = common.state()
    memory = st.agent_settings.memory
    current = Side(memory.backend, memory.postgres.dsn)
    move = plan_move(st.home, st.agent, current, to, dsn)  # type: ignore[arg-type]  # checked above
    with progress_bar(f"moving to {to}", move.total()) as advance:
        moved = move.run(mode, advance)
    if switch:
        _switch(to, dsn)
    _summary(move, moved, switch, dsn, as_json)


def _switch(to: str, dsn: str | None) -> None:
    from openclaw_cli.config.loading import set_key

    st = common.state()
    if to == "postgres" and dsn:
        set_key(st.home.config_file, "memory.postgres.dsn", dsn, st.env)
    set_key(st.home.config_file, "memory.backend", to, st.env)


# Printed when the DSN held a password: the command above it works as printed, without the password.
PASSWORD_NOTE = (
    "the DSN's password is not printed: keep it in ~/.pgpass or PGPASSWORD, which the PostgreSQL driver reads, "
    "or use --switch next time to write the whole DSN into openclaw.json"
)


def _switch_commands(to: str, dsn: str | None) -> tuple[list[str], str | None]:
    """The commands that switch the configuration, each working as printed (a masked `***` password would
    be taken literally), and what to do about a password they leave out."""
    import shlex

    from openclaw_cli.core.dsn import mask_dsn, strip_password

    commands, note = [], None
    if to == "postgres" and dsn:
        shown = dsn
        if mask_dsn(dsn) != dsn:
            shown, note = strip_password(dsn), PASSWORD_NOTE
        commands.append(f"openclaw config set memory.postgres.dsn {shlex.quote(shown)}")
    commands.append(f"openclaw config set memory.backend {to}")
    return commands, note


def _summary(
    move: BackendMove, moved: list[StoreMove], switched: bool, dsn: str | None, as_json: bool
) -> None:
    commands, note = ([], None) if switched else _switch_commands(move.target.backend, dsn)
    source = move.source.where(move.home, [m.name for m in moved])
    if as_json:
        common.emit_json(
            {
                "from": move.source.describe(),
                "to": move.target.describe(),
                "stores": [m.to_dict() for m in moved],
                "switched": switched,
                "switchCommands": commands,
                "passwordNote": note,
                "sourceKept": source,
            }
        )
        return
    for m in moved:
        kept = f", kept {len(m.kept)} the target held" if m.kept else ""
        common.echo(
            f"{m.name}: moved {m.records} records ({m.tombstones} deleted), {m.vectors} vectors, "
            f"{m.history} history rows, {m.people} people, {m.workspace_files} workspace files{kept}"
        )
    common.echo(
        f"the source was kept as it was ({source}); `openclaw memory purge` covers it as well as the target, "
        "for as long as it exists"
    )
    if switched:
        common.echo(f"memory.backend is now {move.target.backend}")
    else:
        common.echo("the configuration is unchanged; to use the moved memory run:")
        for command in commands:
            common.echo(f"  {command}")
        if note:
            common.echo(note)


def register(app: typer.Typer) -> None:
    """Add the command to the `memory` group (cli/memory/commands.py calls this once)."""
    app.command("migrate-backend", epilog="Examples:\n\n" + "\n\n".join(f"  {line}" for line in EXAMPLES))(
        migrate_backend_cmd
    )
