"""jieba, initialised for what the process does with it.

jieba keeps its whole prefix dictionary (~600k entries) in a dict: ~0.6-0.9 s of CPU to load even from its
cache, and ~70 MB. With a cache directory, a process first answers from the dictionary's table on disk
(text/jieba_lookup.py: the same values, so the same segmentation; ~30 ms and ~7 MB to open, ~80 µs more
per text). Only a process that goes on to segment many texts (FULL_AFTER Han runs: a bulk load, an index
rebuild, a gateway over months) loads the whole dict, on a thread of its own, and then answers from it:
measured, the load repays itself after ~10,000 texts. A gateway whose user writes Chinese no longer holds
~90 MB and spends ~0.5 s of its start on a dictionary its few searches barely touch. A process that
segments a few texts and exits (`one_shot`) never loads it.

Without a cache directory nothing may be written, so the dictionary is built from its source in memory.
"""

from __future__ import annotations

import functools
import itertools
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

from openclaw_cli.core.background import start_load
from openclaw_cli.core.fsutil import ensure_private_dir

JIEBA_CACHE_NAME = "jieba.cache"
# Han runs segmented through the table before a process that is not one-shot loads the whole dictionary.
FULL_AFTER = 10_000

_cache_dir: Path | None = None
_one_shot = False
_segmented = itertools.count(1)  # thread-safe enough: next() on a count is atomic in CPython
_loading: threading.Thread | None = None
_loading_lock = threading.Lock()


def set_cache_dir(path: Path, *, one_shot: bool = False) -> None:
    """Where jieba's table and its prefix-dictionary cache (`jieba.cache`, 0600 in a 0700 directory) live.

    Without it jieba would write its cache to the system temp directory, outside the user's home; so until
    this is called the dictionary is built from its source on every load and nothing is written.
    `one_shot`: this process segments a few texts and exits, and never loads the whole dictionary."""
    global _cache_dir, _one_shot
    _cache_dir = path
    _one_shot = one_shot


def cache_dir() -> Path | None:
    return _cache_dir


def segmenter() -> Any:
    """jieba's default tokenizer for one more Han run: after FULL_AFTER of them in a process that is not
    one-shot, the whole dictionary starts loading."""
    jieba = _jieba()
    if next(_segmented) == FULL_AFTER and _cache_dir is not None and not _one_shot:
        _start_full_load(jieba, _cache_dir)
    return jieba.dt


def in_dictionary(word: str) -> bool:
    """Whether jieba's dictionary lists `word` as a word (its prefix table also holds mere prefixes, at 0)."""
    return bool(_jieba().dt.FREQ.get(word))


def load_full() -> None:
    """Load the whole dictionary now, in this thread, and answer from it from then on."""
    jieba = _jieba()
    if _cache_dir is not None:
        _swap_in_full(jieba, _cache_dir)


def full_loaded() -> bool:
    return isinstance(_jieba().dt.FREQ, dict)


@lru_cache(maxsize=1)
def _jieba() -> Any:
    """Import and initialise jieba on first Han text, without its "Building prefix dict..." line on
    stderr (DEBUG level), which core code must not let through."""
    import logging

    jieba = _import_jieba()
    jieba.setLogLevel(logging.WARNING)
    tokenizer = jieba.dt
    if _cache_dir is not None:
        from openclaw_cli.memory.text.jieba_lookup import open_frequencies

        tokenizer.FREQ, tokenizer.total = open_frequencies(_cache_dir, tokenizer)
    else:
        # jieba.initialize() always dumps its cache into tempfile.gettempdir(): build the dictionary here.
        with tokenizer.get_dict_file() as source:
            tokenizer.FREQ, tokenizer.total = tokenizer.gen_pfdict(source)
    tokenizer.initialized = True
    return jieba


def _start_full_load(jieba: Any, directory: Path) -> None:
    global _loading
    with _loading_lock:
        if _loading is None:  # a failed load leaves the table answering, with the same values
            _loading = start_load(functools.partial(_swap_in_full, jieba, directory), "jieba-dictionary")


def _swap_in_full(jieba: Any, directory: Path) -> None:
    """Load the whole dictionary with jieba's own loader (from `jieba.cache`, written there on first use by
    mkstemp + rename, 0600) into a tokenizer of its own, then hand its dict to the default tokenizer: one
    attribute assignment, so a segmentation under way reads one dict or the other, with the same values."""
    if isinstance(jieba.dt.FREQ, dict):
        return
    ensure_private_dir(directory)
    loader = jieba.Tokenizer()
    loader.tmp_dir = str(directory)
    loader.cache_file = JIEBA_CACHE_NAME
    loader.initialize()
    jieba.dt.FREQ = loader.FREQ


def _import_jieba() -> Any:
    """jieba imports pkg_resources (~70 ms, half the cost of a one-shot Chinese query's analysis) only to
    open its own data files, and opens them with plain open() when it is missing: so it is hidden while
    jieba is imported, unless something has already loaded it. Same files, same dictionary."""
    import sys

    hide = "pkg_resources" not in sys.modules
    if hide:
        sys.modules["pkg_resources"] = None  # type: ignore[assignment]  # makes the import fail
    try:
        import jieba
    finally:
        if hide and sys.modules.get("pkg_resources", False) is None:
            del sys.modules["pkg_resources"]
    return jieba
