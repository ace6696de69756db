"""The opt-in process log of a test run (tests/process_log): one line per Python process, and its sums."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PROCESS_LOG_VARIABLE, ROOT, InProcessClock, log_every_process
from tests.process_log.summary import IN_TEST_PROCESS, command, summarise

LOG_DIRECTORY = str(ROOT / "tests" / "process_log")


def _python(code: str, env: dict[str, str]) -> None:
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != PROCESS_LOG_VARIABLE}
    env["PYTHONPATH"] = os.pathsep.join([LOG_DIRECTORY, str(ROOT)])
    env.update(extra)
    return env


def test_a_process_writes_one_line_about_itself(tmp_path: Path) -> None:
    log = tmp_path / "processes.jsonl"
    env = _env(**{PROCESS_LOG_VARIABLE: str(log), "PYTEST_CURRENT_TEST": "tests/test_x.py::test_y (call)"})
    _python("import json; sum(range(10**6))", env)
    (line,) = [json.loads(text) for text in log.read_text().splitlines()]
    assert line["argv"][:2] == ["-c", "import json; sum(range(10**6))"]
    assert line["test"] == "tests/test_x.py::test_y (call)"
    # Both are measured, but not against each other: the CPU time includes the interpreter's start-up
    # before the log's clock starts (sitecustomize), so it can exceed the wall time it is logged beside.
    assert line["cpu"] > 0 and line["wall"] > 0
    assert line["litellm"] is False and line["onnxruntime"] is False


def test_an_argument_that_is_not_utf8_is_logged_and_nothing_is_said(tmp_path: Path) -> None:
    log = tmp_path / "processes.jsonl"
    bad = os.fsdecode(b"\xff")  # subprocess passes it on as the raw byte
    done = subprocess.run(
        [sys.executable, "-c", "pass", bad], env=_env(**{PROCESS_LOG_VARIABLE: str(log)}), capture_output=True
    )
    assert (done.returncode, done.stderr) == (0, b"")
    (line,) = [json.loads(text) for text in log.read_text().splitlines()]
    assert line["argv"] == ["-c", "pass", "\udcff"]


def test_without_the_variable_nothing_is_written(tmp_path: Path) -> None:
    _python("import sitecustomize", _env())
    assert list(tmp_path.iterdir()) == []


def test_a_log_that_cannot_be_written_does_not_fail_the_process(tmp_path: Path) -> None:
    _python("pass", _env(**{PROCESS_LOG_VARIABLE: str(tmp_path / "missing" / "log.jsonl")}))


def test_the_run_puts_the_directory_first_on_the_childrens_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["/somewhere", ""]))
    log_every_process()
    log_every_process()  # a second call adds nothing
    assert os.environ["PYTHONPATH"].split(os.pathsep) == [LOG_DIRECTORY, "/somewhere"]


def test_the_summary_adds_up_by_module_and_by_command() -> None:
    records = [
        {"argv": ["-m", "openclaw_cli", "memory", "add", "x"], "test": "tests/test_a.py::t (call)",
         "cpu": 1.0, "wall": 2.0, "litellm": False, "onnxruntime": True},
        {"argv": ["-m", "openclaw_cli", "--json", "chat", "--local"], "test": "tests/test_a.py::u (call)",
         "cpu": 4.5, "wall": 5.0, "litellm": True, "onnxruntime": False},
        {"argv": ["-c", "pass"], "test": "", "cpu": 0.5, "wall": 0.5, "litellm": False, "onnxruntime": False},
    ]  # fmt: skip
    text = summarise(records)
    assert text.splitlines()[0] == "3 processes, 6 cpu s (4 in processes with litellm)"
    assert "      2      5.5      7.0     1     1  tests/test_a.py" in text
    assert "      1      4.5      5.0     1     0  chat" in text
    assert "      1      0.5      0.5     0     0  (outside a test)" in text


def test_a_command_is_named_by_its_first_two_words() -> None:
    assert command(["-m", "openclaw_cli", "memory", "search", "tea", "--json"]) == "memory search"
    assert command(["-m", "openclaw_cli", "--home", "/h", "--agent", "work", "-v", "doctor"]) == "doctor"
    assert command(["-m", "openclaw_cli"]) == "(no command)"
    assert command(["-c", "print(1)"]) == "python -c"
    assert command(["-u", "script.py"]) == "-u script.py"


class _Item:
    nodeid = "tests/test_a.py::test_b"


def test_the_test_process_logs_its_own_cpu_for_each_test(tmp_path: Path) -> None:
    log = tmp_path / "processes.jsonl"
    hook = InProcessClock(str(log)).pytest_runtest_protocol(_Item())  # type: ignore[arg-type]
    next(hook)  # the test runs now
    sum(i * i for i in range(3 * 10**6))
    with pytest.raises(StopIteration):
        hook.send(None)
    (line,) = [json.loads(text) for text in log.read_text().splitlines()]
    assert line["argv"] == [IN_TEST_PROCESS] and line["test"] == "tests/test_a.py::test_b"
    assert line["cpu"] > 0 and line["wall"] > 0


def test_the_summary_charges_in_process_lines_to_their_module_but_not_to_the_total() -> None:
    records = [
        {"argv": ["-u", "-c", "worker"], "test": "", "cpu": 10.0, "wall": 20.0, "litellm": False,
         "onnxruntime": True},
        {"argv": [IN_TEST_PROCESS], "test": "tests/test_a.py::t", "cpu": 3.0, "wall": 4.0, "litellm": False,
         "onnxruntime": False},
    ]  # fmt: skip
    text = summarise(records)
    assert text.splitlines()[0] == "1 processes, 10 cpu s (0 in processes with litellm)"
    assert "      1      3.0      4.0     0     0  tests/test_a.py" in text
    assert f"      1      3.0      4.0     0     0  {IN_TEST_PROCESS}" in text
