"""The order in which the default run (`-n 3 --dist loadfile`) hands its test modules to the workers.

With `loadfile` a module is one unit of work, run whole by one worker, so that what its tests share (a
running gateway, a store filled by the real models) is built once, not once on each worker that runs one of
its tests (xdist's `loadgroup` would let a module opt out, but it cannot group anything under pytest 9).

Modules are handed out longest first, by the seconds they took when last measured (tests/module_seconds.json,
refreshed with `--record-module-seconds`): a long module started last would keep one worker busy while the
others wait. A module not measured yet counts DEFAULT_TEST_SECONDS per test. The order only decides when a
module runs, never whether or how: every test still runs, with its own fixtures.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path

import pytest

MODULE_SECONDS_FILE = Path(__file__).resolve().parent / "module_seconds.json"
RECORD_OPTION = "--record-module-seconds"
# About the median test of this suite (a CLI process or two): an unmeasured module is neither first nor last.
DEFAULT_TEST_SECONDS = 1.0


def module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def load_module_seconds(path: Path = MODULE_SECONDS_FILE) -> dict[str, float]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return {str(module): float(seconds) for module, seconds in data.items()}


def longest_first(items: list[pytest.Item], measured: Mapping[str, float]) -> None:
    """Reorder `items` so that the longest modules come first (a stable sort: tests keep their order
    within a module, and modules of equal cost their collection order)."""
    modules: dict[str, list[pytest.Item]] = defaultdict(list)
    for item in items:
        modules[module_of(item.nodeid)].append(item)

    def cost(module: str) -> float:
        return measured.get(module, DEFAULT_TEST_SECONDS * len(modules[module]))

    items[:] = [item for module in sorted(modules, key=cost, reverse=True) for item in modules[module]]


class ModuleClock:
    """A plugin (on the xdist controller, which receives every worker's reports) that adds up the setup,
    call and teardown time of every test per module and merges the totals into the seconds file at the end."""

    def __init__(self, path: Path = MODULE_SECONDS_FILE) -> None:
        self.path = path
        self.seconds: dict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[module_of(report.nodeid)] += report.duration

    def pytest_sessionfinish(self) -> None:
        if not self.seconds:
            return
        measured = {module: round(seconds, 1) for module, seconds in self.seconds.items()}
        merged = {**load_module_seconds(self.path), **measured}
        text = json.dumps(dict(sorted(merged.items())), indent=1, ensure_ascii=False) + "\n"
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(text, encoding="utf-8")
        temporary.replace(self.path)
