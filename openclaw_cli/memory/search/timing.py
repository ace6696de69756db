"""How long each group of search steps took: the `timings_ms` of a search result (search/pipeline.py)."""

from __future__ import annotations

import time


class StepClock:
    """Milliseconds since the last lap, added to the group named; `total` since the clock started."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self._start = self._last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings[stage] = self.timings.get(stage, 0.0) + (now - self._last) * 1000
        self._last = now

    def total(self) -> None:
        self.timings["total"] = (time.perf_counter() - self._start) * 1000
