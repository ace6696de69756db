"""pytest's rewritten test modules, written to its cache once before the xdist workers start.

Each worker collects every test module (xdist compares the collections), and pytest rewrites a module's
asserts before importing it: ~7.6 CPU-s for this suite's modules, and its plugins' modules at start. pytest keeps the result in
`__pycache__/*-pytest-*.pyc`, but only where PYTHONDONTWRITEBYTECODE is unset; where it is set (as in some
sandboxes and CI images) every worker of every run rewrote every module, three workers ~23 CPU-s. It reads
a cached file whatever that variable says, so the controller writes the missing ones here, on both cores,
and each worker reads them. Up-to-date files are left alone (pytest checks each against its source).

This leans on pytest's private rewrite functions: if they change, nothing is written and the workers
rewrite as before, which only costs time.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from pathlib import Path
from typing import Any

_config: Any = None  # the controller's pytest config, inherited by the forked rewriters


def write_missing(tests_dir: Path, config: Any) -> None:
    """Rewrite and cache every test module of `tests_dir`, and every plugin module pytest has rewritten in
    this process (pytest-benchmark, xdist, anyio: ~1.3 CPU-s a worker), whose cached rewrite is missing or
    stale."""
    global _config
    try:
        from _pytest.assertion import rewrite

        hooks = [hook for hook in sys.meta_path if isinstance(hook, rewrite.AssertionRewritingHook)]
        plugins = [Path(path) for hook in hooks for path in hook._rewritten_names.values()]
        files = [*sorted(tests_dir.glob("test_*.py")), *plugins]
        stale = [str(f) for f in files if f.suffix == ".py" and rewrite._read_pyc(f, _pyc(f)) is None]
    except (ImportError, AttributeError, TypeError):
        return
    if not stale:
        return
    _config = config
    processes = min(len(stale), os.cpu_count() or 1)
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        pool.map(_rewrite, stale, chunksize=1)


def _pyc(test_file: Path) -> Path:
    from _pytest.assertion import rewrite

    return rewrite.get_cache_dir(test_file) / (test_file.name[:-3] + rewrite.PYC_TAIL)


def _rewrite(name: str) -> None:
    """Rewrite one module as pytest's import hook would, and write it atomically (a worker may read it)."""
    from _pytest.assertion import rewrite

    source = Path(name)
    pyc = _pyc(source)
    try:
        source_hash, code = rewrite._rewrite_test(source, _config)
        pyc.parent.mkdir(exist_ok=True)
        partial = pyc.with_name(f"{pyc.name}.{os.getpid()}")
        with open(partial, "wb") as out:
            rewrite._write_pyc_fp(out, source_hash, code)
        os.replace(partial, pyc)
    except (OSError, SyntaxError, AttributeError, TypeError):
        pass  # the worker rewrites it itself, and reports a syntax error where pytest always does
