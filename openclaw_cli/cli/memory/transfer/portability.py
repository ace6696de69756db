"""`openclaw memory export | import | migrate`: thin commands over memory/portability/transfer.py and migrate.py."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, BinaryIO

import typer

from openclaw_cli.cli import common
from openclaw_cli.cli.memory import helpers as memory_common
from openclaw_cli.cli.memory.helpers import JsonOpt
from openclaw_cli.cli.progress import progress_bar
from openclaw_cli.core.errors import InvalidInput, UsageError
from openclaw_cli.core.input_lines import copy_lines

if TYPE_CHECKING:
    from openclaw_cli.memory.portability.transfer import InvalidExport
    from openclaw_cli.security.export_file import SealingWriter


def _epilog(*lines: str) -> str:
    return "Examples:\n\n" + "\n\n".join(f"  {line}" for line in lines)


@contextmanager
def _output(target: str, fmt: str) -> Iterator[BinaryIO]:
    """Standard output for '-', otherwise a private file that appears only when the export completes
    (output_file.py: a bad name is a one-line error before anything is read or written)."""
    if target == "-":
        yield sys.stdout.buffer
        return
    from openclaw_cli.core.output_file import output_file

    with output_file(target, "--output", f"memories.{fmt}") as handle:
        yield handle


def export_cmd(
    scope: Annotated[str, typer.Option("--scope", help="user, agent or all.")] = "all",
    user: Annotated[str | None, typer.Option("--user", "-u", help="Only this user's memories.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="json (one document) or jsonl (streamed).")] = "json",
    output: Annotated[str, typer.Option("--output", "-o", help="File to write; '-' is stdout.")] = "-",
    encrypt: Annotated[
        bool,
        typer.Option(
            "--encrypt",
            help="Seal the export under a passphrase (OPENCLAW_EXPORT_PASSPHRASE, OPENCLAW_PASSPHRASE, or "
            "typed twice); `memory import` reads it with the same passphrase.",
        ),
    ] = False,
) -> None:
    """Write this agent's memories to a portable file: {version, agent, exportedAt, records}.

    Each record carries its id, scope, user, category, content {l0, l1, l2}, FSRS state, createdAt and
    updatedAt; no embeddings (the importing side re-embeds). JSON Lines streams any size in constant
    memory: a header line, one line per record and an end line with the count, so that import can warn
    about a stream cut short; grep, jq -c and cat of such streams import too. A file given with -o appears
    only once the export is complete (a missing directory is created; a device or pipe is written to).
    """
    from openclaw_cli.memory.portability.transfer import count_exportable, export_memories

    if fmt not in ("json", "jsonl"):
        raise typer.BadParameter(f"unknown format {fmt!r}: use json or jsonl", param_hint="'--format'")
    if scope != "all":
        memory_common.scopes(scope)
    chosen = None if scope == "all" else scope
    passphrase = _export_passphrase(new=True) if encrypt else None
    with _output(output, fmt) as raw, memory_common.service() as service:
        sealing = None if passphrase is None else _sealing(raw, passphrase)
        out = raw if sealing is None else sealing
        total = count_exportable(service, chosen, user)
        with progress_bar("exporting", total) as advance:
            count = export_memories(service, out, kind=fmt, scope=chosen, user_id=user, progress=advance)  # type: ignore[arg-type]
        if sealing is not None:
            sealing.finish()
    if output != "-":
        common.echo(f"exported {count} memories to {output}")


def _export_passphrase(*, new: bool) -> str:
    """An export's passphrase, read here at the edge: OPENCLAW_EXPORT_PASSPHRASE, OPENCLAW_PASSPHRASE, or a
    terminal prompt (twice when it is being set)."""
    from openclaw_cli.cli import passphrase_edge

    st = common.state()
    given = st.env.get("OPENCLAW_EXPORT_PASSPHRASE") or st.env.get("OPENCLAW_PASSPHRASE")
    if given:
        return given
    if new:
        return passphrase_edge.new_passphrase({}, Path("the export"))
    import getpass

    if not sys.stdin.isatty():
        raise InvalidInput(
            "the export is encrypted and no passphrase was given",
            hint="set OPENCLAW_EXPORT_PASSPHRASE to the passphrase it was exported with",
        )
    return getpass.getpass("export passphrase: ")


def _sealing(raw: BinaryIO, passphrase: str) -> SealingWriter:
    from openclaw_cli.security.export_file import SealingWriter

    return SealingWriter(raw, passphrase)


@contextmanager
def _input_path(source: str) -> Iterator[tuple[Path, str]]:
    """The file to read, opened through `_plain_input` when it is an encrypted export."""
    with _raw_input_path(source) as (path, name):
        from openclaw_cli.security.export_file import is_sealed_export, unseal_export

        if not is_sealed_export(path):
            yield path, name
            return
        home = common.state().home
        passphrase = _export_passphrase(new=False)
        # The plain records exist only for the import's two passes, in the home's private cache.
        with tempfile.NamedTemporaryFile(dir=home.ensure(home.cache_dir)) as spool:
            unseal_export(path, passphrase, spool)  # type: ignore[arg-type]
            spool.flush()
            yield Path(spool.name), name


@contextmanager
def _raw_input_path(source: str) -> Iterator[tuple[Path, str]]:
    """The file to read and how to name it: stdin is copied to a private temporary file first, because
    an import reads its input twice (validate everything, then write) and must not hold a large export
    in memory."""
    if source != "-":
        yield Path(source), source
        return
    home = common.state().home
    # Inside the home's private cache, not /tmp: the input is the user's memories.
    with tempfile.NamedTemporaryFile(dir=home.ensure(home.cache_dir)) as spool:
        # A line no record could fill stops the copy at once, not after the whole pipe is on disk.
        copy_lines(sys.stdin.buffer, spool, memory_common.record_cap(), "standard input")
        spool.flush()
        yield Path(spool.name), "standard input"


def _report_invalid(error: InvalidExport, as_json: bool) -> None:
    if as_json:
        common.emit_json(
            {"ok": False, "invalid": [e.to_dict() for e in error.errors], "warnings": error.warnings}
        )
        return
    for warning in error.warnings:
        common.warn(warning)
    for problem in error.errors:
        common.warn(problem.describe())


def import_cmd(
    source: Annotated[str, typer.Argument(help="An export file (JSON or JSON Lines); '-' reads stdin.")],
    on_conflict: Annotated[
        str,
        typer.Option(
            "--on-conflict", help="skip (keep the stored memory) or replace (old value to history)."
        ),
    ] = "skip",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Check and count; write nothing.")] = False,
    skip_invalid: Annotated[
        bool, typer.Option("--skip-invalid", help="Import the valid records even when others are invalid.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Import memories from an export: validated first, then written in one transaction.

    Every record is checked before anything is written; the invalid ones are listed with their index and
    nothing is imported (unless --skip-invalid). Existing ids are skipped (or replaced), and so are exact
    duplicates of a stored memory's text (same user, normalised text). Records are re-embedded with this
    home's embedder; FSRS fields are kept. Another major format version is refused: convert it with
    `openclaw memory migrate FILE`.

    A JSON Lines stream may be filtered, cut or joined on its way (grep -v, jq -c, head -n, cat a b):
    its header and end lines are advisory. A count that disagrees with the records read, a missing end
    line (the stream may have been cut) and a missing header (read as the current version) are warnings
    on stderr and in --json's `warnings`; the summary counts the records read. Each export in a joined
    stream is read with its own version.
    """
    if on_conflict not in ("skip", "replace"):
        raise typer.BadParameter(
            f"unknown value {on_conflict!r}: use skip or replace", param_hint="'--on-conflict'"
        )
    with _input_path(source) as (path, name):
        # The models load while the export is read and checked, as for add --batch; standard input is
        # on disk by now, so it is counted like a file and a line no record could fill loads nothing.
        loading = not dry_run and memory_common.start_bulk_loads(str(path))
        _import(path, name, on_conflict, dry_run, skip_invalid, as_json, loading)


def _import(
    path: Path, name: str, on_conflict: str, dry_run: bool, skip_invalid: bool, as_json: bool, loading: bool
) -> None:
    from openclaw_cli.memory.portability.files import open_export
    from openclaw_cli.memory.portability.transfer import InvalidExport, import_memories

    with memory_common.service() as service:
        export = open_export(path, name, memory_common.record_cap())
        if not dry_run:
            memory_common.announce_model_preparation(service)
        if loading:
            service.preload_embedder()
        try:
            with progress_bar(
                "checking" if dry_run else "embedding and storing", export.approximate_count()
            ) as advance:
                report = import_memories(
                    service,
                    export,
                    on_conflict=on_conflict,  # type: ignore[arg-type]  # checked above
                    dry_run=dry_run,
                    skip_invalid=skip_invalid,
                    progress=advance,
                )
        except InvalidExport as exc:
            _report_invalid(exc, as_json)
            raise
    for warning in report.warnings:
        common.warn(warning)
    if as_json:
        common.emit_json(report.to_dict())
        return
    verb = "would import" if dry_run else "imported"
    common.echo(
        f"{verb} {len(report.added)} of {report.total} memories; replaced {len(report.replaced)}, "
        f"skipped {len(report.existing)} existing, {len(report.duplicates)} duplicates, "
        f"{len(report.invalid)} invalid; {report.pending_vectors} vectors pending"
    )
    # Which record was not imported and what it matched: a count alone leaves the person guessing.
    for duplicate in report.duplicates:
        common.echo(f"  {duplicate['id']}: same words as {duplicate['duplicateOf']}; not imported")


def migrate_cmd(
    file: Annotated[str, typer.Argument(help="The export file to rewrite in place.")],
    to: Annotated[str | None, typer.Option("--to", help="Target version (default: the current one).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Rewrite an export file of an older format version to the current one, keeping FILE.bak."""
    from openclaw_cli.memory.portability.format import FORMAT_VERSION
    from openclaw_cli.memory.portability.migrate import migrate_file

    if file == "-":
        raise InvalidInput("migrate rewrites a file in place", hint="give a file name, not '-'")
    if not file.strip():
        raise UsageError("FILE is empty", hint="give the export file to rewrite")
    report = migrate_file(Path(file), to or FORMAT_VERSION)
    if as_json:
        common.emit_json(report.to_dict())
    elif report.backup is None:
        common.echo(f"{file} is already version {report.from_version}; nothing to do")
    else:
        common.echo(
            f"migrated {report.records} records from {report.from_version} to {report.to_version}; original kept as {report.backup}"
        )


def register(app: typer.Typer) -> None:
    """Add these commands to the `memory` group, in the order of its --help (cli/memory/commands.py calls this once)."""
    app.command(
        "export",
        epilog=_epilog(
            "openclaw memory export -o memories.json",
            "openclaw memory export --scope user --user lin --format jsonl -o lin.jsonl",
            "openclaw memory export --format jsonl | ssh laptop openclaw memory import -",
            "openclaw memory export --format jsonl | grep -v espresso | openclaw memory import -",
        ),
    )(export_cmd)
    app.command(
        "import",
        epilog=_epilog(
            "openclaw memory import memories.json",
            "openclaw memory import backup.jsonl --dry-run --json",
            "openclaw memory import new.json --on-conflict replace",
            "cat laptop.jsonl desktop.jsonl | openclaw memory import - --json",
        ),
    )(import_cmd)
    app.command(
        "migrate",
        epilog=_epilog(
            "openclaw memory migrate old-export.json", "openclaw memory migrate old.jsonl --to 1.0 --json"
        ),
    )(migrate_cmd)
