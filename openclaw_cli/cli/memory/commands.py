"""`openclaw memory`: add, find, inspect and maintain long-term memory.

This module holds the group and the commands on single memories (add, get, list, delete, history); the
memory_*.py modules beside it register the rest, memory_common.py holds what they share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from openclaw_cli.cli import common
from openclaw_cli.cli.memory import (
    edit as memory_edit,
)
from openclaw_cli.cli.memory import (
    extract as memory_extract,
)
from openclaw_cli.cli.memory import (
    helpers as memory_common,
)
from openclaw_cli.cli.memory import (
    inject as memory_inject,
)
from openclaw_cli.cli.memory import (
    maintenance as memory_maintenance,
)
from openclaw_cli.cli.memory import (
    purge as memory_purge,
)
from openclaw_cli.cli.memory import (
    reassign as memory_reassign,
)
from openclaw_cli.cli.memory import (
    search as memory_search,
)
from openclaw_cli.cli.memory import (
    workspace as memory_workspace,
)
from openclaw_cli.cli.memory.transfer import (
    backend as memory_backend,
)
from openclaw_cli.cli.memory.transfer import (
    backup as memory_backup,
)
from openclaw_cli.cli.memory.transfer import (
    portability as memory_portability,
)
from openclaw_cli.cli.progress import progress_bar
from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.core.input_lines import text_cap

if TYPE_CHECKING:
    from collections.abc import Iterator

    from openclaw_cli.memory.service import MemoryService
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


@app.command(
    "add",
    epilog=(
        "Examples:\n\n  "
        "openclaw memory add 'prefers dark mode in every editor' -c preference\n\n  "
        "openclaw memory add 'works as a nurse at St Mary' -c profile --attribute job\n\n  "
        "echo '我喜欢喝咖啡' | openclaw memory add - -c preference --user lin\n\n  "
        "openclaw memory add --batch memories.jsonl --json"
    ),
)
def add_cmd(
    text: Annotated[str | None, typer.Argument(help="The memory (one line, L0); '-' reads stdin.")] = None,
    category: Annotated[
        str,
        typer.Option("--category", "-c", help="Category.", autocompletion=memory_common.complete_categories),
    ] = "note",
    scope: Annotated[
        str, typer.Option("--scope", help="user or agent.", autocompletion=memory_common.complete_scopes)
    ] = "user",
    user: UserOpt = None,
    l1: Annotated[str | None, typer.Option("--l1", help="Detail (L1).")] = None,
    l2: Annotated[str | None, typer.Option("--l2", help="Verbatim source (L2).")] = None,
    record_id: Annotated[str | None, typer.Option("--id", help="Use this id instead of a new one.")] = None,
    attribute: Annotated[
        str | None,
        typer.Option(
            "--attribute",
            "-a",
            help="What a profile fact is about (job, city): a new value replaces the old one, kept in history.",
        ),
    ] = None,
    batch: Annotated[
        str | None,
        typer.Option("--batch", help="JSON Lines file of records ('-' = stdin); see the man page."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Store a memory, or many with --batch; a memory already stored is not stored twice.

    A text whose normalised words (case, width, spacing and punctuation aside) match a live memory of the
    same user and scope is a duplicate: nothing is stored, the existing memory counts as reviewed, and the
    command says which one it duplicates (exit 0). A single TEXT of a category that merges (profile,
    preference, lesson, insight) is also compared by meaning with the nearest memories of that category:
    a near-certain duplicate is reported the same way, anything less certain is stored (without a model,
    nothing is merged or dropped on a guess).

    A profile fact given an --attribute (job, city) replaces the same person's old value of it: the
    memory keeps its id, and the old value stays in `memory history`.

    --batch reads one JSON object per line: {"text", "category", "scope", "userId", "l1", "l2", "id",
    "createdAt", "source", "attribute"}. The whole input is validated first: a malformed line (named by its number)
    stores nothing. Lines whose id already exists are skipped and exact duplicates are counted, so a
    rerun, with ids or without, stores nothing new; two lines with the same id are refused.
    """
    if (text is None) == (batch is None):
        raise typer.BadParameter("give TEXT or --batch FILE, not both or neither")
    # What bulk embedding needs loads first, while only this thread runs (use_m3_segmenter.py); then the
    # models, before the imports that follow (the record model, the store: ~40 ms), which then overlap
    # the build of the model sessions instead of preceding it.
    read: list[str] | None = None
    if batch == "-":  # read (a line no record could fill refused) before any model loads
        read = memory_common.read_lines("-", memory_common.record_cap())
    loading = batch is not None and memory_common.start_bulk_loads(batch, None if read is None else len(read))
    from openclaw_cli.memory.writing.candidate import Candidate
    from openclaw_cli.memory.writing.write_path import write_memories

    memory_common.one_category(category)
    memory_common.scopes(scope)
    if attribute is not None and batch is None:
        from openclaw_cli.memory.writing.dedup import KEYED_CATEGORIES

        if category not in KEYED_CATEGORIES:
            raise typer.BadParameter(
                f"--attribute keys a {' or '.join(KEYED_CATEGORIES)} fact; add -c profile", param_hint="--attribute"
            )
    # One text: load the models for a fast start (same vectors); a batch keeps the faster tokenizer.
    with memory_common.service(fast_start=batch is None) as service:
        memory_common.announce_model_preparation(service)
        if batch is not None:
            if loading:
                service.preload_embedder()  # the models load while the input is read and validated
            _add_batch(service, batch, as_json, read)
            return
        assert text is not None
        if user is None and scope == "user":
            from openclaw_cli.identity.persons import owner_id

            user = owner_id(common.state().settings)  # the CLI's user is the assistant's owner
        limit = text_cap(common.state().agent_settings.memory.max_text_chars)
        candidate = Candidate(
            common.read_text_arg(text, limit),
            category,
            l1,
            l2,
            scope,
            user,
            attribute=attribute,
            record_id=record_id,
        )
        [outcome] = write_memories(service, [candidate])
        record = service.get(outcome.record_id) if outcome.action == "added" and outcome.record_id else None
    _render_added(outcome, record, as_json)


def _render_added(outcome: Any, record: MemoryRecord | None, as_json: bool) -> None:
    from openclaw_cli.core.errors import Conflict

    if outcome.action == "skipped":
        # A text that failed validation (empty, too long) says what is wrong with it; otherwise the id
        # given with --id is taken.
        raise outcome.error or Conflict(outcome.reason, hint="choose another --id")
    if record is not None and record.vector_status == "pending":
        common.warn(f"the vector is pending ({outcome.reason}); run `openclaw memory index` later")
    if as_json:
        body = record.public_dict() if record is not None else {}
        common.emit_json(
            {**body, "action": outcome.action, "id": outcome.record_id, "reason": outcome.reason}
        )
    elif outcome.action == "added":
        beside = f" ({outcome.reason})" if outcome.existing_id else ""
        common.echo(f"added {outcome.record_id}{beside}")
    elif outcome.action == "merged":
        common.echo(f"updated {outcome.record_id}: {outcome.reason}")
    else:
        common.echo(f"{outcome.action}: {outcome.reason}; nothing new stored (kept {outcome.record_id})")


def _add_batch(service: MemoryService, source: str, as_json: bool, read: list[str] | None) -> None:
    from openclaw_cli.memory.portability.batch import parse_add_lines
    from openclaw_cli.memory.writing.write_path import replaces_by_attribute

    label = "stdin" if source == "-" else source
    every = parse_add_lines(
        read if read is not None else memory_common.read_lines(source, memory_common.record_cap()), label
    )
    # A keyed fact ("attribute": "job") replaces the person's old value, with a history row: the write
    # path does that; the bulk loader only adds. Checked first too, so a bad line still stores nothing.
    keyed = [(number, item) for number, item in every if replaces_by_attribute(item)]
    items = [(number, item) for number, item in every if not replaces_by_attribute(item)]
    for number, item in keyed:
        try:
            service.build_record(item)
        except InvalidInput as exc:
            raise InvalidInput(f"{label} line {number}: {exc.message}", hint="nothing was stored") from exc
    service.expect_passages(len(items))
    records: list[MemoryRecord] = []

    def built() -> Iterator[MemoryRecord]:
        # One at a time: the models embed the first records while the later ones are checked.
        for number, item in items:
            try:
                records.append(service.build_record(item))
            except InvalidInput as exc:
                raise InvalidInput(
                    f"{label} line {number}: {exc.message}", hint="nothing was stored"
                ) from exc
            yield records[-1]

    with progress_bar("embedding and storing", len(every)) as advance:
        report = service.add_many(built(), progress=advance)
        lines = {record.id: number for (number, _), record in zip(items, records, strict=True)}
        replaced = _add_keyed(service, keyed, report, lines)
        advance(len(keyed))
    if report.warning:
        common.warn(report.warning)
    summary = {
        "added": len(report.ids),
        "replaced": sum(1 for _, _, old in replaced if old),
        "duplicate": len(report.duplicates),
        "skipped": len(report.skipped),
        "pendingVectors": report.pending_vectors,
    }
    if as_json:
        duplicates = [{"line": lines[new], "duplicateOf": old} for new, old in report.duplicates]
        replacements = [{"line": number, "id": rid, "old": old} for number, rid, old in replaced if old]
        common.emit_json(
            {
                **summary,
                "ids": report.ids,
                "skippedIds": report.skipped,
                "duplicates": duplicates,
                "replacements": replacements,
            }
        )
    else:
        changed = f"replaced {summary['replaced']} changed values, " if summary["replaced"] else ""
        common.echo(
            f"added {summary['added']}, {changed}{summary['duplicate']} duplicates of stored memories, "
            f"skipped {summary['skipped']} existing, {report.pending_vectors} vectors pending"
        )
        # What each line not stored matched, so nobody has to guess which of their lines were dropped.
        for number, record_id, old in replaced:
            if old:
                common.echo(f'  line {number}: replaced the old value "{old}" of {record_id}')
        for new, old in report.duplicates:
            kept = service.get(old)
            common.echo(f'  line {lines[new]}: same words as {old} "{kept.l0}"; nothing new stored')
        for taken in report.skipped:
            common.echo(f"  line {lines[taken]}: a memory with id {taken!r} already exists; skipped")


def _add_keyed(
    service: MemoryService, keyed: list[tuple[int, Any]], report: Any, lines: dict[str, int]
) -> list[tuple[int, str, str | None]]:
    """Write the keyed lines through the write path, into `report` as the bulk lines are (`lines`: the
    report's ids to line numbers); (line, id, the old value it replaced or None) per line."""
    from openclaw_cli.memory.writing.write_path import candidate_of, write_memories

    replaced: list[tuple[int, str, str | None]] = []
    for number, item in keyed:  # one at a time, in order: a later line about the same fact wins
        [outcome] = write_memories(service, [candidate_of(item)])
        record_id = outcome.record_id or item.record_id or f"line-{number}"
        before = None
        if outcome.action == "merged":
            updates = [row for row in service.history(record_id) if row.get("action") == "update"]
            before = (updates[-1].get("old") or {}).get("l0") if updates else None
        elif outcome.action == "added":
            report.ids.append(record_id)
        elif outcome.action == "duplicate":
            report.duplicates.append((f"line-{number}", record_id))
            lines[f"line-{number}"] = number
        else:
            report.skipped.append(record_id)
        lines.setdefault(record_id, number)
        replaced.append((number, record_id, before))
    return replaced


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
