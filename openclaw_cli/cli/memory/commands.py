"""`openclaw memory`: add, find, inspect and maintain long-term memory.

This module holds the group and the commands on single memories (get, list, delete, history); the modules
beside it register the rest (add.py the first), helpers.py holds what they share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from openclaw_cli.cli import common
from openclaw_cli.cli.memory import add
from openclaw_cli.cli.memory import edit as memory_edit
from openclaw_cli.cli.memory import extract as memory_extract
from openclaw_cli.cli.memory import helpers as memory_common
from openclaw_cli.cli.memory import inject as memory_inject
from openclaw_cli.cli.memory import maintenance as memory_maintenance
from openclaw_cli.cli.memory import purge as memory_purge
from openclaw_cli.cli.memory import reassign as memory_reassign
from openclaw_cli.cli.memory import search as memory_search
from openclaw_cli.cli.memory import workspace as memory_workspace
from openclaw_cli.cli.memory.transfer import backend as memory_backend
from openclaw_cli.cli.memory.transfer import backup as memory_backup
from openclaw_cli.cli.memory.transfer import portability as memory_portability

if TYPE_CHECKING:

    from openclaw_cli.memory.store.records import MemoryRecord

app = typer.Typer(
    help="Long-term memory: records in SQLite with keyword (FTS5) and vector (sqlite-vec) search.",
    no_args_is_help=True,
    epilog="Examples:\n\n  openclaw memory add 'prefers dark mode in every editor' --category preference\n\n"
    "  openclaw memory search 'which colour theme does he like in his editor' --explain\n\n  openclaw memory status --json",
)

# `memory list --limit`: anything larger means "all" (SQLite's LIMIT is a 64-bit integer).
MAX_LIMIT = 2**62
JsonOpt = memory_common.JsonOpt
UserOpt = memory_common.UserOpt
CategoryOpt = memory_common.CategoryOpt


def _record_line(record: MemoryRecord) -> str:
    user = f" user={record.user_id}" if record.user_id else ""
    return f"{record.id}  [{record.category}, {record.created_at:%Y-%m-%d}{user}]  {record.l0}"


add.register(app)  # add, first in `openclaw memory --help`


@app.command(
    "get",
    epilog=(
        "Examples:\n\n  "
        "openclaw memory get mem-0193...\n\n  "
        "openclaw memory get mem-0193... --json | jq .fsrs"
    ),
)
def get_cmd(record_id: Annotated[str, typer.Argument(help="Memory id.")], as_json: JsonOpt = False) -> None:
    """Show one memory with all its fields (L0, L1, L2, FSRS state)."""
    with memory_common.service() as service:
        record = service.get(record_id)
    if as_json:
        common.emit_json(record.public_dict())
        return
    common.echo(_record_line(record))
    for name, value in (("L1", record.l1), ("L2", record.l2)):
        if value:
            common.echo(f"  {name}: {value}")
    fs = record.fsrs
    common.echo(
        f"  scope={record.scope} language={record.language} vector={record.vector_status} "
        f"stability={common.human(fs.stability)} reps={fs.reps}"
    )


@app.command(
    "list",
    epilog=(
        "Examples:\n\n  "
        "openclaw memory list -c preference\n\n  "
        "openclaw memory list --user lin --limit 20 --json"
    ),
)
def list_cmd(
    user: UserOpt = None,
    category: CategoryOpt = None,
    scope: Annotated[
        str | None,
        typer.Option("--scope", help="user or agent.", autocompletion=memory_common.complete_scopes),
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", "-n", min=1, help="At most N records.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """List memories, oldest first, with optional filters."""
    if category is not None:
        memory_common.one_category(category)
    memory_common.scopes(scope)
    if limit is not None and limit > MAX_LIMIT:
        limit = None  # more than any database can hold: no limit (SQLite would overflow on it)
    with memory_common.service() as service:
        records = service.list_records(user_id=user, category=category, scope=scope, limit=limit)
        # Silence read as "this person has no memories" when the id is only spelled differently.
        unknown = service.unknown_person(user) if user is not None and not records else None
    if unknown is not None:
        common.warn(unknown)
    if as_json:
        common.emit_json([r.public_dict() for r in records])
        return
    for record in records:
        common.echo(_record_line(record))


# `search` comes between `list` and `delete` in `openclaw memory --help`.
memory_search.register(app)


@app.command("delete", epilog="Examples:\n\n  openclaw memory delete mem-0193...")
def delete_cmd(
    record_id: Annotated[str, typer.Argument(help="Memory id.")], as_json: JsonOpt = False
) -> None:
    """Remove a memory from every index at once (its old value stays in `memory history`)."""
    with memory_common.service() as service:
        record = service.delete(record_id)
    if as_json:
        common.emit_json({"deleted": record.id})
    else:
        common.echo(f"deleted {record.id}")


@app.command("history", epilog="Examples:\n\n  openclaw memory history mem-0193... --json")
def history_cmd(
    record_id: Annotated[str, typer.Argument(help="Memory id.")], as_json: JsonOpt = False
) -> None:
    """Every add, update, merge, delete and reassign of one memory, with old and new values.

    Works for a memory that is gone too (deleted, its tombstone cleared by `memory index`): the history
    outlives it. An update (a merge of a newer memory) shows what it replaced and why.
    """
    with memory_common.service() as service:
        entries = service.history(record_id)
    if as_json:
        common.emit_json(entries)
        return
    for entry in entries:
        value = entry["new"] or entry["old"] or {}
        line = f"{entry['at']}  {entry['action']:<8} {value.get('l0', '')}"
        if entry["action"] == "update" and entry["old"]:
            line += f"  (was: {entry['old'].get('l0', '')}; {entry['reason'] or 'updated'})"
        elif entry["action"] == "reassign" and entry["old"] and entry["new"]:
            line += f"  (person: {entry['old'].get('userId')} -> {entry['new'].get('userId')})"
        common.echo(line)


# The commands of the modules beside this one, registered in the order of `openclaw memory --help`.
memory_edit.register(app)
memory_maintenance.register(app)  # status, index
memory_extract.register(app)
memory_inject.register(app)
memory_purge.register(app)
memory_reassign.register(app)
memory_workspace.register(app)
memory_backup.register(app)
memory_portability.register(app)  # export, import, migrate
memory_backend.register(app)  # migrate-backend
