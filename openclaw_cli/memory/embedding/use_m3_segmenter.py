"""Which of USE-m3's two segmentations a process uses, and when it loads the costly one.

Both give the same piece ids (tests/test_use_m3.py checks them against the package's own tokenizer):
- the piece table (embedding/use_m3_pieces.py) opens in ~45 ms and ~11 MB, and segments a sentence in
  ~46 µs once its lookups are in its memo (~370 µs the first time);
- tokenizers' Unigram from tokenizer.json takes ~0.46 s of CPU (holding the GIL) and ~128 MB to load, and
  then ~12 µs a sentence.

A process starts with the table. Only bulk work (a call that segments BULK_TEXTS texts or more: a batch of
memories, an index rebuild, the words of a store) starts loading the full tokenizer, on a thread of its
own; calls go on with the table until it is there. So a gateway, a chat or a `memory index` of a small
store no longer pays 0.46 s and 128 MB for the few texts they segment, and bulk work still gets the faster
segmentation within its first chunk. A process that embeds a few texts and exits (`fast_start`) never
loads it.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from openclaw_cli.background import start_load

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from openclaw_cli.memory.embedding.use_m3_pieces import PieceTokenizer

# A call segmenting this many texts is bulk work: what the full tokenizer saves on it (~34 µs a text
# against a warm table, ~360 µs against a cold one) soon repays its load.
BULK_TEXTS = 64
UNK = 0  # fixed by the SentencePiece trainer spec of the shipped model
_UNK_PIECE = "<unk>"


class Segmenter:
    """USE-m3's piece ids of a text, from the table until bulk work has loaded the full tokenizer."""

    def __init__(self, pieces: PieceTokenizer, tokenizer_json: Path | None, max_tokens: int) -> None:
        """`tokenizer_json`: where the full tokenizer is, or None for a process that never loads it."""
        self._pieces = pieces
        self._source = tokenizer_json
        self._max_tokens = max_tokens
        self._full: Tokenizer | None = None  # set once, by the loading thread or load_full
        self._loading: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def full_loaded(self) -> bool:
        return self._full is not None

    def expect(self, count: int) -> None:
        """`count` texts are about to be segmented: bulk work starts loading the full tokenizer."""
        if count < BULK_TEXTS or self._source is None or self._loading is not None:
            return
        with self._lock:
            if self._loading is None:  # a failed load leaves the table answering, with the same ids
                self._loading = start_load(self.load_full, "use-m3-vocabulary")

    def load_full(self) -> None:
        """Load the full tokenizer now, in this thread (a failure raises, as loading it at start did)."""
        if self._full is None and self._source is not None:
            from openclaw_cli.memory.embedding.onnx_embedder import load_tokenizer

            self._full = load_tokenizer(self._source, self._max_tokens)

    def piece_ids(self, text: str) -> list[int]:
        full = self._full
        return full_piece_ids(full, text) if full is not None else self._pieces.piece_ids(text)


def full_piece_ids(tokenizer: Tokenizer, text: str) -> list[int]:
    """SentencePiece ids of `text`, without BOS/EOS; [unk] for a text that normalises to nothing.

    tokenizers' Unigram fuses a run of unknown characters into one [unk]; SentencePiece (and the package
    the model was validated with) gives one [unk] per character, and the vector depends on the count.
    So the model runs on the normalised text directly and each fused [unk] is split up again: one per
    literal "<unk>" in it (the piece itself matches, with the best possible score 0) and one per other
    character (only characters no piece starts with become [unk]).
    """
    assert tokenizer.normalizer is not None
    normalized = tokenizer.normalizer.normalize_str(text)
    ids: list[int] = []
    for token in tokenizer.model.tokenize(normalized) if normalized else []:
        if token.id == UNK:
            parts = token.value.split(_UNK_PIECE)
            ids.extend([UNK] * (len(parts) - 1 + sum(map(len, parts))))
        else:
            ids.append(token.id)
    return ids or [UNK]
