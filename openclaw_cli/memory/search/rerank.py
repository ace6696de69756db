"""Optional second-stage rerankers: a local cross-encoder ONNX export, or an API reranker through litellm.

A reranker scores (query, document) pairs jointly, which a bi-encoder cannot; search applies it to the
fused top candidates only. Heavy libraries are imported inside functions.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from openclaw_cli.core.errors import ConfigError, OpenclawError
from openclaw_cli.memory.embedding.onnx_embedder import (
    feed_for,
    load_session,
    load_tokenizer,
    model_dir_files,
    pad_encodings,
)
from openclaw_cli.memory.text.analysis import detect_language

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.config.loading import RerankSettings
    from openclaw_cli.memory.search.stages import Pass
    from openclaw_cli.memory.store.memory_store import MemoryStore

# Cross-encoders read query and document together; 512 word pieces is the usual BERT-family limit.
PAIR_MAX_TOKENS = 512
PAIR_BATCH = 16
ONNX_THREADS = 2
API_MAX_RETRIES = 2


class Reranker(Protocol):
    @property
    def name(self) -> str: ...

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]: ...


class RerankUnavailable(OpenclawError):
    """The API reranker failed; search can fall back to the fused order."""


def scores_from_logits(logits: np.ndarray, source: str) -> np.ndarray:
    """One relevance score per row: a single logit as is; for two classes, the log-odds of 'relevant'."""
    if logits.ndim == 1:
        return logits.astype("float32")
    if logits.ndim == 2 and logits.shape[1] == 1:
        return logits[:, 0].astype("float32")
    if logits.ndim == 2 and logits.shape[1] == 2:
        # Monotonic in softmax(logits)[:, 1], and keeps the spread that softmax would squash.
        return (logits[:, 1] - logits[:, 0]).astype("float32")
    raise ConfigError(
        f"{source}: output of shape {list(logits.shape)} is not cross-encoder logits",
        hint="expected (batch, 1) or (batch, 2); a sentence embedding model cannot rerank",
    )


class OnnxReranker:
    """A cross-encoder export directory (model.onnx + tokenizer.json), e.g. ms-marco-MiniLM-L-6-v2."""

    def __init__(self, directory: str | None, *, threads: int = ONNX_THREADS) -> None:
        model, tokenizer = model_dir_files(directory, "memory.search.rerank")
        self.name = f"onnx:{model.parent.resolve()}"
        self._session = load_session(model, threads)
        self._tokenizer = load_tokenizer(tokenizer, PAIR_MAX_TOKENS)
        self._lock = threading.Lock()
        self._check_output(model)

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        import numpy as np

        if not documents:
            return []
        encodings = self._tokenizer.encode_batch([(query, doc) for doc in documents])
        scores = np.empty(len(documents), dtype=np.float32)
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), PAIR_BATCH):
            chunk = order[start : start + PAIR_BATCH]
            arrays = pad_encodings([encodings[i] for i in chunk])
            with self._lock:
                logits = self._session.run(None, feed_for(self._session, arrays))[0]
            scores[chunk] = scores_from_logits(np.asarray(logits), self.name)
        return [float(s) for s in scores]

    def _check_output(self, model: Path) -> None:
        """Refuse at load time a model whose first output cannot be logits (e.g. an embedding model)."""
        output = self._session.get_outputs()[0]
        shape = list(output.shape)
        last = shape[-1] if shape else None
        if len(shape) == 1 or (len(shape) == 2 and (not isinstance(last, int) or last in (1, 2))):
            return
        raise ConfigError(
            f"reranker model {model}: first output '{output.name}' has shape {shape}, "
            "not cross-encoder logits (batch, 1) or (batch, 2)",
            hint="memory.search.rerank.path must be a cross-encoder export, not an embedding model",
        )


class LiteLLMReranker:
    """A Cohere/Jina-style rerank API (cohere/..., jina_ai/..., infinity/..., hosted_vllm/...)."""

    def __init__(self, settings: RerankSettings, *, retry_base_delay: float = 0.5) -> None:
        if not settings.model:
            raise ConfigError(
                "memory.search.rerank.model is required for provider litellm",
                hint="e.g. openclaw config set memory.search.rerank.model cohere/rerank-english-v3.0",
            )
        self._model = settings.model
        self._api_base = settings.api_base
        self._retry_base_delay = retry_base_delay
        self.name = f"litellm:{settings.model}"

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        from openclaw_cli.llm import calls as llm

        if not documents:
            return []
        try:
            ranked = llm.rerank(
                self._model,
                query,
                documents,
                self._api_base,
                top_n=len(documents),
                max_retries=API_MAX_RETRIES,
                base_delay=self._retry_base_delay,
            )
        except llm.ModelUnavailable as exc:
            raise RerankUnavailable(f"reranker {self.name} unavailable: {exc.message}") from exc
        # A document the API left out ranks below every one it scored.
        floor = min((score for _, score in ranked), default=0.0) - 1.0
        scores = [floor] * len(documents)
        for index, score in ranked:
            scores[index] = score
        return scores


_cache: dict[str, Reranker] = {}
_cache_lock = threading.Lock()


def create_reranker(settings: RerankSettings) -> Reranker | None:
    """The configured reranker (loaded once per process), or None when reranking is off."""
    if settings.provider == "none":
        return None
    key = settings.model_dump_json(exclude={"top_n"})
    with _cache_lock:
        cached = _cache.get(key)
        if cached is None:
            cached = OnnxReranker(settings.path) if settings.provider == "onnx" else LiteLLMReranker(settings)
            _cache[key] = cached
        return cached


def rerank_candidates(reranker: Reranker, settings: RerankSettings, store: MemoryStore, p: Pass) -> None:
    """The search's rerank step: the best `settings.top_n` candidates whose query and memory are in the
    reranker's languages, put in the reranker's order."""
    query, merged, facts = p.request.query, p.candidates, p.facts
    languages = set(settings.languages)
    if languages and detect_language(query) not in languages:
        return
    top = [c for c in merged[: settings.top_n] if not languages or facts[c.rowid].language in languages]
    if not top:
        return
    records = store.by_rowids(c.rowid for c in top)
    top = [c for c in top if c.rowid in records]
    try:
        scores = reranker.rerank(query, [records[c.rowid].l0 for c in top])
    except RerankUnavailable as exc:
        p.result.warnings.append(f"{exc.message}: results are in fused order")
        return
    for candidate, score in zip(top, scores, strict=True):
        candidate.rerank_score = float(score)
    # The reranker decides the order of the candidates it scored; they keep the relevance values they had
    # between them, so scores stay on the one documented scale and the floors mean the same.
    values = sorted((c.relevance for c in top), reverse=True)
    for candidate, value in zip(sorted(top, key=lambda c: -(c.rerank_score or 0.0)), values, strict=True):
        candidate.relevance = value
        candidate.trail.append(("rerank", candidate.rerank_score or 0.0, value))
    merged.sort(key=lambda c: (-c.relevance, -(c.rerank_score or 0.0), c.rowid))
