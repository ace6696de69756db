"""`openclaw memory add`: one memory through the write path, or many with --batch through the bulk
loader; a memory already stored is not stored twice. Two commands behind one verb: add_cmd checks the
arguments and hands TEXT to _add_one_cmd and --batch to _add_batch_cmd."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from openclaw_cli.cli import common
from openclaw_cli.cli.memory import helpers as memory_common
from openclaw_cli.cli.progress import progress_bar
from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.core.input_lines import text_cap

if TYPE_CHECKING:
    from collections.abc import Iterator

    from openclaw_cli.memory.service import MemoryService
    from openclaw_cli.memory.store.records import MemoryRecord

JsonOpt = memory_common.JsonOpt
UserOpt = memory_common.UserOpt


ADD_EPILOG = (
    "Examples:\n\n  "
    "openclaw memory add 'prefers dark mode in every editor' -c preference\n\n  "
    "openclaw memory add 'works as a nurse at St Mary' -c profile --attribute job\n\n  "
    "echo '我喜欢喝咖啡' | openclaw memory add - -c preference --user lin\n\n  "
    "openclaw memory add --batch memories.jsonl --json"
)


def register(app: typer.Typer) -> None:
    app.command("add", epilog=ADD_EPILOG)(add_cmd)


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
    if batch is not None:
        _add_batch_cmd(batch, category, scope, as_json)
    else:
        assert text is not None
        _add_one_cmd(text, category, scope, user, l1, l2, record_id, attribute, as_json)


def _add_batch_cmd(batch: str, category: str, scope: str, as_json: bool) -> None:
    """`memory add --batch FILE`: every line validated first, then stored in bulk."""
    # What bulk embedding needs loads first, while only this thread runs (use_m3/segmenter.py); then the
    # models, before the imports that follow (the record model, the store: ~40 ms), which then overlap
    # the build of the model sessions instead of preceding it.
    read: list[str] | None = None
    if batch == "-":  # read (a line no record could fill refused) before any model loads
        read = memory_common.read_lines("-", memory_common.record_cap())
    loading = memory_common.start_bulk_loads(batch, None if read is None else len(read))
    from openclaw_cli.memory.writing.candidate import Candidate  # noqa: F401 (loaded while the models build)
    from openclaw_cli.memory.writing.write_path import write_memories  # noqa: F401

    memory_common.one_category(category)
    memory_common.scopes(scope)
    with memory_common.service(fast_start=False) as service:  # a batch keeps the faster tokenizer
        memory_common.announce_model_preparation(service)
        if loading:
            service.preload_embedder()  # the models load while the input is read and validated
        _add_batch(service, batch, as_json, read)


def _add_one_cmd(
    text: str,
    category: str,
    scope: str,
    user: str | None,
    l1: str | None,
    l2: str | None,
    record_id: str | None,
    attribute: str | None,
    as_json: bool,
) -> None:
    """`memory add TEXT`: one memory through the write path (dedup, merge by attribute)."""
    from openclaw_cli.memory.writing.candidate import Candidate
    from openclaw_cli.memory.writing.write_path import write_memories

    memory_common.one_category(category)
    memory_common.scopes(scope)
    if attribute is not None:
        from openclaw_cli.memory.writing.dedup import KEYED_CATEGORIES

        if category not in KEYED_CATEGORIES:
            raise typer.BadParameter(
                f"--attribute keys a {' or '.join(KEYED_CATEGORIES)} fact; add -c profile", param_hint="--attribute"
            )
    # One text: load the models for a fast start (same vectors).
    with memory_common.service(fast_start=True) as service:
        memory_common.announce_model_preparation(service)
        from openclaw_cli.identity.persons import author_of

        user = author_of(user, scope, common.state().settings)  # the CLI's user is the assistant's owner
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
