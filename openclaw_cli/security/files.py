"""Reading and writing a home's JSON and JSONL files sealed or plain, by what the file itself says.

The one codec the session store, the transcript indexer and the atomic JSON writer go through. A file is
read by its own header (sealed or plain), so a home half-way through `security init` or `decrypt`
reads whole; a new file is written sealed when its home is encrypted.
"""

from __future__ import annotations

from pathlib import Path

from openclaw_cli.security import records
from openclaw_cli.security.unlocked import key_for

# Whole-file JSON documents sealed in an encrypted home (atomic_write_json seals them): the session
# files. Others (gateway.pid, openclaw.json, the key file itself) stay plain: tools and people read them.
# messages.jsonl.gz, an archived transcript compressed (sessions/archive.py), is sealed whole like them.
SEALED_DOCUMENTS = frozenset({"meta.json", "context.json", "sessions.json", "messages.jsonl.gz"})
# JSONL files sealed per line: transcripts, summary histories, the gateway's inbox, the media index,
# the channels' journals.
SEALED_LINES = frozenset({"messages.jsonl", "summaries.jsonl", "inbox.jsonl", "index.jsonl", "journal.jsonl"})
MEDIA_DIR = "media"  # inbound channel files: each sealed whole (channels/media.py)


def seals(path: Path) -> bool:
    return path.name in SEALED_DOCUMENTS or path.name in SEALED_LINES


def document_for_disk(path: Path, data: bytes) -> bytes:
    """`data` as it is written to `path`: sealed when the path is a session document in an encrypted home."""
    if path.name not in SEALED_DOCUMENTS:
        return data
    key = key_for(path)
    return data if key is None else records.seal_document(data, key)


def read_document(path: Path) -> bytes:
    """The plaintext of the whole-file document at `path` (FileNotFoundError and OSError pass through)."""
    data = path.read_bytes()
    if not records.is_sealed(data):
        return data
    return records.open_document(data, key_for(path), path)


def plain_view(data: bytes, sealer: records.Sealer, path: Path, *, starts_file: bool) -> bytes:
    """Sealed JSONL bytes as the plain JSONL they hold, line for line: the header becomes an empty line
    (so line numbers stay the file's), a torn last record stays as it is, without its newline, and is
    reported torn by the plain parser."""
    out: list[bytes] = []
    start = 0
    if starts_file:
        end = data.find(b"\n")
        if end == -1:
            return b""
        out.append(b"\n")
        start = end + 1
    size = len(data)
    number = 2 if starts_file else 0
    while start < size:
        end = data.find(b"\n", start)
        if end == -1:
            out.append(data[start:][:80])
            break
        line = data[start:end]
        where = f"{path} line {number}" if number else str(path)
        out.append(sealer.open(line, where) + b"\n" if line.strip() else b"\n")
        start = end + 1
        if number:
            number += 1
    return b"".join(out)


def lines_sealer(path: Path, head: bytes) -> records.Sealer | None:
    """The sealer of a JSONL file whose first bytes are `head` (up to its first newline), None if plain."""
    if not records.is_sealed(head):
        return None
    key = key_for(path)
    if key is None:
        raise records.TamperedRecord(
            f"{path} is encrypted but its home has no key file", hint="restore security/datakey.json"
        )
    return records.read_header(head, key, path)[0]


def read_lines(path: Path) -> bytes:
    """A JSONL file's content as plain JSONL, sealed or not (FileNotFoundError passes through)."""
    data = path.read_bytes()
    sealer = lines_sealer(path, data[: data.find(b"\n") + 1] if b"\n" in data else data)
    if sealer is None:
        return data
    return plain_view(data, sealer, path, starts_file=True)


def new_lines_sealer(path: Path) -> records.Sealer | None:
    """A sealer for a new (empty) JSONL file at `path`: one when its home is encrypted."""
    key = key_for(path)
    return None if key is None else records.Sealer.new(key)


def _head(path: Path) -> bytes:
    """A JSONL file's first line (at most 256 bytes: a sealed header is ~60), or b"" when missing."""
    try:
        with path.open("rb") as handle:
            head = handle.read(256)
    except FileNotFoundError:
        return b""
    return head[: head.find(b"\n") + 1] if b"\n" in head else head


def plain_chunk(path: Path, data: bytes, *, starts_file: bool) -> bytes:
    """Raw bytes read from a JSONL file at some offset (`starts_file`: at 0) as plain JSONL. Callers that
    keep byte offsets compute them on the raw bytes, before this."""
    if not data:
        return data
    if starts_file:
        sealer = lines_sealer(path, data[: data.find(b"\n") + 1] if b"\n" in data else data)
    else:
        head = _head(path)
        if not records.is_sealed(head):
            return data
        sealer = lines_sealer(path, head)
    if sealer is None:
        return data
    return plain_view(data, sealer, path, starts_file=starts_file)


def seal_new_lines(path: Path, plain: bytes) -> bytes:
    """Plain JSONL content for a file written whole at `path` (a rewrite): sealed in an encrypted home."""
    key = key_for(path)
    return plain if key is None else records.seal_lines(plain, key)


def append_record(path: Path, record: bytes, *, mode: int = 0o600) -> None:
    """Append one JSON line (without its newline) to the JSONL file at `path`, durably: sealed when the
    file is (a new file in an encrypted home gets its header first), plain otherwise."""
    import os

    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, mode)
    try:
        head = os.pread(fd, 256, 0)
        if head:
            sealer = lines_sealer(path, head[: head.find(b"\n") + 1] if b"\n" in head else head)
        else:
            sealer = new_lines_sealer(path)
            if sealer is not None:
                os.write(fd, sealer.header())
        os.write(fd, record + b"\n" if sealer is None else sealer.seal(record))
        os.fsync(fd)
    finally:
        os.close(fd)


def open_for_append(path: Path, mode: int = 0o600) -> tuple[int, records.Sealer | None]:
    """An O_APPEND descriptor on the JSONL file at `path` and its sealer (None: plain), a new file in an
    encrypted home getting its header first. Write lines with `line_bytes`."""
    import os

    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0), mode)
    try:
        head = os.pread(fd, 256, 0)
        if head:
            sealer = lines_sealer(path, head[: head.find(b"\n") + 1] if b"\n" in head else head)
        else:
            sealer = new_lines_sealer(path)
            if sealer is not None:
                os.write(fd, sealer.header())
    except BaseException:
        os.close(fd)
        raise
    return fd, sealer


def line_bytes(sealer: records.Sealer | None, record: bytes) -> bytes:
    """One line for a file opened with open_for_append: sealed, or the record and a newline."""
    return record + b"\n" if sealer is None else sealer.seal(record)
