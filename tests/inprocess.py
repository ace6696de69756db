"""Run an `openclaw` command inside the test process, the way `python -m openclaw_cli` runs it.

A real `memory add` process spends ~0.6 s of CPU before it writes anything: the interpreter, the CLI's
imports (pydantic, numpy, onnxruntime) and the two embedding models' sessions. Where a test is about
what a command prints or stores, not about the process boundary, running the same entry point (the
console script's `cli.main.run`) in the test process pays those once per pytest worker: the imports stay
imported and the models stay in the loader's per-process cache, as in the long-running gateway.

What the process boundary gave, this keeps: the environment of `conftest.base_env(home)` (patched into
os.environ for the call and restored), argv, standard input as bytes (a non-TTY, empty unless given),
standard output and error as separate UTF-8 streams, the exit status `SystemExit` carries (as
`entry.leave` computes it), and the SQLite connections it
opened to the home's databases are closed (their last close checkpoints the WAL, as at a process's
exit), and the exit hooks it registers (background.start_load's joins of its model loads) run after it,
as does the session stores' (registered once, at import).
Thread pools it started stay, idle, for the next call, as in the gateway; the scheduled-job locks it took
(cli/job_lock.py, held to a process's end) are released.

Only for the commands in SAFE_COMMANDS: not a gateway, a chat, `doctor` (it reports on process-wide
caches), or anything else whose state outlives a call in one process. Those keep `run_cli`.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tests.conftest import Result, base_env

# Commands (their first two words) known to keep nothing in the process beyond the call. Anything else is
# refused, so a test cannot move a command in here without looking at what it leaves behind.
SAFE_COMMANDS = frozenset(
    {
        ("memory", "add"),
        ("memory", "get"),
        ("memory", "list"),
        ("memory", "search"),
        ("memory", "history"),
        ("memory", "delete"),
        ("memory", "status"),
        ("memory", "export"),
        ("memory", "index"),  # --check's job lock is released after the call (_release_job_locks)
        ("memory", "purge"),
        ("memory", "reassign"),
        ("memory", "inject"),
        ("session", "append"),  # the session stores' exit hook runs after the call (_flush_sessions)
        ("session", "show"),
        ("session", "list"),
    }
)

_lock = threading.Lock()  # one command at a time per process: os.environ and sys.std* are global


class _Stdin(io.TextIOWrapper):
    """Standard input of a process whose stdin is a pipe or /dev/null: never a terminal."""

    def isatty(self) -> bool:
        return False


def _command(args: tuple[str, ...]) -> tuple[str, ...]:
    """The command's words, when argv starts with them (a global option first makes it unknown here)."""
    return tuple(args[:2])


# Help of any command: printed by the command tree before any command body runs.
HELP_OPTIONS = frozenset({"--help", "-h"})


def is_safe(args: tuple[str, ...]) -> bool:
    return _command(args) in SAFE_COMMANDS or (bool(args) and args[-1] in HELP_OPTIONS)


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(values)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _exit_hooks() -> Iterator[list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]]]:
    """Collect the atexit hooks registered during the call instead of keeping them to the worker's exit."""
    hooks: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = []
    register = atexit.register

    def collect(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[..., Any]:
        hooks.append((function, args, kwargs))
        return function

    atexit.register = collect  # type: ignore[assignment]
    try:
        yield hooks
    finally:
        atexit.register = register


def _close_home_databases(home: Path, before: list[Any]) -> None:
    """Close the connections the call opened to the home's databases. Those it opened elsewhere (the
    models' word tables and dictionaries in the shared cache) are the process's caches, kept as the gateway
    keeps them."""
    import apsw

    root = str(home)
    for connection in apsw.connections():
        if any(connection is c for c in before):
            continue
        with contextlib.suppress(Exception):
            if str(connection.filename).startswith(root):
                connection.close()


def _release_job_locks(before: int) -> None:
    """Release the scheduled-job locks the call took (cli/job_lock.py keeps them to the process's end,
    when the system releases them)."""
    job_lock = sys.modules.get("openclaw_cli.cli.job_lock")
    if job_lock is None:
        return
    held: list[Any] = job_lock._held
    while len(held) > before:
        held.pop().release()


def _open_session_stores() -> list[Any]:
    store = sys.modules.get("openclaw_cli.sessions.store")
    return [] if store is None else list(store._open_stores)


def _flush_sessions(before: list[Any]) -> None:
    """What sessions/store.py's exit hook (registered once, at import) does at a process's end, for the
    session stores the call opened."""
    for opened in _open_session_stores():
        if not any(opened is b for b in before):
            with contextlib.suppress(OSError):
                opened.close()


def _key_state() -> tuple[Any, ...] | None:
    """The keys this process holds (security/unlocked.py), to put back after a command: see _restore_keys."""
    unlocked = sys.modules.get("openclaw_cli.security.unlocked")
    if unlocked is None:
        return None
    return (dict(unlocked._keys), unlocked._provider, unlocked._agent, unlocked._default_home)


def _restore_keys(before: tuple[Any, ...] | None) -> None:
    """What a process's end does to the keys a command took: they go with it. The command's data keys,
    passphrase provider, key agent lookup and the home it worked for are dropped, and the test's own (an
    encrypted_homes provider) put back. Left set, the next in-process command or seeding in this worker
    took an earlier encrypted home's key for a file outside it, and wrote a plain home's database
    encrypted."""
    unlocked = sys.modules.get("openclaw_cli.security.unlocked")
    if unlocked is None:
        return
    keys, provider, agent, default_home = before if before is not None else ({}, None, None, None)
    with unlocked._lock:
        unlocked._keys.clear()
        unlocked._keys.update(keys)
    for name, value in (("_provider", provider), ("_agent", agent), ("_default_home", default_home)):
        setattr(unlocked, name, value)


def _held_job_locks() -> int:
    job_lock = sys.modules.get("openclaw_cli.cli.job_lock")
    return 0 if job_lock is None else len(job_lock._held)


def run_in_process(
    home: Path,
    *args: str,
    input: str | bytes | None = None,
    env: dict[str, str] | None = None,
) -> Result:
    """`run_cli(home, *args, input=..., env=...)` without starting a process (see the module's doc)."""
    if not is_safe(args):
        raise ValueError(f"{' '.join(_command(args))!r} is not known to be safe in process: use run_cli")
    import apsw

    from openclaw_cli.cli.main import run
    from openclaw_cli.entry import _status

    values = base_env(home)
    if env:
        values.update(env)
    data = input.encode("utf-8") if isinstance(input, str) else (input or b"")
    stdout, stderr = io.BytesIO(), io.BytesIO()
    with _lock:
        connections = apsw.connections()
        locks = _held_job_locks()
        sessions = _open_session_stores()
        keys = _key_state()
        streams = (sys.argv, sys.stdin, sys.stdout, sys.stderr)
        sys.argv = ["openclaw", *args]
        sys.stdin = _Stdin(io.BytesIO(data), encoding="utf-8")
        sys.stdout = io.TextIOWrapper(stdout, encoding="utf-8", write_through=True)
        sys.stderr = io.TextIOWrapper(stderr, encoding="utf-8", errors="backslashreplace", write_through=True)
        code: object = None
        try:
            with _environment(values), _exit_hooks() as hooks:
                try:
                    run()
                except SystemExit as done:
                    code = done.code
                for function, hook_args, kwargs in reversed(hooks):
                    function(*hook_args, **kwargs)
            status = _status(code)
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(OSError, ValueError):
                    stream.flush()
        finally:
            for wrapper in (sys.stdin, sys.stdout, sys.stderr):
                with contextlib.suppress(ValueError):  # a command may have closed one (a broken pipe)
                    wrapper.detach()  # else its collection would close the buffer read below
            sys.argv, sys.stdin, sys.stdout, sys.stderr = streams
            _flush_sessions(sessions)
            _release_job_locks(locks)
            _close_home_databases(home, connections)
            _restore_keys(keys)
    return Result(
        status, stdout.getvalue().decode("utf-8", "replace"), stderr.getvalue().decode("utf-8", "replace")
    )
