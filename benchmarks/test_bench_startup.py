"""Start-up speed goal: the whole `openclaw --version` process in 150 ms or less.

Measures what a user or a cron job pays: interpreter start, imports and exit, through the installed
console script when there is one (else `python -m openclaw_cli`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

GOAL_SECONDS = 0.150
ROOT = Path(__file__).resolve().parent.parent


def _command() -> list[str]:
    script = Path(sys.executable).parent / "openclaw"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script), "--version"]
    found = shutil.which("openclaw")
    if found:
        return [found, "--version"]
    return [sys.executable, "-m", "openclaw_cli", "--version"]


def test_bench_version_process(benchmark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCLAW_")}
    env["OPENCLAW_HOME"] = str(tmp_path / "home")
    command = _command()

    def run() -> str:
        proc = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    output = benchmark.pedantic(run, rounds=10, iterations=1, warmup_rounds=2)
    assert output.startswith("openclaw ")
    benchmark.extra_info["command"] = " ".join(command)
    benchmark.extra_info["goal_ms"] = GOAL_SECONDS * 1000
