"""Peak memory of every stdin reader given a 1 GiB single line (issue 48 §3), and how soon it says no.

Goal: each command stays under 300 MB peak RSS, and its error comes within 2 s of the line passing the
command's cap (input_lines.py). Before the caps, `memory add --batch -` took 2.2 GB and 32 s.

The line comes from a child process writing it into the command's stdin through a pipe, a mebibyte at a
time (never a file): it notes the CLOCK_MONOTONIC time at which it has written the cap's worth, and the
command's exit is timed on the same clock. Peak RSS is the command's own ru_maxrss from wait4 (the writer
is another process and is not counted).

    python -m pytest benchmarks/test_bench_line_limits.py --benchmark-only -n 0 -s
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.core.input_lines import MESSAGE_LINE_BYTES, QUERY_BYTES, record_line_cap, text_cap

ROOT = Path(__file__).resolve().parent.parent
LINE = 1 << 30
RSS_GOAL_MB = 300
SECONDS_GOAL = 2.0
RECORD_CAP = record_line_cap(16_000)
WRITER = r"""
import sys, time
prefix, cap, total = sys.argv[1].encode(), int(sys.argv[2]), int(sys.argv[3])
out, written, crossed, block = sys.stdout.buffer, 0, 0.0, b"y" * (1 << 20)
try:
    out.write(prefix)
    while written < total:
        out.write(block)
        written += len(block)
        if not crossed and written >= cap:
            crossed = time.monotonic()
    out.write(b'"}\n')
    out.flush()
except BrokenPipeError:
    pass
sys.stderr.write(f"{written} {crossed}")
"""
READERS: list[tuple[str, tuple[str, ...], str, int]] = [
    ("add_batch", ("memory", "add", "--batch", "-"), '{"text": "', RECORD_CAP),
    ("import", ("memory", "import", "-"), '{"version": "1.0", "note": "', RECORD_CAP),
    ("session_import", ("session", "import", "-"), '{"type": "meta", "note": "', MESSAGE_LINE_BYTES),
    ("search_batch", ("memory", "search", "--batch", "-"), '{"query": "', RECORD_CAP),
    ("note", ("memory", "note", "-"), "", text_cap(16_000)),
    ("add", ("memory", "add", "-"), "", text_cap(16_000)),
    ("search", ("memory", "search", "-"), "", QUERY_BYTES),
]


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCLAW_")}
    return env | {"OPENCLAW_HOME": str(home), "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("line-limits") / "home"
    done = subprocess.run(
        [sys.executable, "-m", "openclaw_cli", "memory", "note", "a first note"],
        env=_env(home),
        cwd=ROOT,
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr
    return home


def _one_line(home: Path, args: tuple[str, ...], prefix: str, cap: int) -> dict[str, Any]:
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, prefix, str(cap), str(LINE)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert writer.stdout is not None
    cli = subprocess.Popen(
        [sys.executable, "-m", "openclaw_cli", *args],
        stdin=writer.stdout,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=_env(home),
        cwd=ROOT,
    )
    writer.stdout.close()
    _, status, usage = os.wait4(cli.pid, 0)
    ended = time.monotonic()
    assert cli.stderr is not None
    error = cli.stderr.read().decode()
    cli.stderr.close()
    _, said = writer.communicate(timeout=600)
    written, crossed = said.decode().split()
    return {
        "exit": os.waitstatus_to_exitcode(status),
        "error": error.strip(),
        "rss_mb": usage.ru_maxrss / 1024,
        "seconds_after_cap": ended - float(crossed),
        "read_mb": int(written) / (1 << 20),
    }


@pytest.mark.parametrize(("name", "args", "prefix", "cap"), READERS, ids=[r[0] for r in READERS])
def test_a_1_gib_line_on_stdin(
    benchmark: Any, home: Path, name: str, args: tuple[str, ...], prefix: str, cap: int
) -> None:
    figures = benchmark.pedantic(lambda: _one_line(home, args, prefix, cap), rounds=1, iterations=1)
    benchmark.extra_info.update(
        {
            f"{name}_peak_rss_mb": round(figures["rss_mb"], 1),
            f"{name}_seconds_after_cap": round(figures["seconds_after_cap"], 2),
            f"{name}_mb_written_before_refusal": round(figures["read_mb"], 1),
        }
    )
    print(
        f"\n{' '.join(args)}: peak RSS {figures['rss_mb']:.0f} MB, error {figures['seconds_after_cap']:.2f} s "
        f"after the cap ({cap} bytes), {figures['read_mb']:.0f} MiB written of 1024"
    )
    assert figures["exit"] == 1 and "is longer than" in figures["error"], figures["error"]
    assert figures["rss_mb"] < RSS_GOAL_MB
    assert figures["seconds_after_cap"] < SECONDS_GOAL
