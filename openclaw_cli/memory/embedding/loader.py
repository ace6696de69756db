"""Which embedder the settings name, and loading it once per process.

`provider: local` is the packaged models (MiniLM and USE-m3 side by side by default), `onnx` any local
ONNX export, `litellm` an API model. Models load inside these functions: importing this module costs
nothing, and start-up time matters.
"""

from __future__ import annotations

import functools
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.background import start_load
from openclaw_cli.core.errors import ConfigError, OpenclawError, StoreError
from openclaw_cli.core.thread_imports import settle_numpy
from openclaw_cli.memory.embedding.onnx_embedder import (
    LOCAL_DIMENSIONS,
    LOCAL_MODEL_NAME,
    Embedder,
    EmbedderIdentity,
    OnnxEmbedder,
    local_model_files,
    model_dir_files,
)

if TYPE_CHECKING:
    from openclaw_cli.config.loading import EmbeddingSettings

# The packaged models `provider: local` offers, by name, with their vector widths. The first is the
# default: the English and multilingual models side by side (embedding/composite.py).
LOCAL_MODELS = {
    "all-MiniLM-L6-v2-int8+use-m3-int8": 896,
    LOCAL_MODEL_NAME: LOCAL_DIMENSIONS,
    "use-m3-int8": 512,
}


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
    `cache_dir` holds the packaged model converted to int8 compute (embedding/quantize.py); without one, the
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


def settle_imports(settings: EmbeddingSettings) -> None:
    """Import, in the calling thread, what loading these settings' local models imports, before a thread
    that loads them starts: numpy must not be imported by two threads at once (thread_imports), and a
    preload thread that finds its modules imported goes straight to building the model sessions, which
    run without holding the GIL while the calling thread goes on with its own imports."""
    settle_numpy()
    if settings.provider == "local":
        from openclaw_cli.core.onnx_runtime import runtime

        runtime()
        from openclaw_cli.memory.embedding import composite, quantize  # noqa: F401
        from openclaw_cli.memory.embedding.use_m3 import model as use_m3  # noqa: F401


def model_cache_dir(settings: EmbeddingSettings, default: Path) -> Path:
    """Where converted models are cached: memory.embedding.modelCacheDir, else `default` (the CLI passes
    Home.model_cache_dir: the user's cache shared by every home)."""
    return Path(settings.model_cache_dir).expanduser() if settings.model_cache_dir else default


def preload(settings: EmbeddingSettings, *, cache_dir: Path, one_shot: bool = False) -> None:
    """Start create_embedder(settings, one_shot=..., cache_dir=...) in a background thread, for a process
    that will ask for it soon: the sessions build without holding the GIL while the caller goes on with
    its imports, and its own create_embedder call then waits for (or finds) the result. A failure is not
    reported here: that call meets it again. The process waits for the load before it exits, since a
    model half-loaded at interpreter exit can crash it."""
    settle_imports(settings)
    start_load(
        functools.partial(create_embedder, settings, one_shot=one_shot, cache_dir=cache_dir),
        "embedder-preload",
    )


def load_bulk_ahead(expected: int | None) -> None:
    """For a process about to embed `expected` texts (None: not known yet), before its settings are
    read: start loading what the packaged models need for bulk work only (USE-m3's full segmentation,
    embedding/use_m3/segmenter.py), on a core that is idle until the model sessions build. Not for a
    count below bulk work's; unused if the settings name other models."""
    from openclaw_cli.memory.embedding.use_m3.segmenter import BULK_TEXTS, load_ahead

    if expected is None or expected >= BULK_TEXTS:
        load_ahead()


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
    from openclaw_cli.memory.embedding.api import LiteLLMEmbedder

    return LiteLLMEmbedder(settings)


def _local_embedder(
    settings: EmbeddingSettings, *, optimise: bool, cache_dir: Path, fast_start: bool
) -> Embedder:
    """The packaged models: MiniLM and USE-m3 side by side (the default), or either alone."""
    from openclaw_cli.memory.store import layout as models

    model = _check_local(settings)
    if model == models.USE_M3:
        return _multilingual(settings, cache_dir, fast_start)
    if model == models.MINILM:
        return _minilm(settings, optimise=optimise, cache_dir=cache_dir)
    from concurrent.futures import ThreadPoolExecutor

    from openclaw_cli.memory.embedding.composite import CompositeEmbedder

    # The two models load side by side: onnxruntime builds a session without holding the GIL.
    settle_numpy()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="model-load") as helper:
        multilingual = helper.submit(_multilingual, settings, cache_dir, fast_start)
        english = _minilm(settings, optimise=optimise, cache_dir=cache_dir)
        return CompositeEmbedder(english, multilingual.result())


def _multilingual(settings: EmbeddingSettings, cache_dir: Path, fast_start: bool) -> Embedder:
    from openclaw_cli.memory.embedding.use_m3.model import MultilingualEmbedder

    return MultilingualEmbedder(cache_dir, threads=settings.threads, fast_start=fast_start)


def _minilm(settings: EmbeddingSettings, *, optimise: bool, cache_dir: Path) -> OnnxEmbedder:
    from openclaw_cli.memory.embedding.quantize import int8_compute_model, remove_cached

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
            remove_cached(model)
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
    from openclaw_cli.memory.store import layout as models

    model = settings.model or models.COMPOSITE
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
