"""Compressed archived transcripts: `messages.jsonl` of an archived session kept as `messages.jsonl.gz`.

The one reader of a transcript on disk: `read_transcript` returns the plain JSONL of a session's
messages whether they are in `messages.jsonl` (plain or sealed per line) or in the compressed archive
(plain gzip, or in an encrypted home one sealed record holding the gzip bytes: compressed, then sealed,
so nothing of the compressed plaintext shows on disk). Every reader (show, search and its index, export,
purge, `doctor`) goes through it, via jsonl.read_messages or directly.

gzip, not zstd, by measurement (benchmarks/test_bench_archive.py, bilingual transcripts with tool calls):
gzip -6 packs 50/500/2,000 lines 3.9x/5.5x/6.0x, zstd -3 3.9x/6.2x/8.3x and compresses 5-10x faster; but
a transcript is compressed once, in ~1 ms (500 lines) to ~10 ms (2,000) with gzip, reading one back is
JSON parsing either way (decompressing adds well under a millisecond per 100 KB), and zstd saves ~2.5 KB
per 500-line archive (~20 KB at 2,000): not worth a compiled dependency (and ~11 ms more to import). gzip
is in the standard library, and `zcat` reads an archive.

Never both lost nor counted twice. Compressing writes the archive beside the transcript (temporary file,
fsync, rename, fsync of the directory), reads it back, then removes the plain file; restoring (a message
arrives for an archived session) does the reverse. Both run under the session lock. A crash in between
leaves both files with the same messages: the plain one is the transcript and the archive a leftover
(the next compress replaces it, a restore removes it), so a reader that finds both reads the plain one.
"""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

from openclaw_cli.core.errors import StoreError
from openclaw_cli.core.fsutil import atomic_write_bytes, atomic_write_json, fsync_dir
from openclaw_cli.security.files import document_for_disk, read_document, read_lines, seal_new_lines
from openclaw_cli.sessions.meta_file import read_meta_file

ARCHIVE_SUFFIX = ".gz"
LEVEL = 6  # gzip's default: level 9 gains ~3% on transcripts for half the speed (see the benchmark)


class DamagedArchive(StoreError):
    """A compressed transcript that cannot be decompressed (cut short, or changed on disk)."""


def archive_path(messages_path: Path) -> Path:
    """`messages.jsonl.gz` beside `messages.jsonl`."""
    return messages_path.with_name(messages_path.name + ARCHIVE_SUFFIX)


def is_archive_name(name: str) -> bool:
    return name.endswith(".jsonl" + ARCHIVE_SUFFIX)


def is_compressed(messages_path: Path) -> bool:
    """Whether the session's messages are in its compressed archive (and only there)."""
    return not os.path.lexists(messages_path) and archive_path(messages_path).is_file()


def transcript_file(messages_path: Path) -> Path:
    """The file that holds the transcript: the plain one when it is there (see the module doc), else
    the archive when that is, else `messages_path` (which does not exist)."""
    if os.path.lexists(messages_path):
        return messages_path
    archive = archive_path(messages_path)
    return archive if archive.exists() else messages_path


def read_transcript(messages_path: Path) -> bytes:
    """The plain JSONL of the transcript at `messages_path`, from whichever file holds it
    (FileNotFoundError when none does, OSError passes through, DamagedArchive for a bad archive)."""
    path = transcript_file(messages_path)
    if path == messages_path:
        return read_lines(path)
    return decompress(path, read_document(path))


def read_archive(archive: Path) -> bytes:
    """The plain JSONL in the compressed archive at `archive` (sealed or not)."""
    return decompress(archive, read_document(archive))


def decompress(path: Path, data: bytes) -> bytes:
    try:
        if not data:  # gzip reads b"" as nothing; an archive is never written empty, so it lost its data
            raise EOFError
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError; a cut file is EOFError
        why = "cut short" if isinstance(exc, EOFError) else f"not a valid gzip file: {exc}"
        raise DamagedArchive(
            f"{path}: compressed transcript is damaged ({why}); nothing was read from it",
            hint=f"restore {path.name} from a backup, or move it aside to start the session empty; "
            "`openclaw doctor` lists damaged transcripts",
        ) from None


def compress_transcript(messages_path: Path, plain: bytes, *, durable: bool = True) -> None:
    """Replace the transcript at `messages_path`, whose plain JSONL is `plain`, by its compressed archive.
    The caller holds the session lock and has checkpointed meta.json to the transcript's end."""
    archive = archive_path(messages_path)
    packed = gzip.compress(plain, compresslevel=LEVEL, mtime=0)
    atomic_write_bytes(archive, document_for_disk(archive, packed), durable=durable)
    if decompress(archive, read_document(archive)) != plain:  # read back before the only copy goes
        archive.unlink(missing_ok=True)
        raise StoreError(f"{archive}: the archive read back differs; {messages_path.name} is kept")
    messages_path.unlink()
    if durable:
        fsync_dir(messages_path.parent)


def restore_transcript(messages_path: Path, meta_path: Path, *, durable: bool = True) -> bool:
    """Put an archived transcript back as `messages.jsonl` (a message arrived for the session, or a
    purge rewrote it), in the home's format; whether there was one. The caller holds the session lock.
    A leftover archive beside a plain transcript is removed."""
    archive = archive_path(messages_path)
    if os.path.lexists(messages_path):
        if archive.exists():
            archive.unlink()  # the plain file is the transcript (see the module doc)
        return False
    if not archive.exists():
        return False
    plain = decompress(archive, read_document(archive))
    _drop_checkpoint(meta_path)  # the rewritten file's size is not the old one's: count it from its start
    atomic_write_bytes(messages_path, seal_new_lines(messages_path, plain), durable=durable)
    archive.unlink()
    if durable:
        fsync_dir(messages_path.parent)
    return True


def rewrite_archive(messages_path: Path, plain: bytes, *, durable: bool = True) -> None:
    """Replace the compressed archive's content (a purge redacted it): compressed again, atomically."""
    archive = archive_path(messages_path)
    packed = gzip.compress(plain, compresslevel=LEVEL, mtime=0)
    atomic_write_bytes(archive, document_for_disk(archive, packed), durable=durable)


def _drop_checkpoint(meta_path: Path) -> None:
    """meta.json without messagesBytes (readers then count the transcript from its start)."""
    meta = read_meta_file(meta_path)
    if "messagesBytes" in meta:
        meta.pop("messagesBytes")
        atomic_write_json(meta_path, meta)


def leftover_archive(messages_path: Path) -> Path | None:
    """An archive beside a plain transcript (a crash mid-compress or mid-restore), or None."""
    archive = archive_path(messages_path)
    return archive if os.path.lexists(messages_path) and archive.exists() else None


__all__ = [
    "ARCHIVE_SUFFIX",
    "DamagedArchive",
    "archive_path",
    "compress_transcript",
    "decompress",
    "is_archive_name",
    "is_compressed",
    "read_archive",
    "leftover_archive",
    "read_transcript",
    "restore_transcript",
    "rewrite_archive",
    "transcript_file",
]
