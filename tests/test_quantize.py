"""The packaged model's int8-compute conversion: made once, cached privately, silent, clear on failure."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from openclaw_cli.errors import StoreError
from openclaw_cli.memory.embedding.onnx_embedder import local_model_files
from openclaw_cli.memory.embedding.quantize import cached_name, int8_compute_model


def test_conversion_is_cached_private_and_silent(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    source, _ = local_model_files()
    cache = tmp_path / "cache" / "models"
    first = int8_compute_model(source, cache)
    assert first == cache / cached_name(source) and first.stat().st_size > 1_000_000
    assert first.stat().st_mode & 0o777 == 0o600 and cache.stat().st_mode & 0o777 == 0o700
    stamp = first.stat().st_mtime_ns
    assert int8_compute_model(source, cache) == first
    assert first.stat().st_mtime_ns == stamp  # reused, not converted again
    assert [p.name for p in cache.iterdir()] == [first.name]  # no temporary files left behind
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
    from openclaw_cli.config import EmbeddingSettings
    from openclaw_cli.memory.embedding.loader import create_embedder

    source, _ = local_model_files()
    cache = tmp_path / "models"
    cached = int8_compute_model(source, cache)
    cached.write_bytes(b"not an onnx model")
    embedder = create_embedder(EmbeddingSettings(model="all-MiniLM-L6-v2-int8"), cache_dir=cache)
    assert embedder.embed_query("hello world").vector.shape == (384,)
    assert cached.stat().st_size > 1_000_000


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
    # Not even onnxruntime's telemetry session file (`.ses`): it is switched off (openclaw_cli/onnx_runtime.py).
    assert list(system_temp.iterdir()) == []
    assert [p.suffix for p in (tmp_path / "models").iterdir()] == [".onnx"]


def test_the_quantizer_stays_quiet_until_the_last_parallel_conversion_ends() -> None:
    # The two packaged models convert in parallel threads. With a plain logging.disable / NOTSET pair,
    # the first to finish re-enabled logging while the other was still quantizing, and its advice
    # reached the CLI's stderr ("WARNING:root:Please consider to run pre-processing...").
    import logging

    from openclaw_cli.onnx_runtime import quiet_quantizer

    first, second = quiet_quantizer(), quiet_quantizer()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert logging.root.manager.disable >= logging.WARNING  # the other conversion is still running
    second.__exit__(None, None, None)
    assert logging.root.manager.disable == logging.NOTSET
