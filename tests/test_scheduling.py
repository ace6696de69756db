"""The order in which the default run hands its test modules to the workers (tests/scheduling.py), on real
collected items and a real run of pytest in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.scheduling import DEFAULT_TEST_SECONDS, load_module_seconds, longest_first

pytest_plugins = ["pytester"]

PAIR = "def test_a(): pass\ndef test_b(): pass\n"
ONE = "def test_c(): pass\n"


def _items(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> list[pytest.Item]:
    # Only collection is needed: loading the installed plugins (xdist, hypothesis...) took seconds.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_pair=PAIR, test_one=ONE)
    return list(pytester.getitems(pytester.path))


def _names(items: list[pytest.Item]) -> list[str]:
    return [item.name for item in items]


def test_the_longest_module_comes_first_and_keeps_the_order_of_its_tests(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = _items(pytester, monkeypatch)
    longest_first(items, {"test_one.py": 30.0, "test_pair.py": 10.0})
    assert _names(items) == ["test_c", "test_a", "test_b"]
    longest_first(items, {"test_one.py": 10.0, "test_pair.py": 30.0})
    assert _names(items) == ["test_a", "test_b", "test_c"]


def test_an_unmeasured_module_counts_its_tests(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = _items(pytester, monkeypatch)
    # the pair's two tests outweigh a module measured at less, not one measured at more
    longest_first(items, {"test_one.py": DEFAULT_TEST_SECONDS * 1.5})
    assert _names(items) == ["test_a", "test_b", "test_c"]
    longest_first(items, {"test_one.py": DEFAULT_TEST_SECONDS * 2.5})
    assert _names(items) == ["test_c", "test_a", "test_b"]


def test_a_recorded_run_writes_each_modules_seconds_and_keeps_the_others(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    seconds = tmp_path / "module_seconds.json"
    seconds.write_text(json.dumps({"elsewhere.py": 5.0}), encoding="utf-8")
    pytester.makeconftest(
        f"""
import sys
from pathlib import Path
sys.path.insert(0, {str(ROOT)!r})
from tests.scheduling import ModuleClock

def pytest_configure(config):
    config.pluginmanager.register(ModuleClock(Path({str(seconds)!r})), "module-clock")
"""
    )
    pytester.makepyfile(test_pair=PAIR + "import time\ndef test_slow(): time.sleep(0.2)\n", test_one=ONE)
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=4)
    recorded = load_module_seconds(seconds)
    assert set(recorded) == {"elsewhere.py", "test_pair.py", "test_one.py"}
    assert recorded["elsewhere.py"] == 5.0
    assert recorded["test_pair.py"] >= 0.2  # the sleep alone; the report's durations add up per module
