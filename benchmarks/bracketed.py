"""The embedding-only reference of a bulk-load benchmark, measured around the run it is compared with.

This machine's speed drifts over a minute (shared cores: the same 2,000-record load took 4.9 to 7.3 s within
ten minutes). Measured just before the CLI's run, the reference carried that drift into the ratio: slices of
one run ranged 0.77 to 0.97. Half of the texts are embedded just before the run and half just after, so a
drift moves both sides alike; the texts are the same and the embedder is warm for both halves.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

Result = TypeVar("Result")


@dataclass
class Bracketed(Generic[Result]):
    embedding_s: float  # wall seconds of embedding every text, the two halves together
    embedding_cpu_s: float  # this process's CPU seconds for it
    vectors: Any  # the texts' vectors, in order
    result: Result  # what the run returned


def cpu_seconds(who: int = resource.RUSAGE_SELF) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def embedding_around(
    embed: Callable[[list[str]], Any], texts: list[str], run: Callable[[], Result]
) -> Bracketed[Result]:
    """Embed the first half of `texts`, call `run`, embed the second half."""
    import numpy as np

    half = len(texts) // 2
    before = _timed(embed, texts[:half])
    result = run()
    after = _timed(embed, texts[half:])
    return Bracketed(before[0] + after[0], before[1] + after[1], np.vstack([before[2], after[2]]), result)


def _timed(embed: Callable[[list[str]], Any], texts: list[str]) -> tuple[float, float, Any]:
    started, used = time.perf_counter(), cpu_seconds()
    vectors = embed(texts)
    return time.perf_counter() - started, cpu_seconds() - used, vectors
