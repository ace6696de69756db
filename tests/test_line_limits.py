"""Input that could take the machine's memory (issue 48 §3): every reader of standard input or a file
stops reading a line once it is past the most a valid line could need, and says so in one line.

The long input comes from a child process writing into the command's stdin through a pipe; it counts
what it managed to write before the command stopped reading, which shows the command did not read on
to the end. (Peak memory and time are the benchmark's: benchmarks/test_bench_line_limits.py.)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from openclaw_cli.core.input_lines import MESSAGE_LINE_BYTES, QUERY_BYTES, record_line_cap, text_cap
from tests.conftest import ROOT, Result, base_env, run_cli
from tests.home_copies import copy_home

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

RECORD_CAP = record_line_cap(16_000)  # memory.maxTextChars's default
GIB = 1 << 30  # the line: the writer stops as soon as the command stops reading, so it costs little
# The writer: PREFIX, then up to TOTAL bytes of 'y', then SUFFIX; prints how much it wrote.
WRITER = r"""
import sys
prefix, suffix, total = sys.argv[1].encode(), sys.argv[2].encode(), int(sys.argv[3])
out, written, block = sys.stdout.buffer, 0, b"y" * (1 << 20)
try:
    out.write(prefix)
    while written < total:
        out.write(block)
        written += len(block)
    out.write(suffix)
    out.flush()
except BrokenPipeError:
    pass
sys.stderr.write(str(written))
"""


def _piped(home: Path, args: tuple[str, ...], prefix: str, suffix: str, total: int) -> tuple[Result, int]:
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, prefix, suffix, str(total)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert writer.stdout is not None
    cli = subprocess.run(
        [sys.executable, "-m", "openclaw_cli", *args],
        stdin=writer.stdout,
        capture_output=True,
        env=base_env(home),
        cwd=ROOT,
        timeout=300,
    )
    writer.stdout.close()
    _, said = writer.communicate(timeout=300)
    result = Result(
        cli.returncode, cli.stdout.decode("utf-8", "replace"), cli.stderr.decode("utf-8", "replace")
    )
    return result, int(said or 0)


def _refused_early(done: Result, written: int, cap: int, total: int) -> None:
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("openclaw: error: standard input"), done.stderr
    assert f"longer than {cap} bytes" in lines[0]
    # Stopped at the cap: what the pipe and one read chunk hold past it, not the rest of the input.
    assert written < cap + (8 << 20) < total, (written, cap)


def _nothing_stored(home: Path) -> None:
    listed = run_cli(home, "memory", "list", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout) == []


@pytest.fixture(scope="module")
def seeded_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with a database, so that every reader has something to read into (noted once)."""
    home = tmp_path_factory.mktemp("line-limits") / "home"
    assert run_cli(home, "memory", "note", "a first note").returncode == 0
    return home


@pytest.fixture
def seeded(seeded_once: Path, home: Path) -> Path:
    """This test's own copy of that home."""
    return copy_home(seeded_once, home)


def test_add_batch_stops_reading_a_line_past_the_limit(seeded: Path) -> None:
    total = GIB
    done, written = _piped(seeded, ("memory", "add", "--batch", "-"), '{"text": "', '"}\n', total)
    _refused_early(done, written, RECORD_CAP, total)
    _nothing_stored(seeded)


def test_search_batch_stops_reading_a_line_past_the_limit(seeded: Path) -> None:
    total = GIB
    done, written = _piped(seeded, ("memory", "search", "--batch", "-"), '{"query": "', '"}\n', total)
    _refused_early(done, written, RECORD_CAP, total)


def test_memory_import_stops_reading_a_line_past_the_limit(seeded: Path) -> None:
    total = GIB
    head = '{"version": "1.0", "agent": "main", "exportedAt": "2026-01-01T00:00:00Z", "note": "'
    done, written = _piped(seeded, ("memory", "import", "-"), head, '"}\n', total)
    _refused_early(done, written, RECORD_CAP, total)
    _nothing_stored(seeded)
    spool = seeded / "cache"
    assert (
        not spool.exists()
        or [p for p in spool.rglob("*") if p.is_file() and p.stat().st_size > 1 << 20] == []
    )


def test_session_import_stops_reading_a_line_past_the_limit(seeded: Path) -> None:
    total = GIB
    done, written = _piped(seeded, ("session", "import", "-"), '{"type": "meta", "x": "', '"}\n', total)
    _refused_early(done, written, MESSAGE_LINE_BYTES, total)
    assert "s-" not in run_cli(seeded, "session", "list").stdout


def test_memory_add_stops_reading_a_text_past_the_limit(seeded: Path) -> None:
    cap = text_cap(16_000)
    done, written = _piped(seeded, ("memory", "add", "-"), "", "\n", GIB)
    _refused_early(done, written, cap, GIB)
    _nothing_stored(seeded)


def test_memory_note_stops_reading_a_text_past_the_limit(seeded: Path) -> None:
    log = next((seeded / "agents" / "main" / "workspace" / "memory").glob("*.md"))
    before = log.read_bytes()
    cap = text_cap(16_000)
    done, written = _piped(seeded, ("memory", "note", "-"), "", "\n", GIB)
    _refused_early(done, written, cap, GIB)
    assert log.read_bytes() == before


def test_memory_search_stops_reading_a_query_past_the_limit(seeded: Path) -> None:
    done, written = _piped(seeded, ("memory", "search", "-"), "", "\n", GIB)
    _refused_early(done, written, QUERY_BYTES, GIB)


def test_a_long_line_after_good_ones_stores_nothing(seeded: Path) -> None:
    good = "".join(json.dumps({"text": f"good line {i}"}) + "\n" for i in range(3))
    total = RECORD_CAP * 2
    done, written = _piped(seeded, ("memory", "add", "--batch", "-"), good + '{"text": "', '"}\n', total)
    assert "standard input line 4 is longer" in done.stderr
    _refused_early(done, written, RECORD_CAP, total + (16 << 20))
    _nothing_stored(seeded)


def test_the_longest_valid_record_line_is_still_read(seeded: Path) -> None:
    # 16000 characters outside the BMP, each escaped as two \uXXXX: the longest a text gets in JSON.
    text = "\U0001d11e" * 16_000
    line = json.dumps({"text": text, "l1": text, "l2": text}, ensure_ascii=True)
    assert len(line) > 500_000
    done = run_cli(seeded, "memory", "add", "--batch", "-", input=line + "\n")
    assert done.returncode == 0, done.stderr
    assert "added 1" in done.stdout or '"added": 1' in done.stdout


def test_a_file_with_a_line_past_the_limit_is_refused_for_add_batch(seeded: Path, tmp_path: Path) -> None:
    source = tmp_path / "long.jsonl"
    source.write_bytes(b'{"text": "ok"}\n{"text": "' + b"y" * (RECORD_CAP + 1) + b'"}\n')
    done = run_cli(seeded, "memory", "add", "--batch", str(source))
    assert done.returncode == 1 and f"{source} line 2 is longer than {RECORD_CAP} bytes" in done.stderr
    _nothing_stored(seeded)


def test_a_file_with_a_line_past_the_limit_is_refused_for_import(seeded: Path, tmp_path: Path) -> None:
    source = tmp_path / "long.jsonl"
    head = b'{"version": "1.0", "agent": "main", "exportedAt": "2026-01-01T00:00:00Z"}\n'
    source.write_bytes(head + b'{"id": "m1", "content": {"l0": "' + b"y" * (RECORD_CAP + 1) + b'"}}\n')
    done = run_cli(seeded, "memory", "import", str(source))
    assert done.returncode == 1 and f"{source} line 2 is longer than {RECORD_CAP} bytes" in done.stderr
    _nothing_stored(seeded)


def test_a_file_with_a_line_past_the_limit_is_refused_for_session_import(
    seeded: Path, tmp_path: Path
) -> None:
    source = tmp_path / "long.jsonl"
    with source.open("wb") as out:
        out.write(b'{"type": "meta", "x": "')
        block = b"y" * (1 << 20)
        for _ in range(MESSAGE_LINE_BYTES // len(block) + 1):
            out.write(block)
        out.write(b'"}\n')
    done = run_cli(seeded, "session", "import", str(source))
    assert done.returncode == 1 and f"line 1 is longer than {MESSAGE_LINE_BYTES} bytes" in done.stderr
