"""Shared fixtures: a fresh home per test and a helper that runs the real `openclaw` process."""

from __future__ import annotations

import compileall
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests import rewrite_cache, scheduling
from tests.memory_helpers import shared_model_cache

ROOT = Path(__file__).resolve().parent.parent
SHARED_MODEL_CACHE = shared_model_cache()


def pytest_configure(config: pytest.Config) -> None:
    """Compile the package's bytecode once, before any test starts a process.

    Most tests run the real CLI, often several times. Where PYTHONDONTWRITEBYTECODE is set (as in some
    sandboxes and CI images) no process caches its bytecode, and each compiled every module it imports
    from source again: 0.12-0.2 s of CPU per `session append`, `memory add` or `memory search`. Bytecode is read
    whatever that variable says, so compiling them here is enough. It runs in the xdist controller before
    the workers start (and is a cheap no-op in each worker); up-to-date files are left alone."""
    for package in ("openclaw_cli", "tests"):
        compileall.compile_dir(ROOT / package, quiet=1)
    if not hasattr(config, "workerinput") and config.getoption("assertmode") == "rewrite":
        rewrite_cache.write_missing(ROOT / "tests", config)
    if config.getoption(scheduling.RECORD_OPTION) and not hasattr(config, "workerinput"):
        config.pluginmanager.register(scheduling.ModuleClock(), "module-clock")
    if os.environ.get(PROCESS_LOG_VARIABLE):
        log_every_process()
        config.pluginmanager.register(InProcessClock(os.environ[PROCESS_LOG_VARIABLE]), "in-process-clock")


# Opt-in measurement: `SUITE_PROCESS_LOG=/tmp/p.jsonl python -m pytest ...` makes every Python process of
# the run write a line (tests/process_log/sitecustomize.py); `python -m tests.process_log.summary FILE`
# adds them up. Not an OPENCLAW_ variable: base_env() keeps those away from the CLI processes.
PROCESS_LOG_VARIABLE = "SUITE_PROCESS_LOG"


def log_every_process() -> None:
    """Put tests/process_log first on the PYTHONPATH that every child process (workers included) inherits."""
    directory = str(ROOT / "tests" / "process_log")
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if directory not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([directory, *[p for p in paths if p]])


class InProcessClock:
    """Writes one process-log line per test for the CPU the test process itself spent on it (set-up, call,
    teardown), so the summary can charge the pytest workers' own CPU to modules, as it does their children's."""

    def __init__(self, log: str) -> None:
        self.log = log

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Any:
        before, started = os.times(), time.monotonic()
        yield
        after = os.times()
        cpu = after.user + after.system - before.user - before.system
        line = {
            "argv": ["(in the test process)"],
            "test": item.nodeid,
            "cpu": round(cpu, 3),
            "wall": round(time.monotonic() - started, 3),
            "litellm": False,
            "onnxruntime": False,
        }
        with open(self.log, "a", encoding="ascii") as log:
            log.write(json.dumps(line) + "\n")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        scheduling.RECORD_OPTION,
        action="store_true",
        help="write how long each test module took into tests/module_seconds.json (the workers' order)",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    scheduling.longest_first(items, scheduling.load_module_seconds())


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)

    def json_lines(self) -> list[Any]:
        return [json.loads(line) for line in self.stdout.split("\n") if line.strip()]


def base_env(home: Path, *, shared_models: bool = True) -> dict[str, str]:
    """The environment of a CLI process for `home`. The converted models come from one cache shared by
    the whole run (converting them takes ~10 s per machine); tests of the conversion itself opt out, and
    then convert into a user cache of the test's own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCLAW_")}
    env["OPENCLAW_HOME"] = str(home)
    # The user's cache (converted models by default) beside the test's home, not the runner's own.
    env["XDG_CACHE_HOME"] = str(home.parent / "user-cache")
    if shared_models:
        env["OPENCLAW_MEMORY__EMBEDDING__MODELCACHEDIR"] = str(SHARED_MODEL_CACHE)
    env["PYTHONIOENCODING"] = "utf-8"
    env.pop("COLUMNS", None)
    from tests.encrypted_homes import env_for  # a home of the plain/encrypted parametrised tests

    env.update(env_for(home))
    return env


def run_cli(
    home: Path,
    *args: str,
    input: str | bytes | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> Result:
    """Run `python -m openclaw_cli ARGS` as a real process with OPENCLAW_HOME=home (in this process
    instead, in a CLI_IN_PROCESS module's tests, for the commands tests/inprocess.py allows)."""
    if _in_process:
        from tests.inprocess import is_safe, run_in_process

        if is_safe(args):
            return run_in_process(home, *args, input=input, env=env)
    full_env = base_env(home)
    if env:
        full_env.update(env)
    data = input.encode("utf-8") if isinstance(input, str) else input
    proc = subprocess.run(
        [sys.executable, "-m", "openclaw_cli", *args],
        input=data,
        capture_output=True,
        env=full_env,
        timeout=timeout,
        cwd=ROOT,
    )
    return Result(
        proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty openclaw home (not yet created on disk)."""
    return tmp_path / "home"


@pytest.fixture
def cli_private_models(home: Path):  # type: ignore[no-untyped-def]
    """Like `cli`, with the model cache inside this home. For tests of `doctor`, which reports what an
    interrupted conversion leaves in the cache: the run's shared cache may hold another test's."""

    def _run(*args: str, env: dict[str, str] | None = None, **kwargs: Any) -> Result:
        own = {"OPENCLAW_MEMORY__EMBEDDING__MODELCACHEDIR": str(home / "cache" / "models")}
        return run_cli(home, *args, env={**own, **(env or {})}, **kwargs)

    return _run


@pytest.fixture
def cli(home: Path):  # type: ignore[no-untyped-def]
    """`cli("session", "list", "--json")` runs the real CLI against this test's home."""

    def _run(*args: str, **kwargs: Any) -> Result:
        return run_cli(home, *args, **kwargs)

    return _run


# In a module that sets `CLI_IN_PROCESS = True`, run_cli runs the commands tests/inprocess.py knows to be
# safe there in the test process (the same entry point, without a process's start-up and model loads),
# during its tests' calls; tests marked `real_process` and module-scoped fixtures keep real processes.
_in_process = False


@contextlib.contextmanager
def commands_in_process() -> Iterator[None]:
    """run_cli as in a CLI_IN_PROCESS module's tests, for the block (e.g. a module fixture's many writes)."""
    global _in_process
    saved, _in_process = _in_process, True
    try:
        yield
    finally:
        _in_process = saved


@pytest.fixture(autouse=True)
def _cli_in_process(request: pytest.FixtureRequest) -> Any:
    global _in_process
    _in_process = bool(getattr(request.module, "CLI_IN_PROCESS", False)) and (
        request.node.get_closest_marker("real_process") is None
    )
    yield
    _in_process = False


@pytest.fixture(scope="session")
def pg_server() -> Any:
    """One real PostgreSQL + pgvector server for this test process (tests/pg_server.py); never skipped."""
    from tests.pg_server import remove, start_server

    server = start_server()
    yield server
    remove(server)


@pytest.fixture
def pg_dsn(pg_server: Any) -> str:
    """The DSN of a fresh, empty database on the test server (pgvector installed)."""
    return str(pg_server.fresh_database())


@pytest.fixture(scope="session")
def pg_shared_dsn(pg_server: Any) -> str:
    """One database for this test process, for tests that each open a store of a fresh name in it."""
    return str(pg_server.fresh_database())
