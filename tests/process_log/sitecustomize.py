"""Opt-in: every Python process of a test run writes one line about itself when it exits.

conftest.py puts this directory first on PYTHONPATH when SUITE_PROCESS_LOG names a file, so that every
process the tests start (CLI commands, gateways, the pytest workers themselves) imports this module at
start-up. At exit each appends to that file: its arguments, the test that started it, its CPU and wall
seconds, and whether it loaded litellm or onnxruntime (the two costly imports). Summarise the file with
`python -m tests.process_log.summary FILE`. Without the variable this module does nothing.

A process killed by a signal it does not handle (SIGKILL) writes nothing.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import time

_STARTED = time.monotonic()
_LOG = os.environ.get("SUITE_PROCESS_LOG")


def _write_line() -> None:
    times = os.times()
    line = {
        "argv": list(getattr(sys, "orig_argv", sys.argv))[1:12],
        "test": os.environ.get("PYTEST_CURRENT_TEST", ""),
        "cpu": round(times.user + times.system, 3),
        "wall": round(time.monotonic() - _STARTED, 3),
        "litellm": "litellm" in sys.modules,
        "onnxruntime": "onnxruntime" in sys.modules,
    }
    try:
        # ASCII: an argument that is not UTF-8 (the bad-input tests pass some) is kept as an escape.
        # One short append per process: lines of processes exiting together do not interleave.
        with open(str(_LOG), "a", encoding="ascii") as log:
            log.write(json.dumps(line) + "\n")
    except Exception:  # noqa: BLE001 - a measurement must never fail a process or write to its stderr
        pass


if _LOG:
    atexit.register(_write_line)
