"""Which of USE-m3's two segmentations a process uses, and when it loads the costly one.

Both give the same piece ids (tests/test_use_m3.py checks them against the package's own tokenizer):
- the piece table (embedding/use_m3/pieces.py) opens in ~45 ms and ~11 MB, and segments a sentence in
  ~46 µs once its lookups are in its memo (~370 µs the first time);
- the `sentencepiece` library on the package's sp.model takes ~0.16-0.2 s and ~30 MB to load, without
  holding the GIL, and then a few µs a sentence. (tokenizers' Unigram from tokenizer.json, used before,
  took 0.3-0.46 s holding the GIL, and 128 MB: it stalled every embedding thread of a bulk load's first
  chunk.)

A process starts with the table. Only bulk work (a call that segments BULK_TEXTS texts or more: a batch of
memories, an index rebuild, the words of a store) starts loading the full segmentation, on a thread of its
own; calls go on with the table until it is there. So a gateway, a chat or a `memory index` of a small
store does not pay for it, and bulk work gets the faster segmentation within its first chunk. A process
that embeds a few texts and exits (`fast_start`) never loads it.

A command that is bulk work from its arguments (`memory add --batch` and `memory import` of a file of
BULK_TEXTS lines or more, of stdin or of a pipe) starts the load at once (`load_ahead`), before it reads
its settings: until the model sessions build, only its main thread runs, so the load (~0.2 s, all but
~35 ms of it off the GIL) takes a core that is otherwise idle, and not the embedding's first chunk. One
load serves every embedder of the process (`shared_segmentation`).
"""

from __future__ import annotations

import functools
import operator
import threading
from contextlib import suppress
from itertools import compress
from pathlib import Path
from typing import TYPE_CHECKING

from openclaw_cli.core.background import start_load
from openclaw_cli.core.errors import StoreError

if TYPE_CHECKING:
    from sentencepiece import SentencePieceProcessor

    from openclaw_cli.memory.embedding.use_m3.pieces import PieceTokenizer

# A call segmenting this many texts is bulk work: what the full segmentation saves on it (~40 µs a text
# against a warm table, ~360 µs against a cold one) soon repays its load.
BULK_TEXTS = 64
UNK = 0  # fixed by the SentencePiece trainer spec of the shipped model


class Segmenter:
    """USE-m3's piece ids of a text, from the table until bulk work has loaded the full segmentation."""

    def __init__(self, pieces: PieceTokenizer, sp_model: Path | None) -> None:
        """`sp_model`: the package's SentencePiece model, or None for a process that never loads it."""
        self._pieces = pieces
        self._source = sp_model
        self._full: FullSegmentation | None = None  # set once, by the loading thread or load_full
        self._loading: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def full_loaded(self) -> bool:
        return self._full is not None

    def expect(self, count: int) -> None:
        """`count` texts are about to be segmented: bulk work starts loading the full segmentation."""
        if count < BULK_TEXTS or self._source is None or self._loading is not None:
            return
        with self._lock:
            if self._loading is None:  # a failed load leaves the table answering, with the same ids
                self._loading = start_load(self.load_full, "use-m3-vocabulary")

    def load_full(self) -> None:
        """Load the full segmentation now, in this thread (a failure raises), or take the process's."""
        if self._full is None and self._source is not None:
            full = shared_segmentation(self._source)
            full.specials  # noqa: B018 -- computed here, in the loading thread, not by the first text
            self._full = full

    def piece_ids(self, text: str) -> list[int]:
        full = self._full
        if full is None:
            return self._pieces.piece_ids(text)
        normalized = self._pieces.normalize(text)
        ids = full.piece_ids(normalized) if normalized else None
        return ids if ids is not None else self._pieces.normalized_piece_ids(normalized)


_shared: dict[Path, FullSegmentation] = {}
_shared_locks: dict[Path, threading.Lock] = {}
_registry_lock = threading.Lock()


def shared_segmentation(sp_model: Path) -> FullSegmentation:
    """The process's full segmentation of `sp_model`, loaded by the first caller; the others wait for
    that load instead of making their own (a failed load raises, and the next caller tries again)."""
    with _registry_lock:
        lock = _shared_locks.setdefault(sp_model, threading.Lock())
    with lock:
        if sp_model not in _shared:
            _shared[sp_model] = FullSegmentation(sp_model.read_bytes())
        return _shared[sp_model]


def load_ahead() -> None:
    """Start loading the packaged model's full segmentation on a thread of its own, for a process about
    to embed in bulk, before it knows which models its settings name: if they do not name USE-m3 the
    load is never used (~0.2 s of a core, ~30 MB). A missing package is met again where the model loads."""
    from openclaw_cli.memory.embedding.use_m3.package import package_resources

    with suppress(StoreError):
        sp_model = package_resources()[1]
        start_load(lambda: shared_segmentation(sp_model), "use-m3-vocabulary-ahead")


class FullSegmentation:
    """SentencePiece's own segmentation of text normalised beforehand (the table's normaliser), adjusted
    to the package's tokenizer in its two differences:
    - a run of unknown characters is one [unk] for `sentencepiece`, one per character for the package
      (the vector depends on the count);
    - the package lets a special piece (<unk>, <s>, a user-defined symbol) match inside a text as any
      other piece; such rare texts are left to the table (`piece_ids` answers None).
    """

    def __init__(self, sp_model: bytes) -> None:
        import sentencepiece

        from openclaw_cli.memory.embedding.use_m3.sentencepiece_model import without_normalizer

        processor = sentencepiece.SentencePieceProcessor(model_proto=without_normalizer(sp_model))
        self._processor: SentencePieceProcessor = processor

    @functools.cached_property
    def specials(self) -> tuple[str, ...]:
        """Asked for apart from the load (~27 ms holding the GIL): a load ahead runs beside the command's
        imports, which want the GIL all the time, and the embedder that takes it over asks for these
        once the model sessions run, which hardly do."""
        return _special_pieces(self._processor)

    def piece_ids(self, normalized: str) -> list[int] | None:
        if any(special in normalized for special in self.specials):
            return None
        ids: list[int] = self._processor.encode(normalized)
        if UNK in ids:
            ids = []
            for piece in self._processor.encode(normalized, return_type="proto").pieces:
                ids.extend([UNK] * len(piece.surface) if piece.id == UNK else [piece.id])
        return ids or [UNK]


def _special_pieces(processor: SentencePieceProcessor) -> tuple[str, ...]:
    """The pieces that may not be ordinary text: unknown, control and unused ones, and those scored 0
    (user-defined symbols are; no learnt piece is), which the library has no test for. Asked of all
    128,000 ids at once, and sifted by itertools.compress: a call per id took ~80 ms, a Python loop over
    the answers ~30 ms."""
    ids = range(processor.get_piece_size())
    asked = list(ids)
    special: set[int] = set()
    for flags in (processor.IsUnknown(asked), processor.IsControl(asked), processor.IsUnused(asked)):
        special.update(compress(ids, flags))
    special.update(compress(ids, map(operator.not_, processor.GetScore(asked))))  # a score of 0.0
    return tuple(processor.IdToPiece(sorted(special)))
