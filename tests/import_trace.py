"""Which modules a real `openclaw` process imports, read from `python -X importtime`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, base_env


def traced(
    home: Path, *args: str, env: dict[str, str] | None = None, input: str = "", timeout: float = 120
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """`openclaw ARGS` run as a real process (with `env` added to the test environment and `input` on
    stdin), and every module it imported."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "openclaw_cli", *args],
        input=input,
        capture_output=True,
        text=True,
        env={**base_env(home), **(env or {})},
        cwd=ROOT,
        timeout=timeout,
    )
    modules = set()
    for line in proc.stderr.splitlines():
        # "import time:   self [us] | cumulative | imported package", nested imports indented.
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name and name != "imported package":
                modules.add(name)
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    return proc, modules


def imported_modules(home: Path, *args: str, timeout: float = 120) -> tuple[int, set[str]]:
    """Exit status and every module imported by `openclaw ARGS` run as a real process."""
    proc, modules = traced(home, *args, timeout=timeout)
    return proc.returncode, modules
