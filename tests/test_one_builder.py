"""Derived files that take seconds to build (the two converted models, jieba's lookup table) are built by
one process at a time: a process that finds a build under way waits for it and uses its result instead of
building the same files again beside it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from openclaw_cli.memory.embedding.onnx_embedder import local_model_files
from openclaw_cli.memory.embedding.quantize import cached_name, int8_compute_model, weights_path
from openclaw_cli.memory.embedding.use_m3 import model as use_m3
from openclaw_cli.memory.text import jieba_lookup
from tests.memory_helpers import shared_model_cache

HOLD_LOCK = """
import sys, filelock
lock = filelock.FileLock(sys.argv[1], mode=0o600)
lock.acquire()
print("held", flush=True)
sys.stdin.read()
"""


def _minilm(cache: Path) -> tuple[Path, list[Path], Callable[[], object]]:
    """(the file whose lock guards the build, the files the build makes, the call that builds them)."""
    source = local_model_files()[0]
    target = cache / cached_name(source)
    return target, [target, weights_path(target)], lambda: int8_compute_model(source, cache)


def _use_m3(cache: Path) -> tuple[Path, list[Path], Callable[[], object]]:
    model = use_m3.cached_model(cache)
    return model, [model, use_m3.table_path(model)], lambda: use_m3.convert(cache)


def _jieba(cache: Path) -> tuple[Path, list[Path], Callable[[], object]]:
    import jieba

    tokenizer = jieba.Tokenizer()
    with tokenizer.get_dict_file() as handle:
        target = jieba_lookup.table_path(cache, Path(handle.name))
    return target, [target], lambda: jieba_lookup.open_frequencies(cache, tokenizer)


def _waiting_for_a_lock(thread: threading.Thread) -> bool:
    """`thread` is inside filelock's acquire: it found the build taken and waits for it."""
    frame = sys._current_frames().get(thread.ident or -1)
    while frame is not None:
        if "filelock" in Path(frame.f_code.co_filename).parts:
            return True
        frame = frame.f_back
    return False


@pytest.mark.parametrize("builder", [_minilm, _use_m3, _jieba], ids=["minilm", "use-m3", "jieba"])
def test_a_build_under_way_in_another_process_is_waited_for_and_not_repeated(
    tmp_path: Path, builder: Callable[[Path], tuple[Path, list[Path], Callable[[], object]]]
) -> None:
    built_once = shared_model_cache()
    guarded, made, build = builder(built_once)
    build()  # the run's shared cache holds the finished files: the other process's result, below
    finished = [built_once / path.name for path in made]

    cache = tmp_path / "models"
    cache.mkdir(mode=0o700)
    guarded, made, build = builder(cache)
    lock = Path(f"{guarded}.lock")
    other = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "held"
        outcome: dict[str, object] = {}
        waiter = threading.Thread(target=lambda: outcome.setdefault("result", build()), daemon=True)
        waiter.start()
        deadline = time.monotonic() + 60
        while not _waiting_for_a_lock(waiter):
            assert waiter.is_alive(), "the build did not wait for the lock another process holds"
            assert time.monotonic() < deadline, "the build never reached the lock"
            time.sleep(0.01)
        assert not any(path.exists() for path in made)  # waiting, not building
        for path in finished:  # the other process finishes its build, then lets go
            shutil.copy2(path, cache / path.name)
        inodes = {path: path.stat().st_ino for path in made}
    finally:
        assert other.stdin is not None
        other.stdin.close()
        other.wait(10)
    waiter.join(60)
    assert not waiter.is_alive() and "result" in outcome
    assert {path: path.stat().st_ino for path in made} == inodes  # used as they were, not built again
    assert not [p for p in cache.iterdir() if p.name.startswith((".convert-", "."))]  # no build began
