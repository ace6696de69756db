"""Reading messages.jsonl without ever crashing on damage.

A line that is not a JSON object with an integer `idx` is skipped and reported with its line number;
a last line without its newline is a torn write (a crash mid-append) and is reported as such.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from openclaw_cli.core.errors import StoreError
from openclaw_cli.core.textcheck import find_bad_text

MAX_REPORTED_TEXT = 80


@dataclass(frozen=True)
class LineProblem:
    """A line of messages.jsonl that could not be used."""

    line: int  # 1-based line number in the file
    reason: str
    torn: bool  # the last line, cut short by a crash
    text: str  # the start of the line, for the operator

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self, path: Path) -> str:
        what = "torn last line" if self.torn else "malformed line"
        return f"{path}: {what} {self.line} skipped ({self.reason})"


@dataclass
class ReadResult:
    messages: list[dict[str, Any]] = field(default_factory=list)
    problems: list[LineProblem] = field(default_factory=list)


def parse_line(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """(message, None) for a good line, (None, reason) for a bad one."""
    try:
        value = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        return None, f"not JSON: {exc}"[:120]
    if not isinstance(value, dict):
        return None, "not a JSON object"
    idx = value.get("idx")
    if not isinstance(idx, int) or isinstance(idx, bool) or idx < 0:
        return None, "no integer idx"
    if not isinstance(value.get("role"), str):
        return None, "no role"
    bad = find_bad_text(value)  # a hand-edited `\ud800` escape: not text, it could not be shown or sent
    if bad is not None:
        return None, f"not text: {bad.describe()}"
    return value, None


def iter_lines(data: bytes, first_line: int = 1) -> Iterator[tuple[int, bytes, bool]]:
    """(line number, content without newline, complete) for each non-empty line of `data`."""
    number = first_line
    start = 0
    size = len(data)
    while start < size:
        end = data.find(b"\n", start)
        complete = end != -1
        stop = end if complete else size
        chunk = data[start:stop]
        if chunk.strip():
            yield number, chunk, complete
        number += 1
        start = stop + 1


def parse_chunk(data: bytes, first_line: int = 1) -> ReadResult:
    result = ReadResult()
    for number, chunk, complete in iter_lines(data, first_line):
        message, reason = parse_line(chunk)
        if message is not None:
            # A whole object without its newline is still a whole message; the next append adds the newline.
            result.messages.append(message)
            continue
        torn = not complete
        text = chunk[:MAX_REPORTED_TEXT].decode("utf-8", "replace")
        result.problems.append(LineProblem(number, reason or "no newline at the end", torn, text))
    return result


def read_messages(path: Path) -> ReadResult:
    """Every readable message of `path` (none when the file does not exist), and the damaged lines."""
    from openclaw_cli.sessions.archive import read_transcript

    try:
        data = read_transcript(path)  # plain JSONL, whether the file is sealed, compressed or not
    except FileNotFoundError:
        return ReadResult()
    except OSError as exc:  # e.g. a directory where messages.jsonl should be
        raise StoreError(
            f"{path}: cannot read messages ({exc.strerror})", hint="move it away, then run `openclaw doctor`"
        ) from exc
    return parse_chunk(data)
