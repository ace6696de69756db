"""The CLI leaves without the interpreter's teardown (entry.leave), and nothing a normal exit does that
anyone can see is lost: threads finish, atexit functions run, SQLite's WAL is checkpointed into the
database file, output is flushed whole, and the exit status is the one SystemExit gives."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT, base_env


def _buffered_env(home: Path) -> dict[str, str]:
    """The CLI's environment with Python's output buffered, as in a person's shell (a test runner may
    set PYTHONUNBUFFERED)."""
    env = base_env(home)
    env.pop("PYTHONUNBUFFERED", None)
    return env


def _python(
    code: str, home: Path, env: dict[str, str] | None = None, **kwargs: object
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env or _buffered_env(home),
        cwd=ROOT,
        capture_output=True,
        timeout=60,
        check=False,
        **kwargs,  # type: ignore[arg-type]
    )


def test_a_memory_written_by_the_cli_is_in_the_database_file_alone(cli, home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # A person who copies only memory.sqlite after the command (no -wal beside it) must get every commit:
    # the last connection's close checkpoints the WAL, as the interpreter's teardown did.
    added = cli("memory", "add", "User keeps bees on the roof", "--json")
    assert added.returncode == 0, added.stderr
    database = home / "agents" / "main" / "memory" / "memory.sqlite"
    assert database.exists()
    wal = database.with_name(database.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    alone = tmp_path / "copy.sqlite"
    shutil.copyfile(database, alone)
    texts = [str(row) for row in sqlite3.connect(alone).execute("SELECT * FROM records")]
    assert any("bees on the roof" in text for text in texts)


def test_threads_and_atexit_functions_finish_before_the_process_leaves(home: Path, tmp_path: Path) -> None:
    thread_file, pool_file, atexit_file = tmp_path / "thread", tmp_path / "pool", tmp_path / "atexit"
    done = _python(
        f"""
        import atexit, threading, time
        from concurrent.futures import ThreadPoolExecutor
        from pathlib import Path
        from openclaw_cli.entry import leave

        def slow(path):
            time.sleep(0.3)
            Path(path).write_text("done")

        threading.Thread(target=slow, args=({str(thread_file)!r},)).start()
        ThreadPoolExecutor(1).submit(slow, {str(pool_file)!r})
        atexit.register(lambda: Path({str(atexit_file)!r}).write_text("ran"))
        leave(None)
        """,
        home,
    )
    assert done.returncode == 0, done.stderr
    assert thread_file.read_text() == "done"
    assert pool_file.read_text() == "done"
    assert atexit_file.read_text() == "ran"


def test_buffered_output_reaches_a_pipe_whole(home: Path) -> None:
    # 2 MB written through Python's buffer and never flushed by the code: leave() flushes it.
    done = _python(
        """
        import sys
        from openclaw_cli.entry import leave
        sys.stdout.write("x" * 2_000_000 + "\\n")
        sys.stderr.write("a last line")
        leave(0)
        """,
        home,
    )
    assert done.returncode == 0
    assert done.stdout == b"x" * 2_000_000 + b"\n"
    assert done.stderr == b"a last line"


@pytest.mark.parametrize(
    ("code", "status", "stderr"), [("None", 0, b""), ("4", 4, b""), ("'no home'", 1, b"no home\n")]
)
def test_the_exit_status_is_the_one_systemexit_gives(
    home: Path, code: str, status: int, stderr: bytes
) -> None:
    done = _python(f"from openclaw_cli.entry import leave\nleave({code})", home)
    assert done.returncode == status
    assert done.stderr == stderr


def test_output_into_a_closed_pipe_ends_with_the_broken_pipe_status(home: Path) -> None:
    # The reader is gone before the buffered output is flushed: no traceback, status 141 (128 + SIGPIPE).
    reader_gone = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from openclaw_cli.entry import leave; sys.stdin.read(); sys.stdout.write('y' * 100); leave(0)",
        ],
        env=_buffered_env(home),
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert reader_gone.stdout is not None and reader_gone.stdin is not None
    reader_gone.stdout.close()
    reader_gone.stdin.close()
    assert reader_gone.wait(timeout=60) == 141
    assert reader_gone.stderr is not None and reader_gone.stderr.read() == b""


def test_a_failing_command_keeps_its_status_and_one_line(cli) -> None:  # type: ignore[no-untyped-def]
    failed = cli("memory", "search", "")
    assert failed.returncode == 1
    assert failed.stderr.count("\n") == 1 and "Traceback" not in failed.stderr


def test_a_connection_left_open_is_closed_and_its_wal_checkpointed(home: Path, tmp_path: Path) -> None:
    # Code that commits and never closes its connection: the database file alone still holds the commit.
    database = tmp_path / "left-open.sqlite"
    done = _python(
        f"""
        import apsw
        from openclaw_cli.entry import leave
        kept = apsw.Connection({str(database)!r})
        kept.execute("PRAGMA journal_mode=WAL")
        kept.execute("CREATE TABLE notes(text TEXT)")
        kept.execute("INSERT INTO notes VALUES ('committed before leaving')")
        leave(0)
        """,
        home,
    )
    assert done.returncode == 0, done.stderr
    assert not database.with_name(database.name + "-wal").exists()
    alone = tmp_path / "copy.sqlite"
    shutil.copyfile(database, alone)
    assert sqlite3.connect(alone).execute("SELECT text FROM notes").fetchall() == [
        ("committed before leaving",)
    ]


def test_a_command_runs_with_the_young_collection_threshold(home: Path) -> None:
    # entry.YOUNG_THRESHOLD: a cold search ran ~130 collections at Python's 700; the older generations
    # keep Python's own thresholds.
    done = _python(
        """
        import atexit, gc, json, sys
        from openclaw_cli.entry import main
        before = gc.get_threshold()
        atexit.register(lambda: sys.stderr.write(json.dumps([before, gc.get_threshold()])))
        sys.argv = ["openclaw", "session", "list", "--json"]
        main()
        """,
        home,
    )
    assert done.returncode == 0, done.stderr
    before, during = json.loads(done.stderr)
    assert during[0] == 50_000
    assert during[1:] == before[1:]


def _blas_worker_ticks(home: Path, prepared: bool, env: dict[str, str] | None = None) -> dict[str, object]:
    """CPU clock ticks of the threads numpy's import started, 0.3 s after it, in a process prepared as
    a command's is (entry.prepare_process) or not."""
    done = _python(
        f"""
        import json, os, threading, time
        from openclaw_cli.entry import prepare_process
        if {prepared!r}:
            prepare_process()
        import numpy
        time.sleep(0.3)
        main = threading.main_thread().native_id
        ticks = []
        for tid in os.listdir("/proc/self/task"):
            if int(tid) != main:
                fields = open(f"/proc/self/task/{{tid}}/stat").read().rsplit(")", 1)[1].split()
                ticks.append(int(fields[11]) + int(fields[12]))  # utime + stime
        print(json.dumps({{"ticks": ticks, "timeout": os.environ.get("OPENBLAS_THREAD_TIMEOUT")}}))
        """,
        home,
        env={**_buffered_env(home), **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_numpys_blas_worker_sleeps_at_once_in_a_command(home: Path) -> None:
    # Left alone, OpenBLAS's worker spins for 2^28 clock cycles (~0.1 s) before it first sleeps, taking a
    # core whenever it gets one; told 2^4, it sleeps at once, and a sleeping thread gains no CPU time. A
    # tick is 10 ms: a thread's start and set-up stay well under two.
    prepared = _blas_worker_ticks(home, prepared=True)
    assert prepared["timeout"] == "4"
    assert sum(prepared["ticks"]) <= 2, prepared  # type: ignore[call-overload]
    if len(os.sched_getaffinity(0)) > 1 and not {"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"} & set(os.environ):
        assert prepared["ticks"], "numpy's import started no BLAS worker: nothing was measured"


def test_a_blas_timeout_the_user_set_is_kept(home: Path) -> None:
    assert _blas_worker_ticks(home, prepared=True, env={"OPENBLAS_THREAD_TIMEOUT": "12"})["timeout"] == "12"
