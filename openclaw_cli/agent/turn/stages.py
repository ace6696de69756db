"""Where one turn's time goes: milliseconds per named stage, summed over the turn (issue 23).

Always on: a span is two `perf_counter()` reads and a dict update (about a microsecond), against a turn
of milliseconds, so there is no switch to forget. The gateway reports the split with each turn (the
`final` chat event's `timings.stages`, a `Server-Timing` header on /v1/chat/completions, a comment
line in its stream) so that benchmarks can say which stage a change moved.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def span(stages: dict[str, float], name: str) -> Iterator[None]:
    """Add the time the block takes to `stages[name]` (ms), also when it raises."""
    started = time.perf_counter()
    try:
        yield
    finally:
        add(stages, name, (time.perf_counter() - started) * 1000)


def add(stages: dict[str, float], name: str, ms: float) -> None:
    stages[name] = stages.get(name, 0.0) + ms


def server_timing(stages: dict[str, float]) -> str:
    """The stages as an HTTP Server-Timing value: `name;dur=ms` entries, names made into tokens."""
    return ", ".join(f"{name.replace(' ', '-')};dur={ms:.3f}" for name, ms in stages.items())
