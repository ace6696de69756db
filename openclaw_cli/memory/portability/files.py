"""Reading and writing export files (format in portability/format.py) without holding a large export in memory.

Writing streams both formats record by record. Reading streams JSON Lines, whose header and end lines are
advisory (portability/stream.py: a filtered, cut or joined stream is read, with warnings); a JSON document is parsed
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

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.core.input_lines import lines, record_line_cap
from openclaw_cli.memory.portability.format import FORMAT_VERSION
from openclaw_cli.memory.portability.stream import (
    END_KEY,
    Framing,
    Located,
    is_end,
    is_header,
    jsonl_items,
    looks_like_record,
    parse_line,
    refuse_constant,
)

Format = Literal["json", "jsonl"]
# The longest line read when the caller knows no text limit (`memory migrate`, tests): a record whose
# texts are a million characters each; `memory import` passes its home's own limit.
FILE_LINE_CAP = record_line_cap(1_000_000)
FORMATS: tuple[str, ...] = ("json", "jsonl")


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
    """An export opened for reading: its header, and its records, iterable any number of times.

    `name` is how messages call it ("standard input" for a spooled pipe). `framing` describes the last
    complete pass over the records: the parts (one per export in a joined stream, each with its version)
    and the warnings about a filtered, cut or joined JSON Lines stream (portability/stream.py).
    """

    path: Path
    kind: Format
    header: dict[str, Any]
    name: str = ""
    _records: list[Any] | None = field(default=None, repr=False)
    cap: int = FILE_LINE_CAP  # the longest line read (input_lines.py)
    framing: Framing = field(default_factory=Framing, repr=False)

    def approximate_count(self) -> int:
        """How many records, for a progress bar (JSON Lines: the non-blank lines between header and end)."""
        if self._records is not None:
            return len(self._records)
        with self.path.open("rb") as handle:
            return max(0, sum(1 for raw in lines(handle, self.cap, self.name) if raw.strip()) - 2)

    def items(self) -> Iterator[tuple[int, Any]]:
        """(index, parsed record) in file order; a line that cannot be used is a RecordError instead."""
        if self._records is not None:
            self.framing = Framing.single(self.header.get("version"))
            yield from enumerate(self._records)
        else:
            self.framing = Framing()
            yield from jsonl_items(self.path, self.framing, self.cap, self.name or str(self.path))

    def version_of(self, item: Any) -> Any:
        """The format version to read a record from `items()` with: its part's."""
        return item.version if isinstance(item, Located) else self.header.get("version")


def unwrap(item: Any) -> tuple[Any, int | None]:
    """A record from `ExportSource.items()` and its line number, if the source has lines."""
    if isinstance(item, Located):
        return item.value, item.line
    return item, None


def _not_json(name: str, exc: json.JSONDecodeError, text: str) -> InvalidInput:
    if exc.pos >= len(text.rstrip()):
        return InvalidInput(
            f"{name} is truncated: the JSON ends early (line {exc.lineno})",
            hint="the export was cut short; export it again",
        )
    if exc.msg == "Extra data":
        return InvalidInput(
            f"{name} is not one JSON document (more follows at line {exc.lineno}, column {exc.colno})",
            hint="to join or filter exports, use --format jsonl: one record per line",
        )
    return InvalidInput(
        f"{name} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})",
        hint="give a file written by `openclaw memory export`",
    )


def _first_line(path: Path, name: str, cap: int) -> bytes:
    """The first line that is not blank (b"" for an empty file)."""
    try:
        with path.open("rb") as handle:
            for raw in lines(handle, cap, name):
                if raw.strip():
                    return raw
            return b""
    except FileNotFoundError as exc:
        raise InvalidInput(f"no such file: {name}") from exc
    except IsADirectoryError as exc:
        raise InvalidInput(f"{name} is a directory", hint="give an export file, or '-' for stdin") from exc
    except OSError as exc:
        raise InvalidInput(f"cannot read {name} ({exc.strerror})") from exc


def open_export(path: Path, name: str | None = None, cap: int = FILE_LINE_CAP) -> ExportSource:
    """Open an export in either format (told apart by its first line); file-level problems raise.

    JSON Lines is recognised by a header line, or, for a stream whose header was filtered out, by a first
    line that is a record or an end line (it is then read as the current version, with a warning)."""
    name = name or str(path)
    first = _first_line(path, name, cap)
    if not first:
        raise InvalidInput(f"{name} is empty", hint="give a file written by `openclaw memory export`")
    head, _ = parse_line(first)
    if is_header(head):
        return ExportSource(path, "jsonl", head, name, cap=cap)
    if looks_like_record(head) or is_end(head):
        return ExportSource(path, "jsonl", {"version": FORMAT_VERSION}, name, cap=cap)
    return _open_json(path, name, cap)


def _open_json(path: Path, name: str, cap: int) -> ExportSource:
    # An export writes a JSON document a record per line too: a longer line is refused before the
    # document is read whole.
    with path.open("rb") as handle:
        for _ in lines(handle, cap, name):
            pass
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{name} is not valid UTF-8 (byte {exc.start})") from exc
    try:
        document = json.loads(text, parse_constant=refuse_constant)
    except json.JSONDecodeError as exc:
        raise _not_json(name, exc, text) from exc
    except (RecursionError, ValueError) as exc:
        raise InvalidInput(f"{name} is not usable JSON ({str(exc)[:80]})") from exc
    if not isinstance(document, dict) or "version" not in document:
        raise InvalidInput(
            f"{name} is not an openclaw memory export (no version field)",
            hint="give a file written by `openclaw memory export`, or records one per line (jq -c)",
        )
    records = document.pop("records", None)
    if not isinstance(records, list):
        raise InvalidInput(f"{name}: 'records' must be a list of records")
    return ExportSource(path, "json", document, name, records, cap=cap)
