"""The passage vectors of texts lately written a few at a time, so a text written again is not embedded
again (issue 54: near-repeated messages).

"Remember this" writes at once, in the turn. A person who notes nearly the same thing every day ("note
12: I watered the plants", then "note 13: ...") has the new note merged into the old one's record, whose
text then changes: the stored-vector cache (vector_cache.py) finds no live record with the earlier text,
and the next day's note was run through both models again, inside the turn. A vector depends on its text
alone (tests/test_embed.py), so a kept one is the one the model would give again.

Only writes of up to SMALL_WRITE texts use it (a turn's, an edit's): a bulk load's texts are new, and
would only churn it. `forget` empties it (memory/cached_words.py: a purge or a delete in this process).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from openclaw_cli.memory.passage_memo import PassageMemo

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.memory.store.embedder import Embedder

MEMO_SIZE = 256  # texts: 256 x 896 float32, under 1 MB
SMALL_WRITE = 8

_memo = PassageMemo(MEMO_SIZE)


def embed(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """`embedder.embed_passages(texts)`; kept texts are not embedded again."""
    return _memo.embed(embedder, texts)


def forget() -> None:
    _memo.forget()
