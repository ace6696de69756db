"""Reading standard input and files a line at a time, never more of a line than a valid one could need.

`python -c "print('y' * 2**30)" | openclaw memory add --batch -` used to read the whole gigabyte (2.2 GB
resident, 32 s) before saying the text was over the limit. Every reader takes the most bytes a line (or
a whole TEXT argument) could hold when valid, reads in chunks, and stops as soon as a line passes that:
memory stays within about one chunk plus the cap, and the error comes as the cap is reached.

Caps come from the limits the lines must meet: `record_line_cap` for a line holding a memory's texts.
Lines are split at b"\\n" only (JSON's `ensure_ascii=False` leaves U+2028 and friends raw inside strings).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, BinaryIO

from openclaw_cli.core.errors import InvalidInput

CHUNK = 1 << 20
# One character of a JSON string at its longest: a code point outside the BMP escaped as two \uXXXX.
JSON_BYTES_PER_CHAR = 12


# Everything on a record's line besides its texts: id, user, dates, FSRS fields, the `source` provenance.
OTHER_FIELDS_BYTES = 1 << 20
# A session message or a query has no character limit of its own: what a session export line or a TEXT
# argument may hold is bounded here, far beyond the gateway's 1 MiB messages.
MESSAGE_BYTES = 4 << 20
QUERY_BYTES = 1 << 20
# A session export line: one message, each byte at most a \u00XX escape, and its other fields.
MESSAGE_LINE_BYTES = 6 * MESSAGE_BYTES + OTHER_FIELDS_BYTES
# memory.maxTextChars's default, for a first look that need not read the settings (the home's own value
# decides whenever a line is longer than this allows).
DEFAULT_MAX_TEXT_CHARS = 16_000


def record_line_cap(max_chars: int, texts: int = 3) -> int:
    """The longest JSON line a record of `texts` texts (l0, l1, l2) of at most `max_chars` can take."""
    return texts * max_chars * JSON_BYTES_PER_CHAR + OTHER_FIELDS_BYTES


def text_cap(max_chars: int) -> int:
    """The most bytes a text of `max_chars` characters can take as UTF-8, with room for the blank lines
    and spaces around it that are stripped."""
    return max_chars * 4 + (64 << 10)


STORED_NOTHING = "split or shorten it; nothing was stored"


def too_long(name: str, number: int, cap: int, hint: str = STORED_NOTHING) -> InvalidInput:
    what = f"{name} line {number}" if number else name
    return InvalidInput(
        f"{what} is longer than {cap} bytes, more than any valid input can be; it was not read further",
        hint=hint,
    )


def _read(handle: BinaryIO) -> bytes:
    # read1: what a pipe has now (a streaming reader answers each line as it comes), at most CHUNK.
    read1 = getattr(handle, "read1", None)
    return read1(CHUNK) if read1 is not None else handle.read(CHUNK)


def lines(
    handle: BinaryIO, cap: int, name: str, *, ends: bool = False, hint: str = STORED_NOTHING
) -> Iterator[bytes]:
    """The lines of `handle` without their b"\\n" (with it: `ends`; a last line may have none);
    InvalidInput as soon as a line passes `cap` bytes, having read at most a chunk past the cap."""
    tail = b"\n" if ends else b""
    parts: list[bytes] = []
    size = 0
    number = 1
    while chunk := _read(handle):
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            size += end - start
            if size > cap:
                raise too_long(name, number, cap, hint)
            parts.append(chunk[start:end])
            yield b"".join(parts) + tail
            parts, size, number, start = [], 0, number + 1, end + 1
        size += len(chunk) - start
        if size > cap:
            raise too_long(name, number, cap, hint)
        parts.append(chunk[start:])
    if size:
        yield b"".join(parts)


def read_all(handle: BinaryIO, cap: int, name: str) -> bytes:
    """The whole of `handle`, refused as soon as it passes `cap` bytes."""
    parts: list[bytes] = []
    size = 0
    while chunk := _read(handle):
        size += len(chunk)
        if size > cap:
            raise too_long(name, 0, cap)
        parts.append(chunk)
    return b"".join(parts)


def copy_lines(source: BinaryIO, dest: IO[bytes], cap: int, name: str) -> None:
    """Copy `source` to `dest` chunk by chunk, refusing as soon as a line passes `cap` bytes."""
    size = 0
    number = 1
    while chunk := _read(source):
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if size + end - start > cap:
                raise too_long(name, number, cap)
            size, number, start = 0, number + 1, end + 1
        size += len(chunk) - start
        if size > cap:
            raise too_long(name, number, cap)
        dest.write(chunk)


def decoded(line: bytes, name: str, number: int) -> str:
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"{name} line {number} is not valid UTF-8 (byte {exc.start})", hint="convert it with iconv first"
        ) from exc
