"""Reading and writing export files (format in export_format.py) without holding a large export in memory.

Writing streams both formats record by record. Reading streams JSON Lines; a JSON document is parsed
whole (simple, and a 100k-record export is ~60 MB of text, a few hundred MB parsed; use JSON Lines for
larger exports). The records of a source can be iterated more than once: an import validates them all
before it writes any.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal

from openclaw_cli.errors import InvalidInput
from openclaw_cli.memory.export_format import RecordError

Format = Literal["json", "jsonl"]
FORMATS: tuple[str, ...] = ("json", "jsonl")
END_KEY = "end"


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class ExportWriter:
    """Writes a header, then records one at a time, then the closing part of the chosen format."""

    def __init__(self, out: BinaryIO, kind: Format, head: dict[str, Any]) -> None:
        self.out = out
        self.kind = kind
        self.count = 0
        if kind == "jsonl":
            out.write(_dumps(head) + b"\n")
        else:
            # The header's keys, then the records array left open: `{...,"records":[`
            out.write(_dumps(head)[:-1] + b',"records":[')

    def write(self, record: dict[str, Any]) -> None:
        if self.kind == "jsonl":
            self.out.write(_dumps(record) + b"\n")
        else:
            self.out.write((b"," if self.count else b"") + b"\n" + _dumps(record))
        self.count += 1

    def finish(self) -> None:
        if self.kind == "jsonl":
            self.out.write(_dumps({END_KEY: True, "records": self.count}) + b"\n")
        else:
            self.out.write(b"\n]}\n")
        self.out.flush()


@dataclass
class ExportSource:
    """An export file opened for reading: its header, and its records, iterable any number of times."""

    path: Path
    kind: Format
    header: dict[str, Any]
    _records: list[Any] | None = field(default=None, repr=False)

    def approximate_count(self) -> int:
        """How many records, for a progress bar (JSON Lines: the non-blank lines between header and end)."""
        if self._records is not None:
            return len(self._records)
        with self.path.open("rb") as handle:
            return max(0, sum(1 for raw in handle if raw.strip()) - 2)

    def items(self) -> Iterator[tuple[int, Any]]:
        """(index, parsed record) in file order; a line that cannot be used is a RecordError instead."""
        if self._records is not None:
            yield from enumerate(self._records)
        else:
            yield from self._jsonl_items()

    def _jsonl_items(self) -> Iterator[tuple[int, Any]]:
        index, ended = 0, False
        with self.path.open("rb") as handle:
            handle.readline()  # the header, read by open_export
            for number, raw in enumerate(handle, start=2):
                if not raw.strip():
                    continue
                if ended:
                    yield index, RecordError(index, "text after the end line", number)
                    index += 1
                    continue
                value, problem = _parse_line(raw)
                if problem is not None:
                    yield index, RecordError(index, problem, number)
                elif isinstance(value, dict) and value.get(END_KEY) is True:
                    ended = True
                    if value.get("records") != index:
                        yield (
                            index,
                            RecordError(
                                index,
                                f"the end line counts {value.get('records')} records, the file holds {index}",
                            ),
                        )
                    continue
                else:
                    yield index, _Located(value, number)
                index += 1
        if not ended:
            yield (
                index,
                RecordError(index, "the file ends without its end line: it was cut short (truncated)"),
            )


@dataclass(frozen=True)
class _Located:
    """A JSON Lines record with the line it came from (for error messages)."""

    value: Any
    line: int


def unwrap(item: Any) -> tuple[Any, int | None]:
    """A record from `ExportSource.items()` and its line number, if the source has lines."""
    if isinstance(item, _Located):
        return item.value, item.line
    return item, None


def _parse_line(raw: bytes) -> tuple[Any, str | None]:
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant), None
    except UnicodeDecodeError as exc:
        return None, f"not valid UTF-8 (byte {exc.start})"
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg}, column {exc.colno})"
    except RecursionError:
        return None, "JSON nested too deeply"
    except ValueError as exc:
        return None, f"unusable number ({str(exc)[:80]})"


def _refuse_constant(value: str) -> float:
    raise ValueError(f"{value} is not a JSON number")


def _not_json(path: Path, exc: json.JSONDecodeError, text: str) -> InvalidInput:
    if exc.pos >= len(text.rstrip()):
        return InvalidInput(
            f"{path} is truncated: the JSON ends early (line {exc.lineno})",
            hint="the export was cut short; export it again",
        )
    return InvalidInput(
        f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})",
        hint="give a file written by `openclaw memory export`",
    )


def open_export(path: Path) -> ExportSource:
    """Open an export in either format (told apart by its first line); file-level problems raise."""
    try:
        with path.open("rb") as handle:
            first = handle.readline()
    except FileNotFoundError as exc:
        raise InvalidInput(f"no such file: {path}") from exc
    except IsADirectoryError as exc:
        raise InvalidInput(f"{path} is a directory", hint="give an export file, or '-' for stdin") from exc
    except OSError as exc:
        raise InvalidInput(f"cannot read {path} ({exc.strerror})") from exc
    if not first.strip():
        raise InvalidInput(f"{path} is empty", hint="give a file written by `openclaw memory export`")
    head, _ = _parse_line(first)
    if isinstance(head, dict) and "records" not in head and "version" in head:
        return ExportSource(path, "jsonl", head)
    return _open_json(path)


def _open_json(path: Path) -> ExportSource:
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path} is not valid UTF-8 (byte {exc.start})") from exc
    try:
        document = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise _not_json(path, exc, text) from exc
    except (RecursionError, ValueError) as exc:
        raise InvalidInput(f"{path} is not usable JSON ({str(exc)[:80]})") from exc
    if not isinstance(document, dict) or "version" not in document:
        raise InvalidInput(
            f"{path} is not an openclaw memory export (no version field)",
            hint="give a file written by `openclaw memory export`",
        )
    records = document.pop("records", None)
    if not isinstance(records, list):
        raise InvalidInput(f"{path}: 'records' must be a list of records")
    return ExportSource(path, "json", document, records)
