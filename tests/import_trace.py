"""Which modules a real `openclaw` process imports, read from `python -X importtime`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, base_env


def imported_modules(home: Path, *args: str, timeout: float = 120) -> tuple[int, set[str]]:
    """Exit status and every module imported by `openclaw ARGS` run as a real process."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "openclaw_cli", *args],
        capture_output=True,
        text=True,
        env=base_env(home),
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
    return proc.returncode, modules
