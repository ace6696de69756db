"""Damaged derived indexes are rebuilt from the records; damaged records are sent to a backup; permission
problems are not corruption; an unreachable embedding API fails fast and says so.

Damage is real: garbage written over a page that `dbstat` says belongs to the table, in a real file.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import apsw
import pytest

from openclaw_cli.memory.search.pipeline import SearchRequest
from openclaw_cli.memory.store.sqlite.connection import vec_extension_path
from tests import fake_openai as fake_server
from tests.conftest import ROOT, Result, base_env, run_cli
from tests.memory_helpers import add, api_settings, service_for

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

fake_openai = fake_server.fake_openai
TEXTS = [f"memory {i} about garden {i % 7} and teapot number {i}" for i in range(40)]


@pytest.fixture(scope="module")
def filled_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home of 40 memories embedded by the default local models, written once by a real `memory add
    --batch` for the module: the tests damage copies of it (_filled), never this one."""
    home = tmp_path_factory.mktemp("filled") / "home"
    lines = "\n".join(json.dumps({"text": t, "id": f"mem-t{i}"}) for i, t in enumerate(TEXTS))
    done = run_cli(home, "memory", "add", "--batch", "-", input=lines, env={"OPENAI_API_KEY": "sk-x"})
    assert done.returncode == 0, done.stderr
    return home


def _filled(home: Path, filled_home: Path) -> Path:
    """This test's own copy of the filled home at `home`; the path of its memory database."""
    shutil.copytree(filled_home, home, symlinks=True)
    return home / "agents" / "main" / "memory" / "memory.sqlite"


def _damage(path: Path, prefix: str) -> str:
    """Garbage over one page of the first table whose name starts with `prefix`."""
    conn = apsw.Connection(str(path))
    conn.enable_load_extension(True)
    conn.load_extension(vec_extension_path())
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    rows = list(
        conn.execute(
            "SELECT name, pageno FROM dbstat WHERE name GLOB ? ORDER BY name, pageno", (prefix + "*",)
        )
    )
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    name = rows[0][0]
    pages = [p for n, p in rows if n == name]
    page = pages[len(pages) // 2]
    with path.open("r+b") as handle:
        handle.seek((page - 1) * size)
        handle.write(os.urandom(size))
    return str(name)


def _cli(home: Path, *args: str, input: str | None = None) -> Result:
    return run_cli(home, *args, input=input, env={"OPENAI_API_KEY": "sk-x"})


@pytest.mark.parametrize(
    "table", ["vec_1_vector_chunks00", "records_fts_data", "records_fts_content", "vec_1_rowids"]
)
def test_derived_damage_is_named_and_rebuild_restores_every_record(
    tmp_path: Path, table: str, filled_home: Path
) -> None:
    home = tmp_path / "home"
    path = _filled(home, filled_home)
    _damage(path, table)
    check = _cli(home, "memory", "index", "--check")
    assert check.returncode == 1 and "derived index damaged" in check.stdout, check.stdout + check.stderr
    doctor = _cli(home, "doctor")
    assert "memory index --rebuild" in doctor.stdout and "backup" not in doctor.stdout
    for args in (("memory", "search", "teapot"), ("memory", "purge", "--user", "nobody", "--yes")):
        done = _cli(home, *args)
        # Some damage only shows when a query reaches the page; when it does, it must say what to do.
        assert done.returncode in (0, 1), done.stderr
        if done.returncode == 1:  # a purge of a person nobody knows is refused before anything is written
            named = "memory index --rebuild" in done.stderr or "nothing is known of 'nobody'" in done.stderr
            assert named and len(done.stderr.strip().splitlines()) == 1, done.stderr
    rebuilt = _cli(home, "memory", "index", "--rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert _cli(home, "memory", "index", "--check").returncode == 0
    assert "healthy" in _cli(home, "doctor").stdout
    queries = "".join(json.dumps({"query": f"teapot number {i}"}) + "\n" for i in (0, 13, 39))
    batch = _cli(home, "memory", "search", "--batch", "-", "--all", input=queries)
    answers = [json.loads(line) for line in batch.stdout.splitlines()]
    for i, answer in zip((0, 13, 39), answers, strict=True):
        assert f"mem-t{i}" in [h["id"] for h in answer["results"]]
    listed = json.loads(_cli(home, "memory", "list", "--json").stdout)
    assert len(listed) == len(TEXTS)


@pytest.mark.parametrize("table", ["records", "history"])
def test_damaged_records_or_history_send_the_user_to_a_backup(
    tmp_path: Path, table: str, filled_home: Path
) -> None:
    home = tmp_path / "home"
    path = _filled(home, filled_home)
    _damage(path, table)
    before = path.read_bytes()
    check = _cli(home, "memory", "index", "--check")
    assert check.returncode == 1 and "records damaged" in check.stdout
    assert "backup" in _cli(home, "doctor").stdout
    rebuilt = _cli(home, "memory", "index", "--rebuild")
    assert rebuilt.returncode == 1 and "backup" in rebuilt.stderr
    assert path.read_bytes() == before  # left as it was


def test_rebuild_drops_tables_left_by_a_killed_rebuild(tmp_path: Path, filled_home: Path) -> None:
    home = tmp_path / "home"
    path = _filled(home, filled_home)
    conn = apsw.Connection(str(path))
    conn.enable_load_extension(True)
    conn.load_extension(vec_extension_path())
    conn.execute("CREATE VIRTUAL TABLE vec_7 USING vec0(embedding float[4])")
    conn.execute("CREATE TABLE vec_9_rowids(x)")  # a shadow table whose vec0 table is gone
    conn.close()
    assert "left-over" in _cli(home, "memory", "index", "--check").stdout
    assert _cli(home, "memory", "index", "--rebuild").returncode == 0
    conn = apsw.Connection(str(path))
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_schema WHERE name GLOB 'vec_[79]*'")}
    assert names == set()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_refused_connection_fails_fast_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    service = service_for(tmp_path, api_settings(url, maxRetries=5))
    from openclaw_cli.llm import calls as llm

    llm.client()  # litellm's import (seconds) is not what is measured
    start = time.monotonic()
    record, report = service.add(
        __import__("openclaw_cli.memory.service", fromlist=["NewMemory"]).NewMemory(l0="tea with lemon")
    )
    took = time.monotonic() - start
    assert report.pending_vectors == 1 and report.warning and "connection refused" in report.warning
    assert took < 5, took
    result = service.search(SearchRequest(query="tea"))
    assert [h.record.id for h in result.hits] == [record.id]
    assert any("keyword results only" in w for w in result.warnings)
    service.close()


def test_a_refused_connection_in_completions_is_not_retried() -> None:
    from openclaw_cli.llm import calls as llm

    llm.client()
    start = time.monotonic()
    with pytest.raises(llm.ModelUnavailable, match="connection refused"):
        llm.complete(
            "openai/gpt-4o-mini",
            [{"role": "user", "content": "hi"}],
            f"http://127.0.0.1:{_closed_port()}/v1",
            api_key="sk-x",
            max_retries=5,
        )
    assert time.monotonic() - start < 5


@pytest.mark.parametrize("status", [500, 429])
def test_server_errors_and_rate_limits_are_retried(tmp_path: Path, fake_openai, status: int) -> None:  # type: ignore[no-untyped-def]
    fake_openai.fail_next(2, status=status)
    service = service_for(tmp_path, api_settings(fake_openai.url, maxRetries=3))
    assert add(service, "tea with lemon")
    assert service.pending_count() == 0
    assert len(fake_openai.requests_to("/embeddings")) == 3
    service.close()


def test_status_names_the_configured_embedder_when_its_size_is_unknown(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    home.mkdir(parents=True)
    (home / "openclaw.json").write_text(
        '{"memory": {"embedding": {"provider": "litellm", "model": "openai/x"}}}'
    )
    done = cli("memory", "status")
    assert "configured embedder: litellm:openai/x" in done.stdout


def test_onnx_without_a_model_directory_is_a_problem_in_check_and_doctor(
    cli, home: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    assert cli("memory", "add", "tea with lemon").returncode == 0
    (home / "openclaw.json").write_text(
        json.dumps({"memory": {"embedding": {"provider": "onnx", "path": str(tmp_path / "gone")}}})
    )
    check = cli("memory", "index", "--check")
    assert check.returncode == 1 and "cannot be used" in check.stdout
    doctor = cli("doctor")
    assert doctor.returncode == 1 and "memory.embedder" in doctor.stdout


def _as_unprivileged(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI subject to file modes. Root ignores them through two capabilities; dropping those
    from the bounding set (setpriv, util-linux) makes even root a plain owner, so the same test runs
    as root (CI) and as an ordinary user."""
    prefix = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
    return subprocess.run(
        [*prefix, sys.executable, "-m", "openclaw_cli", *args],
        capture_output=True,
        text=True,
        env=base_env(home),
        cwd=ROOT,
        timeout=120,
    )


# Giving a file to another owner needs root (CI runs as root); an ordinary user has the other three cases.
PERMISSION_CASES = ["file-000", "file-0400", "dir-0500"] + (["other-owner"] if os.geteuid() == 0 else [])


@pytest.mark.parametrize("case", PERMISSION_CASES)
def test_permission_problems_are_named_as_such(case: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert _as_unprivileged(home, "memory", "add", "tea with lemon", "-c", "preference").returncode == 0
    db = home / "agents" / "main" / "memory" / "memory.sqlite"
    for extra in (db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        extra.unlink(missing_ok=True)
    if case == "file-000":
        os.chmod(db, 0)
    elif case == "file-0400":
        os.chmod(db, 0o400)
    elif case == "dir-0500":
        os.chmod(db.parent, 0o500)
    else:
        os.chown(db, 65534, 65534)  # mode 0600 and owned by someone else
    for args in (("memory", "add", "more tea"), ("memory", "search", "tea")):
        done = _as_unprivileged(home, *args)
        if case == "file-0400" and args[1] == "search":
            continue  # reading a read-only file may work; writing must not be attempted silently
        assert done.returncode == 1, (case, args, done.stderr)
        assert "permission denied" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    doctor = _as_unprivileged(home, "doctor")
    assert "memory.permissions" in doctor.stdout and "backup" not in doctor.stdout
