"""The stored vectors as an embedding cache: a text whose vector a live record already holds is not
embedded again (an import, a rerun batch, a rebuilt index). The cache key is the SHA-256 of the text and
the embedder; the cache is the vector index itself, so nothing else is stored.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from openclaw_cli.memory.store.vectors import written_passages

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.memory.store.embedder import Embedder
    from openclaw_cli.memory.store.protocol import MemoryStorage


def passage_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def embedder_key(identity_dict: dict[str, Any]) -> str:
    return f"{identity_dict['provider']}:{identity_dict['model']}:{identity_dict['dimensions']}"


def cached_vectors(storage: MemoryStorage, key: str, hashes: Iterable[str]) -> dict[str, Any]:
    """Vectors already stored for texts with these `passage_hash`es, made by the embedder `key`.

    A live record whose text has the same hash and whose vector is ready supplies it. Nothing is found
    when the index was made by another embedder.
    """
    stored = storage.vector_identity()
    if not storage.has_vectors() or stored is None or embedder_key(stored) != key:
        return {}
    found: dict[str, Any] = {}
    for digest in set(hashes):
        rowid = storage.row_with_text(digest)
        vector = None if rowid is None else storage.read_vectors([rowid]).get(rowid)
        if vector is not None:
            found[digest] = vector
    return found


def embed_cached(storage: MemoryStorage, embedder: Embedder, texts: Sequence[str]) -> list[np.ndarray]:
    """Passage vectors, taken from the stored vectors where the same text has one, computed otherwise.

    Computed vectors are cached by storing them: the caller writes them to the vector index.
    """
    return embed_cached_later(storage, embedder, texts, lambda compute: compute, kept=True)()


def embed_cached_later(
    storage: MemoryStorage,
    embedder: Embedder,
    texts: Sequence[str],
    start: Callable[[Callable[[], Any]], Callable[[], Any]],
    *,
    kept: bool = False,
) -> Callable[[], list[np.ndarray]]:
    """embed_cached in two steps: the stored vectors are read now, in the caller's thread (the storage's);
    `start(compute)` starts embedding the others (on a worker thread, for an import that writes the batch
    before meanwhile) and gives back how to wait for them. Call the result for the vectors; the
    embedder's errors are raised there. `kept`: a small write's texts go through the memo of texts
    written lately (written_passages.py)."""
    key = embedder_key(embedder.identity.to_dict())
    hashes = [passage_hash(t) for t in texts]
    found = cached_vectors(storage, key, hashes)
    missing = sorted({h: t for h, t in zip(hashes, texts, strict=True) if h not in found}.items())
    wanted = [t for _, t in missing]
    if kept and len(texts) <= written_passages.SMALL_WRITE:
        computing = start(lambda: written_passages.embed(embedder, wanted)) if missing else None
    else:
        computing = start(lambda: embedder.embed_passages(wanted)) if missing else None

    def vectors() -> list[np.ndarray]:
        if computing is not None:
            import numpy as np

            computed = computing()
            found.update(
                {
                    digest: np.asarray(v, dtype=np.float32)
                    for (digest, _), v in zip(missing, computed, strict=True)
                }
            )
        return [found[h] for h in hashes]

    return vectors
