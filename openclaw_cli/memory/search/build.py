"""Building a searcher for one store as it is now (MemoryService.searcher): the reranker, the embedder
only once the store has vectors, a warm process's per-store context caches, and the shared word tables.

Cheap to build: the embedder and reranker are cached per process by their factories. Everything is
imported inside the function: a one-search process starts loading the model before it imports the
searcher, so that the model's load overlaps that import.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openclaw_cli.config.loading import SearchSettings
    from openclaw_cli.memory.embedding.onnx_embedder import Embedder
    from openclaw_cli.memory.search.context_stages.about import ContextSteps
    from openclaw_cli.memory.search.pipeline import HybridSearcher
    from openclaw_cli.memory.store.memory_store import MemoryStore


def build_searcher(
    store: MemoryStore,
    search: SearchSettings,
    embedder_factory: Callable[[], Embedder],
    *,
    preloading: bool,
    warm: bool,
    contexts: dict[Path, ContextSteps],
    word_cache_dir: Path,
    model_cache_dir: Path,
) -> HybridSearcher:
    """A searcher for `store`: `preloading` when a background load of the embedder runs (the searcher then
    gets it when it first uses it), `warm` to keep each store's context steps in `contexts`."""
    from openclaw_cli.memory.search.pipeline import HybridSearcher

    reranker = None
    if search.rerank.provider != "none":
        from openclaw_cli.memory.search.rerank import create_reranker

        reranker = create_reranker(search.rerank)
    embedder: Embedder | None = None
    if store.storage.has_vectors():
        # While a preload runs, the searcher gets the embedder when it first uses it (after the
        # keyword leg), not now.
        from openclaw_cli.memory.embedding.deferred import DeferredEmbedder

        embedder = DeferredEmbedder(embedder_factory) if preloading else embedder_factory()
    context = None
    if warm:  # each memory's subject and answer kinds are read once per process, not per search
        from openclaw_cli.memory.search.context_stages.about import ContextSteps

        context = contexts.setdefault(store.path, ContextSteps(store, search))
    # Words the `neighbours` stage embeds are kept for later searches of any process of the home: a
    # one-search process, and a warm one's first search of a question, then read them (~1 ms).
    from openclaw_cli.memory.embedding.word_table import WordTables

    words = WordTables.now(word_cache_dir, model_cache_dir)
    return HybridSearcher(store, search, embedder, reranker, warm=warm, context=context, word_tables=words)
