"""Backups of memory databases (SQLite's online backup API) and restoring one: real files, real processes.

Daily copies are written by `session sweep` and `memory index --check`, kept `memory.backup.keepDays` days;
a copy is made before every schema migration; `memory restore` checks the copy, keeps the database it
replaces, and refuses while the home's gateway runs.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import apsw
import pytest

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.memory.store.memory_store import MemoryStore
from openclaw_cli.memory.upkeep import backup
from openclaw_cli.memory.upkeep.restore import restore
from tests.conftest import Result, run_cli
from tests.gateway_helpers import running_gateway, write_config
from tests.memory_helpers import found_by_meaning
from tests.salvage_helpers import (
    cli_store,
    copy_home,
    damage_middle_leaf,
    fake_store,
    live_ids,
    overwrite_page,
)

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

TODAY = date(2026, 5, 10)


def _db(home: Path) -> Path:
    return home / "agents" / "main" / "memory" / "memory.sqlite"


def _one_line_error(done: Result) -> None:
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("openclaw: error: "), done.stderr
    assert "Traceback" not in done.stderr


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with three memories added through the CLI (local embedder), copied by each test."""
    home = tmp_path_factory.mktemp("three") / "home"
    return cli_store(home, [(f"tea-{i}", f"tea number {i} with lemon") for i in range(3)])


# --- daily copies ------------------------------------------------------------------------------------


def test_a_daily_copy_is_written_once_a_day_and_reads_back(tmp_path: Path) -> None:
    db = fake_store(tmp_path / "memory.sqlite", 20)
    first = backup.daily(db, 7, TODAY)
    assert first is not None and first.written and first.problem is None
    copy = Path(first.written)
    assert copy.parent == tmp_path / "backups" and copy.name == "daily-2026-05-10.sqlite"
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    assert stat.S_IMODE(copy.parent.stat().st_mode) == 0o700
    assert live_ids(copy) == live_ids(db)
    assert backup.problem_of(copy, thorough=True) is None
    assert not Path(str(copy) + "-wal").exists()  # one self-contained file
    mtime = copy.stat().st_mtime_ns
    again = backup.daily(db, 7, TODAY)
    assert again is not None and again.written is None and copy.stat().st_mtime_ns == mtime


def test_keep_days_prunes_older_daily_copies_only(tmp_path: Path) -> None:
    db = fake_store(tmp_path / "memory.sqlite", 5)
    directory = tmp_path / "backups"
    directory.mkdir(mode=0o700)
    for days in (1, 2, 3, 5, 30):
        shutil.copyfile(db, directory / f"daily-{(TODAY - timedelta(days=days)).isoformat()}.sqlite")
    shutil.copyfile(db, directory / "manual-20200101T000000.000Z.sqlite")
    shutil.copyfile(db, directory / "before-0010_history_reassign-20200101T000000.000Z.sqlite")
    report = backup.daily(db, 3, TODAY)
    assert report is not None
    left = sorted(p.name for p in directory.iterdir())
    assert left == [
        "before-0010_history_reassign-20200101T000000.000Z.sqlite",
        "daily-2026-05-08.sqlite",
        "daily-2026-05-09.sqlite",
        "daily-2026-05-10.sqlite",
        "manual-20200101T000000.000Z.sqlite",
    ]
    assert len(report.pruned or []) == 3


def test_keep_days_zero_writes_no_daily_copy(tmp_path: Path) -> None:
    db = fake_store(tmp_path / "memory.sqlite", 5)
    assert backup.daily(db, 0, TODAY) is None
    assert not (tmp_path / "backups").exists()


def test_a_damaged_database_gets_no_daily_copy_and_the_old_ones_stay(tmp_path: Path) -> None:
    db = fake_store(tmp_path / "memory.sqlite", 300)
    old = backup.daily(db, 2, TODAY - timedelta(days=5))
    assert old is not None and old.written
    damage_middle_leaf(db)
    report = backup.daily(db, 2, TODAY)
    assert report is not None and report.written is None
    assert report.problem and "damaged" in report.problem
    listing = sorted(p.name for p in (tmp_path / "backups").iterdir())
    assert listing == [".daily-2026-05-10.failed", "daily-2026-05-05.sqlite"]
    again = backup.daily(db, 2, TODAY)  # cron again, 15 minutes later: not copied again
    assert again is not None and again.problem == report.problem
    assert (tmp_path / "backups" / ".daily-2026-05-10.failed").stat().st_mode & 0o777 == 0o600
    backup.clear_failures(db)  # a salvage or a restore: today's copy may be made again
    assert sorted(p.name for p in (tmp_path / "backups").iterdir()) == ["daily-2026-05-05.sqlite"]


def test_a_database_whose_first_page_is_gone_gets_no_daily_copy_and_no_error(tmp_path: Path) -> None:
    db = fake_store(tmp_path / "memory.sqlite", 20)
    overwrite_page(db, 1)
    report = backup.daily(db, 2, TODAY)
    assert report is not None and report.written is None and report.problem
    assert not list((tmp_path / "backups").glob("*.sqlite"))


def test_session_sweep_and_index_check_write_the_daily_copy(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("memory", "add", "tea with lemon").returncode == 0
    swept = cli("session", "sweep", "--json")
    assert swept.returncode == 0 and json.loads(swept.stdout) == [], swept.stderr
    daily = list((_db(home).parent / "backups").glob("daily-*.sqlite"))
    assert len(daily) == 1 and live_ids(daily[0]) == live_ids(_db(home))
    checked = cli("memory", "index", "--check", "--json")
    assert checked.returncode == 0, checked.stderr
    reports = json.loads(checked.stdout)["backups"]
    assert reports == [{"database": str(_db(home)), "written": None, "pruned": [], "problem": None}]


def test_keep_days_zero_in_the_config_turns_the_daily_copy_off(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("memory", "add", "tea with lemon").returncode == 0
    assert cli("config", "set", "memory.backup.keepDays", "0").returncode == 0
    assert cli("session", "sweep").returncode == 0
    assert cli("memory", "index", "--check").returncode == 0
    assert not (_db(home).parent / "backups").exists()


# --- before a migration ------------------------------------------------------------------------------


def test_a_migration_is_preceded_by_a_copy_of_the_database_as_it_was(tmp_path: Path) -> None:
    db = fake_store(tmp_path / "memory.sqlite", 10)
    conn = apsw.Connection(str(db))
    conn.execute("DELETE FROM schema_migrations WHERE name = '0010_history_reassign'")
    conn.close()
    MemoryStore.open(db).close()  # migrates
    copies = list((tmp_path / "backups").glob("before-0010_history_reassign-*.sqlite"))
    assert len(copies) == 1
    old = apsw.Connection(str(copies[0]), flags=apsw.SQLITE_OPEN_READONLY)
    names = {str(r[0]) for r in old.execute("SELECT name FROM schema_migrations")}
    old.close()
    assert "0010_history_reassign" not in names and "0009_language_of_l0" in names
    assert live_ids(copies[0]) == live_ids(db)
    MemoryStore.open(db).close()  # nothing left to migrate: no second copy
    assert len(list((tmp_path / "backups").iterdir())) == 1


def test_a_new_store_is_not_backed_up(tmp_path: Path) -> None:
    MemoryStore.open(tmp_path / "memory.sqlite").close()
    assert not (tmp_path / "backups").exists()


# --- memory backup -----------------------------------------------------------------------------------


def test_backup_to_a_file_and_the_list(three: Path, tmp_path: Path) -> None:
    home = copy_home(three, tmp_path)
    out = tmp_path / "copy.sqlite"
    done = run_cli(home, "memory", "backup", "-o", str(out), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"written": [str(out)]}
    assert live_ids(out) == {"tea-0", "tea-1", "tea-2"}
    assert backup.problem_of(out, thorough=True) is None
    beside = run_cli(home, "memory", "backup")
    assert beside.returncode == 0 and "manual-" in beside.stdout
    listed = json.loads(run_cli(home, "memory", "backup", "--list", "--json").stdout)
    assert [b["kind"] for b in listed[0]["backups"]] == ["manual"]
    assert listed[0]["database"] == str(_db(home))


def test_backup_to_a_directory_is_a_one_line_error(three: Path, tmp_path: Path) -> None:
    home = copy_home(three, tmp_path)
    done = run_cli(home, "memory", "backup", "-o", str(tmp_path))
    _one_line_error(done)
    assert "is a directory" in done.stderr


def test_backup_to_an_empty_name_is_a_one_line_error(three: Path, tmp_path: Path) -> None:
    done = run_cli(copy_home(three, tmp_path), "memory", "backup", "-o", "")
    _one_line_error(done)
    assert "empty" in done.stderr


def test_backup_to_a_path_that_cannot_be_written_is_a_one_line_error(three: Path, tmp_path: Path) -> None:
    home = copy_home(three, tmp_path)
    for target in ("/proc/nope/memory.sqlite", str(_db(home)) + "/inside"):
        done = run_cli(home, "memory", "backup", "-o", target)
        _one_line_error(done)
        assert "cannot write" in done.stderr


def test_backup_over_the_database_itself_is_refused(three: Path, tmp_path: Path) -> None:
    home = copy_home(three, tmp_path)
    before = _db(home).read_bytes()
    done = run_cli(home, "memory", "backup", "-o", str(_db(home)))
    _one_line_error(done)
    assert "the database itself" in done.stderr and _db(home).read_bytes() == before


def test_backup_without_a_database_says_so(cli) -> None:  # type: ignore[no-untyped-def]
    done = cli("memory", "backup")
    _one_line_error(done)
    assert "nothing to back up" in done.stderr


# --- memory restore ----------------------------------------------------------------------------------


def test_restore_round_trip_keeps_the_replaced_database(three: Path, tmp_path: Path) -> None:
    home = copy_home(three, tmp_path)
    out = tmp_path / "three.sqlite"
    assert run_cli(home, "memory", "backup", "-o", str(out)).returncode == 0
    assert run_cli(home, "memory", "add", "coffee at nine").returncode == 0
    assert run_cli(home, "memory", "delete", "tea-1").returncode == 0
    refused = run_cli(home, "memory", "restore", str(out))
    _one_line_error(refused)
    assert "--yes" in refused.stderr
    done = run_cli(home, "memory", "restore", str(out), "--yes", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["records"] == 3 and report["restoredFrom"] == str(out)
    listed = json.loads(run_cli(home, "memory", "list", "--json").stdout)
    assert sorted(r["id"] for r in listed) == ["tea-0", "tea-1", "tea-2"]
    kept = Path(report["kept"])
    assert kept.parent == _db(home).parent and ".replaced-" in kept.name
    assert len(live_ids(kept)) == 3 and "tea-1" not in live_ids(kept)  # the coffee one and tea-0, tea-2
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    found = run_cli(home, "memory", "search", "tea number 1 with lemon", "--json")
    assert "tea-1" in [hit["id"] for hit in json.loads(found.stdout)["results"]]
    # The restored vectors are the packaged models': a question sharing no word with the memories finds
    # the three by meaning, and not the coffee memory the restore took away.
    assert sorted(found_by_meaning(home, "a hot drink with a slice of citrus")) == [
        f"tea number {i} with lemon" for i in range(3)
    ]
    assert run_cli(home, "memory", "index", "--check").returncode == 0
    listed_backups = json.loads(run_cli(home, "memory", "backup", "--list", "--json").stdout)
    assert [b["kind"] for b in listed_backups[0]["backups"]] == ["daily", "replaced"]  # daily: index --check


def test_restore_refuses_a_damaged_copy_and_leaves_the_database(three: Path, tmp_path: Path) -> None:
    home = copy_home(three, tmp_path)
    bad = fake_store(tmp_path / "bad.sqlite", 300)
    damage_middle_leaf(bad)
    before = _db(home).read_bytes()
    done = run_cli(home, "memory", "restore", str(bad), "--yes")
    _one_line_error(done)
    assert "damaged" in done.stderr
    assert _db(home).read_bytes() == before
    assert [p.name for p in _db(home).parent.iterdir() if ".replaced-" in p.name] == []


def test_restore_refuses_a_file_that_is_not_a_database(three: Path, tmp_path: Path) -> None:
    home = copy_home(three, tmp_path)
    other = tmp_path / "notes.txt"
    other.write_text("not a database at all\n" * 100)
    before = _db(home).read_bytes()
    done = run_cli(home, "memory", "restore", str(other), "--yes")
    _one_line_error(done)
    assert "not a SQLite database" in done.stderr
    assert _db(home).read_bytes() == before


def test_restore_refuses_a_database_that_is_not_a_memory_store(three: Path, tmp_path: Path) -> None:
    home = copy_home(three, tmp_path)
    other = tmp_path / "other.sqlite"
    conn = apsw.Connection(str(other))
    conn.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
    conn.close()
    done = run_cli(home, "memory", "restore", str(other), "--yes")
    _one_line_error(done)
    assert "not an openclaw memory database" in done.stderr


def test_restore_of_a_missing_file_or_a_directory_is_a_one_line_error(three: Path, tmp_path: Path) -> None:
    home = copy_home(three, tmp_path)
    for target, said in ((tmp_path / "gone.sqlite", "cannot be read"), (tmp_path, "directory")):
        done = run_cli(home, "memory", "restore", str(target), "--yes")
        _one_line_error(done)
        assert said in done.stderr


def test_restore_is_refused_while_the_gateway_runs(three: Path, tmp_path: Path) -> None:
    home = copy_home(three, tmp_path)
    out = tmp_path / "three.sqlite"
    assert run_cli(home, "memory", "backup", "-o", str(out)).returncode == 0
    write_config(home, None, llm={"model": None})  # only its presence matters: no model to preload
    before = _db(home).read_bytes()
    with running_gateway(home):
        done = run_cli(home, "memory", "restore", str(out), "--yes")
        _one_line_error(done)
        assert "gateway" in done.stderr and "openclaw gateway stop" in done.stderr
        assert _db(home).read_bytes() == before
    assert run_cli(home, "memory", "restore", str(out), "--yes").returncode == 0


def test_restore_in_process_replaces_a_file_sqlite_cannot_open(tmp_path: Path) -> None:
    good = fake_store(tmp_path / "good.sqlite", 12)
    db = tmp_path / "live" / "memory.sqlite"
    db.parent.mkdir(mode=0o700)
    db.write_bytes(b"SQLite format 3\x00" + os.urandom(8000))  # the header's magic, then garbage
    Path(str(db) + "-wal").write_bytes(os.urandom(4096))  # a stale WAL must not be replayed into it
    report = restore(db, good, datetime.now(UTC))
    assert report.records == 12 and live_ids(db) == live_ids(good)
    assert report.kept is not None and Path(report.kept).exists()
    assert backup.problem_of(db) is None


def test_restore_in_process_refuses_a_copy_from_a_newer_openclaw(tmp_path: Path) -> None:
    newer = fake_store(tmp_path / "newer.sqlite", 3)
    conn = apsw.Connection(str(newer))
    conn.execute("INSERT INTO schema_migrations VALUES ('9999_future', '2030-01-01')")
    conn.close()
    db = fake_store(tmp_path / "live" / "memory.sqlite", 2)
    with pytest.raises(InvalidInput, match="newer openclaw"):
        restore(db, newer, datetime.now(UTC))
    assert len(live_ids(db)) == 2


# --- forgetting --------------------------------------------------------------------------------------


def test_a_purge_forgets_the_person_in_every_backup_too(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    secret = "alice keeps her spare key under the blue flowerpot"
    assert cli("memory", "add", secret, "--user", "alice").returncode == 0
    assert cli("memory", "add", "bob likes green tea", "--user", "bob").returncode == 0
    assert cli("memory", "backup").returncode == 0
    assert cli("session", "sweep").returncode == 0
    copies = list((_db(home).parent / "backups").iterdir())
    assert len(copies) == 2 and all(secret.encode() in p.read_bytes() for p in copies)
    done = cli("memory", "purge", "--user", "alice", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    assert sorted(json.loads(done.stdout)["files"]) == sorted(str(p) for p in copies)
    for path in _db(home).parent.rglob("*"):
        if path.is_file():
            assert b"blue flowerpot" not in path.read_bytes(), path
    assert all(len(live_ids(p)) == 1 for p in copies)  # bob's memory stays
