"""Workspace Markdown (MEMORY.md and memory/*.md) indexed into the same search as `note` records.

Each file is cut into chunks of about CHUNK_TOKENS tokens on line boundaries, overlapping by about
OVERLAP_TOKENS, and each chunk becomes one `note` record whose `source` is
{"path", "startLine", "endLine", "fileHash"}. The files are the truth and the records are derived from
them, so replacing a changed file's records keeps no history rows; the replacement is one transaction.

The workspace Markdown is the owner's (seed 003 §4.3: MEMORY.md loads only in the owner's private session),
so its chunks are the owner's user-scope memories: search, injection and the memory tools give them to the
owner alone, never to another person or an anonymous caller, whose searches read the agent scope. Chunks
indexed as agent scope by an older version, or under an owner the config has since changed, are given to
the owner in place (`own_strays`, no re-embedding) before anything else a sync does.

One file is the owner's deliberate exception: SHARED.md, notes for everyone the agent talks to (a team's
conventions, a household's Wi-Fi name). Its chunks are agent-scope memories that every person's search finds;
it is never loaded into a prompt as a whole (AGENTS.md is the file every session starts with).

`workspace_files` holds each file's hash and stat: a file whose size and mtime are unchanged is not even
read, one whose bytes hash the same is not re-chunked, and a changed file's unchanged chunks take their
vectors from the records they replace (the embedding cache), so only new text is embedded.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.memory.store.protocol import WorkspaceFile
from openclaw_cli.memory.store.record_rows import new_record
from openclaw_cli.memory.store.records import new_record_id, utc_now
from openclaw_cli.memory.store.vectors.cache import embedder_key, passage_hash
from openclaw_cli.memory.workspace.files import LOG_DIR, MEMORY_FILE, SHARED_FILE, UnsafeFile, safe_path

if TYPE_CHECKING:
    from openclaw_cli.memory.embedding.onnx_embedder import Embedder
    from openclaw_cli.memory.store.memory_store import MemoryStore
    from openclaw_cli.memory.store.records import MemoryRecord

CHUNK_TOKENS = 400
OVERLAP_TOKENS = 80
# One line longer than this is cut into pieces of it (all with that line's number).
MAX_PIECE_CHARS = 1600
# A larger file is not indexed (and said so): 4 MiB of notes is ~2,500 chunks; beyond that it is data.
MAX_INDEX_BYTES = 4 * 1024 * 1024

Progress = Callable[[int], None]


@dataclass(frozen=True)
class Chunk:
    start_line: int
    end_line: int
    text: str


@dataclass(frozen=True)
class FileState:
    name: str
    path: Path
    size: int
    mtime_ns: int


@dataclass
class SyncReport:
    workspace: str
    files: int = 0
    unchanged: int = 0
    indexed: int = 0
    removed: int = 0
    chunks: int = 0
    embedded: int = 0
    owned: int = 0  # stray notes given to the owner (own_strays)
    problems: list[str] = field(default_factory=list)
    warning: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "workspace": self.workspace,
            "files": self.files,
            "unchanged": self.unchanged,
            "indexed": self.indexed,
            "removed": self.removed,
            "chunks": self.chunks,
            "embedded": self.embedded,
            "ownedNotes": self.owned,
            "problems": self.problems,
            "warning": self.warning,
        }


# --- chunking -------------------------------------------------------------------------------------


def estimate_tokens(text: str) -> int:
    """~4 characters per token, one per CJK character (as sessions/budget/tokens.py estimates; no tokenizer
    is loaded for this: a chunk's size only has to be about right)."""
    wide = sum(1 for ch in text if "\u2e80" <= ch <= "\ua4cf" or "\uac00" <= ch <= "\ud7a3" or ch >= "\uf900")
    return wide + (len(text) - wide + 3) // 4


def _pieces(text: str) -> list[tuple[int, str, int]]:
    """(line number, text, tokens) of each line, over-long lines cut into several pieces."""
    out: list[tuple[int, str, int]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        for start in range(0, max(len(line), 1), MAX_PIECE_CHARS):
            piece = line[start : start + MAX_PIECE_CHARS]
            out.append((number, piece, estimate_tokens(piece) + 1))
    return out


def chunk_markdown(text: str) -> list[Chunk]:
    """Chunks of about CHUNK_TOKENS on line boundaries, each overlapping the previous by ~OVERLAP_TOKENS."""
    pieces = _pieces(text)
    chunks: list[Chunk] = []
    start = 0
    while start < len(pieces):
        end, tokens = start, 0
        while end < len(pieces) and (end == start or tokens + pieces[end][2] <= CHUNK_TOKENS):
            tokens += pieces[end][2]
            end += 1
        body = "\n".join(p[1] for p in pieces[start:end]).strip()
        if body:
            chunks.append(Chunk(pieces[start][0], pieces[end - 1][0], body))
        if end >= len(pieces):
            break
        back, overlap = end, 0
        while back - 1 > start and overlap + pieces[back - 1][2] <= OVERLAP_TOKENS:
            overlap += pieces[back - 1][2]
            back -= 1
        start = back
    return chunks


# --- which files, and which changed -----------------------------------------------------------------


def workspace_files(root: Path, problems: list[str]) -> list[FileState]:
    """MEMORY.md, SHARED.md and memory/*.md that are safe to read; the unsafe ones are named in `problems`.

    A regular file (not a link) in the workspace is safe as it is, so only links are resolved: resolving
    every path cost ~0.5 ms a file, half the time budget of a sync of 1,000 unchanged files.
    """
    candidates = [(MEMORY_FILE, root / MEMORY_FILE), (SHARED_FILE, root / SHARED_FILE)]
    logs = root / LOG_DIR
    if logs.is_dir() and not logs.is_symlink():
        with os.scandir(logs) as entries:
            names = sorted(e.name for e in entries if e.name.endswith(".md") and not e.name.startswith("."))
        candidates += [(f"{LOG_DIR}/{name}", logs / name) for name in names]
    found: list[FileState] = []
    for name, path in candidates:
        try:
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                info = safe_path(root, path).stat()
            elif not stat.S_ISREG(info.st_mode):
                raise UnsafeFile(f"{path} is not a regular file")
        except FileNotFoundError:
            continue
        except (UnsafeFile, OSError) as exc:
            problems.append(f"{name}: {exc}")
            continue
        found.append(FileState(name, path, info.st_size, info.st_mtime_ns))
    return found


def _known(store: MemoryStore) -> dict[str, tuple[str, int, int]]:
    return {path: (f.file_hash, f.size, f.mtime_ns) for path, f in store.storage.workspace_files().items()}


def is_dirty(store: MemoryStore, root: Path) -> bool:
    """True when a file was added, removed, or has another size or mtime than when last synced."""
    current = workspace_files(root, [])
    known = _known(store)
    if len(current) != len(known):
        return True
    return any(known.get(f.name, ("", -1, -1))[1:] != (f.size, f.mtime_ns) for f in current)


# --- sync -------------------------------------------------------------------------------------------


def own_strays(store: MemoryStore, owner: str) -> int:
    """Give every workspace note that is not `owner`'s user-scope memory to `owner`, in one transaction, its
    vectors kept: how many moved. One indexed lookup when there are none (it runs before every search)."""
    from openclaw_cli.memory.store import people

    storage = store.storage
    if not storage.stray_notes(owner):
        return 0
    with storage.transaction():
        strays = storage.stray_notes(
            owner
        )  # again, inside the transaction: another process may have moved them
        records = storage.by_rowids([rowid for rowid, _ in strays])
        moment = utc_now()
        for rowid, record_id in strays:
            storage.reassign(rowid, record_id, owner, moment, scope="user")
            record = records.get(rowid)
            if record is not None:  # the names it introduces move with it
                people.forget_if_unused(storage, record.user_id, record.l0)
                people.note(storage, owner, record.l0)
        if strays:
            storage.vectors_changed()  # warm processes reload the vectors' scope and person with them
    return len(strays)


def sync(
    store: MemoryStore, root: Path, agent_id: str, owner: str, progress: Progress | None = None
) -> SyncReport:
    """Bring the note records of `store` in line with the Markdown under `root`, as `owner`'s memories."""
    report = SyncReport(str(root))
    report.owned = own_strays(store, owner)
    files = workspace_files(root, report.problems)
    report.files = len(files)
    known = _known(store)
    embedder, report.warning = store.usable_embedder()
    restamped: list[tuple[FileState, str]] = []  # same bytes, new mtime: recorded in one transaction
    for state in files:
        previous = known.pop(state.name, None)
        if previous is not None and previous[1:] == (state.size, state.mtime_ns):
            report.unchanged += 1
        else:
            _sync_file(store, root, state, previous, embedder, (agent_id, owner), report, restamped)
        if progress is not None:
            progress(1)
    if restamped:
        with store.storage.transaction():
            for state, digest in restamped:
                _remember(store, state, digest, None, None, keep_chunks=True)
    for name in known:  # gone from the workspace
        with store.storage.transaction():
            store.storage.remove(store.storage.note_rows(name))
            store.storage.drop_workspace_file(name)
        report.removed += 1
    for name, file in sorted(store.storage.workspace_files().items()):
        if file.problem is not None:
            report.problems.append(f"{name}: {file.problem}")
    return report


def _sync_file(
    store: MemoryStore,
    root: Path,
    state: FileState,
    previous: tuple[str, int, int] | None,
    embedder: Embedder | None,
    whose: tuple[str, str],  # agent id, owner
    report: SyncReport,
    restamped: list[tuple[FileState, str]],
) -> None:
    data, problem = _read(root, state)
    digest = hashlib.sha256(data).hexdigest() if data else f"unread:{state.size}:{state.mtime_ns}"
    if previous is not None and previous[0] == digest and problem is None:
        restamped.append((state, digest))
        report.unchanged += 1
        return
    text = data.decode("utf-8") if problem is None else ""
    chunks = chunk_markdown(text)
    records = [_record(state.name, chunk, digest, *whose) for chunk in chunks]
    found, report.embedded, warning = _vectors(store, embedder, [r.l0 for r in records], report.embedded)
    report.warning = report.warning or warning
    with store.storage.transaction():
        store.storage.remove(store.storage.note_rows(state.name))
        for record, vector in zip(records, found, strict=True):
            store.insert_record(record, vector)
        _remember(store, state, digest, len(records), problem)
    report.indexed += 1
    report.chunks += len(records)


def _read(root: Path, state: FileState) -> tuple[bytes, str | None]:
    """The file's bytes, or why it is not indexed (too large, not UTF-8, unreadable)."""
    if state.size > MAX_INDEX_BYTES:
        mib = state.size / (1024 * 1024)
        return (
            b"",
            f"{mib:.1f} MiB is over the {MAX_INDEX_BYTES // (1024 * 1024)} MiB limit: not indexed (split it)",
        )
    try:
        data = _read_checked(root, state.path)
    except (OSError, UnsafeFile) as exc:
        return b"", f"not indexed: {exc}"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return data, f"not UTF-8 (byte {exc.start}): not indexed (convert it with iconv)"
    return data, None


def _read_checked(root: Path, path: Path) -> bytes:
    """A link is read through its checked target; anything else with O_NOFOLLOW, so a file swapped for
    a link since it was listed fails instead of being followed."""
    from openclaw_cli.security import workspace_file  # a sealed file's text (security.encryptWorkspace)

    if path.is_symlink():
        return workspace_file.read(safe_path(root, path))
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        return workspace_file.text_of(handle.read(), path)


def _remember(
    store: MemoryStore,
    state: FileState,
    digest: str,
    chunks: int | None,
    problem: str | None,
    *,
    keep_chunks: bool = False,
) -> None:
    file = WorkspaceFile(state.name, digest, state.size, state.mtime_ns, chunks or 0, problem)
    store.storage.put_workspace_file(file, keep_chunks=keep_chunks)


def _record(name: str, chunk: Chunk, digest: str, agent_id: str, owner: str) -> MemoryRecord:
    source = {"path": name, "startLine": chunk.start_line, "endLine": chunk.end_line, "fileHash": digest}
    shared = name == SHARED_FILE  # the owner's deliberate notes for everyone
    return new_record(
        record_id=new_record_id(),
        l0=chunk.text,
        agent_id=agent_id,
        scope="agent" if shared else "user",
        user_id=None if shared else owner,
        category="note",
        source=source,
    )


def _vectors(
    store: MemoryStore, embedder: Embedder | None, texts: list[str], embedded: int
) -> tuple[list[Any], int, str | None]:
    """A vector per text (None: pending), the running count of texts embedded, and a warning."""
    from openclaw_cli.memory.embedding.onnx_embedder import EmbeddingUnavailable

    if embedder is None or not texts:
        return [None] * len(texts), embedded, None
    hashes = [passage_hash(t) for t in texts]
    found = store.cached_vectors(embedder_key(embedder.identity.to_dict()), hashes)
    missing = sorted({h: t for h, t in zip(hashes, texts, strict=True) if h not in found}.items())
    if missing:
        import numpy as np

        try:
            computed = embedder.embed_passages([t for _, t in missing])
        except EmbeddingUnavailable as exc:
            warning = f"{exc.message}; vectors are pending, run `openclaw memory index` later"
            return [found.get(h) for h in hashes], embedded, warning
        for (digest, _), vector in zip(missing, computed, strict=True):
            found[digest] = np.asarray(vector, dtype=np.float32)
        embedded += len(missing)
    return [found.get(h) for h in hashes], embedded, None
