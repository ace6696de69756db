"""The packaged model's int8-compute conversion: made once, cached privately, silent, clear on failure."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from openclaw_cli.core.errors import StoreError
from openclaw_cli.memory.embedding.onnx_embedder import local_model_files
from openclaw_cli.memory.embedding.quantize import cached_name, int8_compute_model, is_cached, weights_path
from tests.memory_helpers import shared_model_cache


def _converted(cache: Path) -> Path:
    """`cache` holding the packaged model's conversion, copied from the run's shared model cache (made
    there once, as for every CLI test home): a conversion costs ~4 s of CPU, and the tests that use this
    are about what a later call does with the converted files; the first conversion itself is
    test_conversion_is_cached_private_and_silent's subject."""
    shared = int8_compute_model(local_model_files()[0], shared_model_cache())
    cache.mkdir(parents=True, mode=0o700)
    for path in (shared, weights_path(shared)):
        shutil.copy2(path, cache / path.name)
    return cache / shared.name


def test_conversion_is_cached_private_and_silent(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    source, _ = local_model_files()
    cache = tmp_path / "cache" / "models"
    first = int8_compute_model(source, cache)
    weights = weights_path(first)
    assert first == cache / cached_name(source)
    # The weights in their own file (ONNX external data), the graph alone in the model file.
    assert weights.stat().st_size > 20_000_000 and first.stat().st_size < 1_000_000
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in (first, weights))
    assert cache.stat().st_mode & 0o777 == 0o700
    stamp = first.stat().st_mtime_ns
    assert int8_compute_model(source, cache) == first
    assert first.stat().st_mtime_ns == stamp  # reused, not converted again
    lock = cache / f"{first.name}.lock"  # kept: other processes wait on it while one converts
    assert sorted(p.name for p in cache.iterdir()) == sorted(
        [first.name, weights.name, lock.name]
    )  # no temp files
    assert lock.stat().st_mode & 0o777 == 0o600
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_a_changed_source_gets_a_new_cache_entry(tmp_path: Path) -> None:
    source, _ = local_model_files()
    copy = tmp_path / "model.onnx"
    copy.write_bytes(source.read_bytes())
    before = cached_name(copy)
    os.utime(copy, ns=(1_000_000_000, 1_000_000_000))
    assert cached_name(copy) != before


def test_an_unwritable_cache_is_a_clear_error(tmp_path: Path) -> None:
    source, _ = local_model_files()
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache directory should be")
    with pytest.raises(StoreError) as error:
        int8_compute_model(source, blocked / "models")
    assert "models" in error.value.message or "blocked" in error.value.message
    assert blocked.read_text() == "a file where the cache directory should be"


def test_a_damaged_cached_model_is_converted_again(tmp_path: Path) -> None:
    from openclaw_cli.config.loading import EmbeddingSettings
    from openclaw_cli.memory.embedding.loader import create_embedder

    source, _ = local_model_files()
    cache = tmp_path / "models"
    cached = _converted(cache)
    assert cached == int8_compute_model(source, cache) and is_cached(cached)  # found, not converted
    cached.write_bytes(b"not an onnx model")
    embedder = create_embedder(EmbeddingSettings(model="all-MiniLM-L6-v2-int8"), cache_dir=cache)
    assert embedder.embed_query("hello world").vector.shape == (384,)
    assert cached.stat().st_size > 100_000


def test_a_truncated_weights_file_is_converted_again(tmp_path: Path) -> None:
    from openclaw_cli.config.loading import EmbeddingSettings
    from openclaw_cli.memory.embedding.loader import create_embedder

    source, _ = local_model_files()
    cache = tmp_path / "models"
    weights = weights_path(_converted(cache))
    assert int8_compute_model(source, cache) == weights.with_suffix("")
    size = weights.stat().st_size
    with weights.open("r+b") as handle:
        handle.truncate(size // 2)
    embedder = create_embedder(EmbeddingSettings(model="all-MiniLM-L6-v2-int8"), cache_dir=cache)
    assert embedder.embed_query("hello world").vector.shape == (384,)
    assert weights.stat().st_size == size


def test_a_missing_weights_file_means_conversion(tmp_path: Path) -> None:
    from openclaw_cli.config.loading import EmbeddingSettings
    from openclaw_cli.memory.embedding.deferred import model_needs_preparing

    source, _ = local_model_files()
    cache = tmp_path / "models"
    model = _converted(cache)
    assert int8_compute_model(source, cache) == model
    settings = EmbeddingSettings(model="all-MiniLM-L6-v2-int8")
    assert not model_needs_preparing(settings, cache)
    weights_path(model).unlink()  # a crash between the two renames, or a file removed by hand
    assert not is_cached(model) and model_needs_preparing(settings, cache)
    assert int8_compute_model(source, cache) == model and is_cached(model)
    assert not model_needs_preparing(settings, cache)


def test_external_weights_give_the_vectors_of_the_single_file_model(tmp_path: Path) -> None:
    """The weights file holds the same bytes the single-file model held: the vectors are bit-identical."""
    import numpy as np
    import onnx

    from openclaw_cli.memory.embedding.onnx_embedder import OnnxEmbedder

    source, tokenizer = local_model_files()
    split = _converted(tmp_path / "models")
    whole = tmp_path / "whole.onnx"
    onnx.save_model(onnx.load(str(split)), str(whole))  # the weights read back into one file
    assert not list(tmp_path.glob("whole.onnx.*"))

    texts = ["I like coffee in the morning", "PR #4521 fixed the login bug", "Maya's sister lives in Lyon"]
    for optimise in (True, False):
        split_run = OnnxEmbedder("local", "m", split, tokenizer, threads=1, per_text=True, optimise=optimise)
        whole_run = OnnxEmbedder("local", "m", whole, tokenizer, threads=1, per_text=True, optimise=optimise)
        assert np.array_equal(split_run.embed_passages(texts), whole_run.embed_passages(texts))
        assert np.array_equal(split_run.embed_query(texts[0]).vector, whole_run.embed_query(texts[0]).vector)


def test_the_conversion_writes_nothing_to_the_system_temp_dir(tmp_path: Path) -> None:
    """onnxruntime's quantizer keeps an ~80 MB copy of the model in the temp dir; it belongs in the
    private cache, where a killed conversion's leftovers are found and removed by doctor."""
    import os
    import subprocess
    import sys

    system_temp = tmp_path / "system-temp"
    system_temp.mkdir()
    script = (
        "import sys; from pathlib import Path; "
        "from openclaw_cli.memory.embedding.onnx_embedder import local_model_files; "
        "from openclaw_cli.memory.embedding.quantize import int8_compute_model; "
        "int8_compute_model(local_model_files()[0], Path(sys.argv[1]))"
    )
    env = {**os.environ, "TMPDIR": str(system_temp)}
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "models")], env=env, cwd=root, capture_output=True
    )
    assert done.returncode == 0, done.stderr
    # Not even onnxruntime's telemetry session file (`.ses`): it is switched off (openclaw_cli/core/onnx_runtime.py).
    assert list(system_temp.iterdir()) == []
    assert sorted(p.suffix for p in (tmp_path / "models").iterdir()) == [".lock", ".onnx", ".weights"]


def test_the_quantizer_stays_quiet_until_the_last_parallel_conversion_ends() -> None:
    # The two packaged models convert in parallel threads. With a plain logging.disable / NOTSET pair,
    # the first to finish re-enabled logging while the other was still quantizing, and its advice
    # reached the CLI's stderr ("WARNING:root:Please consider to run pre-processing...").
    import logging

    from openclaw_cli.core.onnx_runtime import quiet_quantizer

    first, second = quiet_quantizer(), quiet_quantizer()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert logging.root.manager.disable >= logging.WARNING  # the other conversion is still running
    second.__exit__(None, None, None)
    assert logging.root.manager.disable == logging.NOTSET
