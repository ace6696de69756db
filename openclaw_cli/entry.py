"""The console script. `openclaw --version` is answered before the command tree (typer) is imported."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from typing import NoReturn

BROKEN_PIPE = 141  # the code run() gives a command whose reader went away (128 + SIGPIPE)
# The cyclic collector's first threshold: a collection every 50,000 new container objects instead of
# Python's 700. A cold search allocates millions while it imports, loads its models and reads 100k
# vectors' rows, and at 700 it ran ~130 collections (one full) for 60-75 ms of CPU in the main thread,
# holding the lock every other thread needs; at 50,000 it runs one or two (13-24 ms). The older
# generations keep Python's own rule, so a long-running gateway still collects its old cycles.
YOUNG_THRESHOLD = 50_000
# numpy's OpenBLAS starts a worker thread on import, which spins ~0.1 s of CPU before it first sleeps, and
# again after every product it helps with: a core taken from the model sessions a command builds at that
# moment, or from the models of a bulk load. 2^4 cycles instead of 2^28 (OpenBLAS's unit is a power of
# two): it sleeps at once, and still takes half of a large product. A value the user set is kept.
BLAS_THREAD_TIMEOUT = ("OPENBLAS_THREAD_TIMEOUT", "4")


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from openclaw_cli import __version__

        sys.stdout.write(f"openclaw {__version__}\n")
        return
    prepare_process()
    from openclaw_cli.cli.main import run

    try:
        run()
    except SystemExit as done:
        leave(done.code)


def prepare_process() -> None:
    """What every command's process sets before it imports anything heavy (see the constants above)."""
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, older, oldest)
    os.environ.setdefault(*BLAS_THREAD_TIMEOUT)


def leave(code: object) -> NoReturn:
    """End the process as a normal exit would, without the interpreter's teardown.

    A search process holds a vector matrix, two ONNX sessions, their tokenizers and a dictionary of
    words; the interpreter frees them object by object at exit, which took 170-630 ms after the output
    was written (a cold search at 100k memories, load 4-10), as long as the search itself. Everything a
    normal exit does that anyone can see is done first, in the same order: threads are stopped and
    joined (executor workers, model preloads), atexit functions run (session metadata, log handlers),
    SQLite connections are closed (the last close checkpoints the WAL, so the database file alone holds
    every commit, as before), and the standard streams are flushed. Only the freeing of memory that the
    operating system takes back anyway is skipped.
    """
    import atexit
    import os
    import threading

    # The interpreter's own first step at exit (private, but it is what Py_Finalize calls): it runs the
    # hooks that stop executor workers, then joins every non-daemon thread.
    getattr(threading, "_shutdown")()  # noqa: B009 - private name, no public equivalent
    atexit._run_exitfuncs()
    _close_databases()
    status = _status(code)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:
            status = BROKEN_PIPE
        except (OSError, ValueError):  # a stream already closed (run() closes stderr on a broken pipe)
            pass
    os._exit(status)


def _status(code: object) -> int:
    """The exit status SystemExit(code) gives: None is 0, an int itself, anything else is printed and 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"{code}\n")
    return 1


def _close_databases() -> None:
    apsw = sys.modules.get("apsw")
    if apsw is None:
        return
    for connection in apsw.connections():
        # A connection that cannot close now is left to the operating system, as at a normal exit.
        with contextlib.suppress(Exception):
            connection.close()
