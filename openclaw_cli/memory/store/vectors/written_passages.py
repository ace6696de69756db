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

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.memory.store.embedder import Embedder

MEMO_SIZE = 256  # texts: 256 x 896 float32, under 1 MB
SMALL_WRITE = 8

# (the embedder's identity, the text) -> its vector; least recently used out first
_kept: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_lock = threading.Lock()


def embed(embedder: Embedder, texts: Sequence[str]) -> list[np.ndarray]:
    """`embedder.embed_passages(texts)`, as a list of vectors; kept texts are not embedded again."""
    identity = embedder.identity
    model = f"{identity.provider}:{identity.model}:{identity.dimensions}"
    with _lock:
        found = {text: _kept[(model, text)] for text in texts if (model, text) in _kept}
    missing = [text for text in dict.fromkeys(texts) if text not in found]
    if missing:
        found.update(zip(missing, embedder.embed_passages(missing), strict=True))
    with _lock:
        for text in dict.fromkeys(texts):
            _kept[(model, text)] = found[text]
            _kept.move_to_end((model, text))
        while len(_kept) > MEMO_SIZE:
            _kept.popitem(last=False)
    return [found[text].copy() for text in texts]  # a caller may scale its own copy in place


def forget() -> None:
    with _lock:
        _kept.clear()
