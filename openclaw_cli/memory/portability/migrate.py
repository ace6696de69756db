"""`memory migrate`: rewrite an export file of an older format version to the current one, keeping FILE.bak.

Steps are keyed by the major version they read. Before 1.0 ("0.x"), records carried their text at the
top level (`l0`, `l1`, `l2`, as `memory list --json` prints a record) instead of in `content`, and the
derived fields `l0Hash`, `vectorStatus` and `deleted`; the 0 step moves the text into `content` and drops
the derived fields. A file of the current major and an older minor is rewritten with the current version
(import fills its missing fields with defaults anyway). A newer major cannot be migrated by this openclaw.
The file keeps its format (JSON or JSON Lines); the original stays next to it as FILE.bak, so the
migration can be rolled back by renaming it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openclaw_cli.core.errors import Conflict, InvalidInput
from openclaw_cli.core.output_file import cannot_write, replaced_file
from openclaw_cli.core.textcheck import HINT as TEXT_HINT
from openclaw_cli.core.textcheck import find_bad_text
from openclaw_cli.memory.portability.files import ExportSource, ExportWriter, open_export, unwrap
from openclaw_cli.memory.portability.format import CURRENT_MAJOR, CURRENT_MINOR, FORMAT_VERSION, parse_version
from openclaw_cli.memory.portability.format import RecordError as _RecordError

DERIVED_BEFORE_1 = ("l0Hash", "vectorStatus", "deleted", "l0", "l1", "l2")
_UNCHANGED = "the file was not changed; check the directory's permissions and free space"


def _record_from_0(record: Any) -> Any:
    if not isinstance(record, dict) or "content" in record:
        return record  # import reports what is wrong with it
    moved = {k: v for k, v in record.items() if k not in DERIVED_BEFORE_1}
    moved["content"] = {"l0": record.get("l0"), "l1": record.get("l1"), "l2": record.get("l2")}
    return moved


# major version read -> how one record of it becomes a record of the next major
STEPS: dict[int, Callable[[Any], Any]] = {0: _record_from_0}


@dataclass(frozen=True)
class MigrateReport:
    path: Path
    from_version: str
    to_version: str
    records: int
    backup: Path | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "from": self.from_version,
            "to": self.to_version,
            "records": self.records,
            "backup": None if self.backup is None else str(self.backup),
        }


def _check_target(to: str) -> None:
    if to != FORMAT_VERSION:
        parse_version(to)  # "banana" is named as such
        raise InvalidInput(
            f"cannot migrate to version {to}", hint=f"this openclaw writes version {FORMAT_VERSION} only"
        )


def _convert(record: Any, major: int) -> Any:
    for step_major in range(major, CURRENT_MAJOR):
        record = STEPS[step_major](record)
    return record


def _keep_backup(path: Path) -> Path:
    backup = path.with_name(path.name + ".bak")
    try:
        os.link(path, backup)  # the original, unchanged, under a second name
    except FileExistsError as exc:
        raise Conflict(
            f"{backup} already exists",
            hint="move it away first: it may be the backup of an earlier migration",
        ) from exc
    except OSError:
        try:
            shutil.copy2(path, backup)
        except OSError as exc:
            backup.unlink(missing_ok=True)
            raise cannot_write(backup, exc, hint=_UNCHANGED) from exc
    return backup


def _part_versions(source: ExportSource) -> list[tuple[str, tuple[int, int], Any]]:
    """(where, (major, minor), as written) of each part: a joined JSON Lines stream has several."""
    for _ in source.items():  # one pass fills source.framing
        pass
    return [(part.where(), parse_version(part.version), part.version) for part in source.framing.parts]


def _check_versions(path: Path, versions: list[tuple[str, tuple[int, int], Any]]) -> bool:
    """Whether any part is older than this openclaw's version; a newer major is refused."""
    for index, (where, (major, _), raw) in enumerate(versions):
        if major > CURRENT_MAJOR:
            at = "" if index == 0 else f" ({where})"
            raise InvalidInput(
                f"{path}{at} is version {raw}, newer than this openclaw ({FORMAT_VERSION})",
                hint="upgrade openclaw to read it",
            )
        if major < CURRENT_MAJOR and major not in STEPS:
            raise InvalidInput(f"no migration from version {raw}")
    return any(version < (CURRENT_MAJOR, CURRENT_MINOR) for _, version, _ in versions)


def _refuse_bad_text(path: Path, value: Any, record: tuple[int, int | None] | None = None) -> None:
    """A lone surrogate cannot be written back as UTF-8: say where it is before the file is replaced.
    `record` is the (index, line) of a record; None means the header."""
    bad = find_bad_text(value)
    if bad is None:
        return
    if record is None:
        where = f"the header: {bad.describe()}"
    else:
        index, line = record
        where = _RecordError(index, bad.describe(), line).describe()
    raise InvalidInput(f"{path}: {where}", hint=f"{TEXT_HINT}; nothing was changed")


def migrate_file(path: Path, to: str = FORMAT_VERSION) -> MigrateReport:
    """Rewrite `path` to version `to` (the current one); FILE.bak keeps the original.

    Each part of a joined JSON Lines stream is converted from its own version; the result is one export."""
    _check_target(to)
    source = open_export(path)
    from_version = source.header.get("version")
    if not _check_versions(path, _part_versions(source)):
        return MigrateReport(path, str(from_version), FORMAT_VERSION, 0, None)
    head = {**source.header, "version": FORMAT_VERSION}
    _refuse_bad_text(path, head)
    staged = path.with_name(f".{path.name}.migrating")
    with replaced_file(staged, _UNCHANGED) as out:
        writer = ExportWriter(out, source.kind, head)
        for index, item in source.items():
            if isinstance(item, _RecordError):
                raise InvalidInput(f"{path}: {item.describe()}", hint="fix it first; nothing was changed")
            value, line = unwrap(item)
            _refuse_bad_text(path, value, (index, line))
            writer.write(_convert(value, parse_version(source.version_of(item))[0]))
        writer.finish()
    try:
        backup = _keep_backup(path)
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
    try:
        os.replace(staged, path)
    except OSError as exc:
        staged.unlink(missing_ok=True)
        backup.unlink()  # the original is still in place: the backup is only its second name
        raise cannot_write(path, exc, hint=_UNCHANGED) from exc
    return MigrateReport(path, str(from_version), FORMAT_VERSION, writer.count, backup)
