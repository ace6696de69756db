"""Reading a JSON Lines export as a shell pipeline may have left it: its framing is advisory.

A JSON Lines export is a header line (`{"version": ...}`), one line per record, and an end line
(`{"end": true, "records": N}`). Between `openclaw memory export` and `openclaw memory import -` there may
be a `grep -v`, a `jq -c 'select(...)'`, a `head -n` or a `cat a.jsonl b.jsonl`, so each line is taken for
what it is rather than for where it stands:

- a header line starts a part (one export) wherever it stands: `cat a.jsonl b.jsonl` is two parts, and each
  part's records are read with that part's version;
- a stream that starts without a header (`jq -c` emitting records only, `grep -v version`) is read as the
  current version, with a warning;
- an end line closes its part; a count that disagrees with the records read in that part is a warning
  (the stream was filtered), never an invalid record;
- a stream that ends without an end line may have been cut (`head -n`): a warning with the number of
  records read. A last line cut in the middle is an invalid record, like any line that is not JSON;
- records after an end line without a new header continue the part before, with a warning.

Nothing here refuses a stream: which versions can be imported is the importer's call (`Framing.parts`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openclaw_cli.core.input_lines import lines
from openclaw_cli.memory.portability.format import FORMAT_VERSION, RecordError

END_KEY = "end"


@dataclass
class Part:
    """One export inside a stream: from its header line (or where records start without one) on."""

    version: Any
    line: int | None  # the header's line; None when the part has no header
    records: int = 0

    def where(self) -> str:
        return "the start of the stream" if self.line is None else f"line {self.line}"


@dataclass(frozen=True)
class Located:
    """A JSON Lines record with its line (for error messages) and its part's version (how to read it)."""

    value: Any
    line: int
    version: Any


def is_header(value: Any) -> bool:
    # A record has an id and content; a one-line JSON document has its records; an end line has `end`.
    return (
        isinstance(value, dict)
        and "version" in value
        and not any(key in value for key in ("records", "id", "content", END_KEY))
    )


def is_end(value: Any) -> bool:
    return isinstance(value, dict) and value.get(END_KEY) is True


def looks_like_record(value: Any) -> bool:
    """A first line that is a record: the stream lost its header on the way (grep, jq)."""
    return isinstance(value, dict) and ("id" in value or "content" in value)


class Framing:
    """The parts of a stream and the warnings about its framing, as one pass reads it."""

    def __init__(self) -> None:
        self.parts: list[Part] = []
        self.warnings: list[str] = []
        self.records = 0
        self._ended_at: int | None = None  # the end line that closed the last part, if it is closed

    @classmethod
    def single(cls, version: Any) -> Framing:
        """A source without framing (a JSON document): one part of `version`."""
        framing = cls()
        framing.parts.append(Part(version, None))
        framing._ended_at = 0
        return framing

    def header(self, value: dict[str, Any], number: int) -> None:
        if self.parts and self._ended_at is None:
            self.warnings.append(
                f"line {number}: a header line comes before the end line of the export above it "
                "(was that one cut short?)"
            )
        self.parts.append(Part(value.get("version"), number))
        self._ended_at = None

    def end(self, value: dict[str, Any], number: int) -> None:
        part = self._current()
        counted = value.get("records")
        if type(counted) is not int:
            self.warnings.append(f"line {number}: the end line has no record count")
        elif counted != part.records:
            self.warnings.append(
                f"line {number}: the end line counts {_records(counted)}, {part.records} "
                f"{'was' if part.records == 1 else 'were'} read (a filtered stream?)"
            )
        self._ended_at = number

    def record(self, number: int) -> Any:
        """Count the record on line `number`; returns the version to read it with."""
        part = self._current()
        if self._ended_at is not None:
            self.warnings.append(
                f"line {number}: records follow the end line on line {self._ended_at} without a header "
                f"line; read as version {part.version}"
            )
            part = Part(part.version, None)
            self.parts.append(part)
            self._ended_at = None
        part.records += 1
        self.records += 1
        return part.version

    def finish(self) -> None:
        if self._ended_at is None:
            self.warnings.append(
                f"no end line: the stream may have been cut short; {_records(self.records)} "
                f"{'was' if self.records == 1 else 'were'} read"
            )

    def _current(self) -> Part:
        if not self.parts:
            self.parts.append(Part(FORMAT_VERSION, None))
            self.warnings.append(f"no header line: read as export version {FORMAT_VERSION}, the current one")
        return self.parts[-1]


def _records(count: int) -> str:
    return f"{count} record" if count == 1 else f"{count} records"


def jsonl_items(path: Path, framing: Framing, cap: int, name: str) -> Iterator[tuple[int, Any]]:
    """(index, Located record or RecordError) for each record line; header and end lines go to `framing`.
    A line past `cap` bytes stops the reading (InvalidInput) before it is held whole."""
    index = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(lines(handle, cap, name, ends=True), start=1):
            if not raw.strip():
                continue
            value, problem = parse_line(raw)
            if problem is None and is_header(value):
                framing.header(value, number)
                continue
            if problem is None and is_end(value):
                framing.end(value, number)
                continue
            version = framing.record(number)
            if problem is None:
                yield index, Located(value, number, version)
            else:
                if not raw.endswith(b"\n"):
                    problem += "; the stream ends inside this line: it was cut short (truncated)"
                yield index, RecordError(index, problem, number)
            index += 1
    framing.finish()


def parse_line(raw: bytes) -> tuple[Any, str | None]:
    """One line's JSON value, or why it has none."""
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=refuse_constant), None
    except UnicodeDecodeError as exc:
        return None, f"not valid UTF-8 (byte {exc.start})"
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg}, column {exc.colno})"
    except RecursionError:
        return None, "JSON nested too deeply"
    except ValueError as exc:
        return None, f"unusable number ({str(exc)[:80]})"


def refuse_constant(value: str) -> float:
    raise ValueError(f"{value} is not a JSON number")
