"""The passage vectors a long-lived transcript index embedded last, so a text said again is not embedded
again (issue 54: "re-embedding the same text").

The transcript index embeds every new turn on its background thread (memory/transcripts/index.py), on the same
two cores as the turns it follows. People say the same things ("ok", "thanks", a daily note) and an
assistant repeats its replies; each was run through both models again. A vector depends on its text
alone (tests/test_embed.py: not on the batch), so a kept one is the one the model would give again.

At most MEMO_SIZE texts, least recently used out first, keyed by the embedder's identity and the text;
`forget` empties it (a purge: the vectors are of people's words).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.memory.store.embedder import Embedder

MEMO_SIZE = 512  # 512 x 896 float32: under 2 MB


class PassageMemo:
    def __init__(self, size: int = MEMO_SIZE) -> None:
        self._size = size
        self._kept: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
        """`embedder.embed_passages(texts)`, the texts kept from before not embedded again."""
        import numpy as np

        identity = embedder.identity
        model = f"{identity.provider}:{identity.model}:{identity.dimensions}"
        with self._lock:
            found = {text: self._kept[(model, text)] for text in texts if (model, text) in self._kept}
        missing = [text for text in dict.fromkeys(texts) if text not in found]
        if missing:
            fresh = embedder.embed_passages(missing)
            found.update(zip(missing, fresh, strict=True))
        with self._lock:
            for text in dict.fromkeys(texts):
                self._kept[(model, text)] = found[text]
                self._kept.move_to_end((model, text))
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        if not texts:
            return np.zeros((0, identity.dimensions), dtype=np.float32)
        return np.stack([found[text] for text in texts])

    def forget(self) -> None:
        with self._lock:
            self._kept.clear()
