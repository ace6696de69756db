"""Forgetting the words that caches keep, with the memories they came from.

A purge or a delete forgets memories, but these caches may still hold their words:
- the home's word tables (embedding/word_table.py);
- this process's cached word vectors (search/legs/neighbours.py);
- the model's kept phrasings of questions (query_expansion.py);
- this process's vectors of queries (search/legs/query_memo.py) and of texts lately written
  (store/vectors/written_passages.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

from openclaw_cli.core.errors import StoreError


def forget_cached_words(word_cache_dir: Path, model_cache_dir: Path) -> list[Path]:
    """Empty the home's word tables, remove those an earlier version kept in the model cache, and drop
    what this process keeps. Returns the table files that still hold words (normally none)."""
    from openclaw_cli.memory.embedding.word_table import forget_words

    left = forget_words(word_cache_dir, model_cache_dir)
    # Only a process that has searched (or expanded a query through the model) holds anything, and it
    # has loaded the module that keeps it; the others need not import it.
    for module, forget in (
        ("openclaw_cli.memory.search.legs.neighbours", "forget_cached_words"),
        ("openclaw_cli.memory.search.legs.query_memo", "forget"),
        ("openclaw_cli.memory.query_expansion", "clear_cache"),
        ("openclaw_cli.memory.store.vectors.written_passages", "forget"),
    ):
        # A module another thread is still importing (a gateway's turn) is in sys.modules half made,
        # without the function yet: it has cached nothing, so there is nothing to forget.
        function = getattr(sys.modules.get(module), forget, None)
        if function is not None:
            function()
    return left


def require_forgotten(left: list[Path], done: str) -> None:
    """Fail when a table could be neither emptied nor removed: `done` says what did happen."""
    if left:
        names = ", ".join(str(path) for path in left)
        raise StoreError(
            f"{done}, but the cache of searched words could not be emptied: {names}",
            hint="delete these files (a cache: nothing is lost)",
        )
