"""What `memory restore` refuses (issue 48 §2), what doctor finds and fixes in the schema, and a refused
`memory recover` leaving nothing behind (§4): real processes on real SQLite files.

The schema a copy must have is the one its migrations build on an empty database (upkeep/schema.py),
so each test breaks one thing in an otherwise good copy and expects a one-line refusal with the live
database left byte for byte as it was.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import apsw
import pytest

from openclaw_cli.memory.upkeep import backup
from tests.conftest import Result, run_cli
from tests.salvage_helpers import cli_store, copy_home, fake_store

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("seeded") / "home"
    return cli_store(home, [("seed-1", "seed one"), ("seed-2", "the kettle is in the blue cupboard")])


def _db(home: Path) -> Path:
    return home / "agents" / "main" / "memory" / "memory.sqlite"


def _one_line_error(done: Result) -> str:
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("openclaw: error: "), done.stderr
    return lines[0]


def _backup(home: Path, tmp_path: Path) -> Path:
    out = tmp_path / "b.sqlite"
    done = run_cli(home, "memory", "backup", "-o", str(out))
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def good_copy(seeded: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A good copy of the seeded database, made once by the real `memory backup` (the refusal tests each
    break their own copy of it; the restore of a good copy makes its own)."""
    directory = tmp_path_factory.mktemp("good-copy")
    return _backup(copy_home(seeded, directory), directory)


def _copy_of(good_copy: Path, tmp_path: Path) -> Path:
    """This test's own copy of the good backup, to break."""
    copy = tmp_path / "b.sqlite"
    shutil.copy2(good_copy, copy)
    return copy


def _alter(path: Path, sql: str) -> None:
    """Change a copy the way a user's own sqlite3 would (no sqlite-vec loaded)."""
    conn = apsw.Connection(str(path))
    try:
        conn.execute(sql)
    finally:
        conn.close()


def _refused(home: Path, copy: Path, said: str) -> None:
    before = _db(home).read_bytes()
    line = _one_line_error(run_cli(home, "memory", "restore", str(copy), "--yes"))
    assert said in line and "was not changed" in line, line
    assert _db(home).read_bytes() == before
    assert [p.name for p in _db(home).parent.iterdir() if ".replaced-" in p.name] == []
    assert run_cli(home, "memory", "add", "after the refusal").returncode == 0


def test_restore_refuses_a_copy_without_its_history_table(
    seeded: Path, good_copy: Path, tmp_path: Path
) -> None:
    home = copy_home(seeded, tmp_path)
    copy = _copy_of(good_copy, tmp_path)
    _alter(copy, "DROP TABLE history")
    _refused(home, copy, "table history is missing")


def test_restore_refuses_a_copy_with_another_user_version(
    seeded: Path, good_copy: Path, tmp_path: Path
) -> None:
    home = copy_home(seeded, tmp_path)
    copy = _copy_of(good_copy, tmp_path)
    _alter(copy, "PRAGMA user_version = 999")
    _refused(home, copy, "user_version is 999")


def test_restore_refuses_a_copy_missing_a_column(seeded: Path, good_copy: Path, tmp_path: Path) -> None:
    home = copy_home(seeded, tmp_path)
    copy = _copy_of(good_copy, tmp_path)
    _alter(copy, "DROP INDEX records_unreflected; ALTER TABLE records DROP COLUMN reflected_at")
    _refused(home, copy, "column records.reflected_at is missing")


def test_restore_refuses_a_copy_missing_an_index(seeded: Path, good_copy: Path, tmp_path: Path) -> None:
    home = copy_home(seeded, tmp_path)
    copy = _copy_of(good_copy, tmp_path)
    _alter(copy, "DROP INDEX records_by_hash")
    _refused(home, copy, "index records_by_hash is missing")


def test_restore_refuses_a_copy_with_a_trigger_of_its_own(
    seeded: Path, good_copy: Path, tmp_path: Path
) -> None:
    home = copy_home(seeded, tmp_path)
    copy = _copy_of(good_copy, tmp_path)
    _alter(copy, "CREATE TRIGGER wipe AFTER INSERT ON records BEGIN DELETE FROM history; END")
    _refused(home, copy, "trigger wipe is not in this version's schema")


def test_restore_refuses_a_copy_with_an_extra_table(seeded: Path, good_copy: Path, tmp_path: Path) -> None:
    home = copy_home(seeded, tmp_path)
    copy = _copy_of(good_copy, tmp_path)
    _alter(copy, "CREATE TABLE stranger (x)")
    _refused(home, copy, "table stranger is not in this version's schema")


def test_restore_refuses_a_copy_without_its_keyword_index(
    seeded: Path, good_copy: Path, tmp_path: Path
) -> None:
    home = copy_home(seeded, tmp_path)
    copy = _copy_of(good_copy, tmp_path)
    _alter(copy, "DROP TABLE records_fts")
    _refused(home, copy, "table records_fts is missing")


def test_restore_refuses_a_copy_whose_vector_table_is_gone(
    seeded: Path, good_copy: Path, tmp_path: Path
) -> None:
    home = copy_home(seeded, tmp_path)
    copy = _copy_of(good_copy, tmp_path)
    # Without sqlite-vec the vec0 table cannot be dropped; its schema row and shadows can.
    conn = apsw.Connection(str(copy))
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("DELETE FROM sqlite_schema WHERE name = 'vec_1'")
    conn.close()
    _refused(home, copy, "table vec_1 is missing")


def test_a_good_copy_is_still_restored(seeded: Path, tmp_path: Path) -> None:
    home = copy_home(seeded, tmp_path)
    copy = _backup(home, tmp_path)
    done = run_cli(home, "memory", "restore", str(copy), "--yes", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["records"] == 2
    assert run_cli(home, "memory", "add", "after").returncode == 0


# --- doctor --------------------------------------------------------------------------------------------


def _findings(done: Result) -> list[dict[str, object]]:
    return [f for f in json.loads(done.stdout)["findings"] if f["check"] == "memory.schema"]


def test_doctor_finds_a_missing_history_table_and_fix_recreates_it(seeded: Path, tmp_path: Path) -> None:
    home = copy_home(seeded, tmp_path)
    _alter(_db(home), "DROP TABLE history")
    found = run_cli(home, "doctor", "--json")
    assert found.returncode != 0, found.stdout
    (finding,) = _findings(found)
    assert finding["severity"] == "error" and "table history is missing" in str(finding["message"])
    fixed = run_cli(home, "doctor", "--fix", "--json")
    (finding,) = _findings(fixed)
    assert finding["fixed"] is True and "recreated empty" in str(finding["message"])
    assert _findings(run_cli(home, "doctor", "--json")) == []
    assert run_cli(home, "memory", "add", "after the fix").returncode == 0


def test_doctor_fix_adds_back_a_missing_column(seeded: Path, tmp_path: Path) -> None:
    home = copy_home(seeded, tmp_path)
    _alter(_db(home), "DROP INDEX records_unreflected; ALTER TABLE records DROP COLUMN reflected_at")
    (finding,) = _findings(run_cli(home, "doctor", "--json"))
    assert "column records.reflected_at is missing" in str(finding["message"])
    (finding,) = _findings(run_cli(home, "doctor", "--fix", "--json"))
    assert finding["fixed"] is True
    assert _findings(run_cli(home, "doctor", "--json")) == []
    assert run_cli(home, "memory", "add", "the column is back").returncode == 0


def test_doctor_cannot_fix_a_missing_meta_table_and_says_what_to_do(seeded: Path, tmp_path: Path) -> None:
    home = copy_home(seeded, tmp_path)
    _alter(_db(home), "DROP TABLE meta")
    done = run_cli(home, "doctor", "--fix", "--json")
    findings = _findings(done)
    assert findings and findings[0]["fixed"] is False and "meta" in str(findings[0]["message"])
    assert "restore" in str(findings[0]["hint"])


# --- memory recover, refused ---------------------------------------------------------------------------


def _header_zeroed(home: Path) -> Path:
    db = _db(home)
    data = bytearray(db.read_bytes())
    data[100:164] = bytes(64)  # page 1's b-tree header: nothing reads, and there is no backup
    db.write_bytes(bytes(data))
    return db


def test_a_refused_recover_leaves_no_new_file(seeded: Path, tmp_path: Path) -> None:
    home = copy_home(seeded, tmp_path)
    db = _header_zeroed(home)
    before = sorted(p.name for p in db.parent.iterdir())
    for _ in range(2):
        line = _one_line_error(run_cli(home, "memory", "recover", "--yes"))
        assert f"nothing in {db} reads" in line and ".damaged-" not in line
    assert sorted(p.name for p in db.parent.iterdir()) == before


def test_a_refused_recover_from_doctor_fix_leaves_no_new_file(seeded: Path, tmp_path: Path) -> None:
    home = copy_home(seeded, tmp_path)
    db = _header_zeroed(home)
    before = sorted(p.name for p in db.parent.iterdir())
    done = run_cli(home, "doctor", "--fix")
    assert done.returncode != 0
    assert sorted(p.name for p in db.parent.iterdir()) == before


# --- replaced copies: pruned like backups, listed with their ages ------------------------------------------


def test_replaced_copies_are_pruned_after_keep_days_and_damaged_ones_stay(tmp_path: Path) -> None:
    db = fake_store(tmp_path / "memory.sqlite", 3)
    today = date(2026, 5, 10)
    names = {
        days: f"memory.sqlite.replaced-{(today - timedelta(days=days)).strftime('%Y%m%d')}T120000.000Z"
        for days in (0, 2, 3, 40)
    }
    for name in names.values():
        shutil.copyfile(db, tmp_path / name)
    (tmp_path / (names[40] + "-wal")).write_bytes(b"")
    damaged = tmp_path / "memory.sqlite.damaged-20200101T000000.000Z"
    shutil.copyfile(db, damaged)
    report = backup.daily(db, 3, today)
    assert report is not None and sorted(Path(p).name for p in report.pruned or []) == sorted(
        [names[3], names[40]]
    )
    left = {p.name for p in tmp_path.iterdir()}
    assert names[0] in left and names[2] in left and damaged.name in left
    assert names[3] not in left and names[40] not in left and names[40] + "-wal" not in left


def test_backup_list_shows_the_age_of_each_copy(seeded: Path, tmp_path: Path) -> None:
    home = copy_home(seeded, tmp_path)
    copy = _backup(home, tmp_path)
    assert run_cli(home, "memory", "restore", str(copy), "--yes").returncode == 0
    kept = next(p for p in _db(home).parent.iterdir() if ".replaced-" in p.name)
    old = time.time() - 3 * 86400
    os.utime(kept, (old, old))
    listed = json.loads(run_cli(home, "memory", "backup", "--list", "--json").stdout)
    (replaced,) = [b for b in listed[0]["backups"] if b["kind"] == "replaced"]
    assert 3 * 86400 <= replaced["ageSeconds"] < 4 * 86400
    shown = run_cli(home, "memory", "backup", "--list").stdout
    assert any("3 d old" in line and "replaced" in line for line in shown.splitlines()), shown


# --- an older copy: checked against the schema of the migrations it has ---------------------------------


def test_a_copy_from_before_the_last_migration_is_restored_and_migrated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from openclaw_cli.memory.store.sqlite import migrations
    from openclaw_cli.memory.store.sqlite.connection import open_db
    from openclaw_cli.memory.upkeep import schema
    from openclaw_cli.memory.upkeep.restore import restore

    older = tmp_path / "older.sqlite"
    with monkeypatch.context() as patched:  # an openclaw that did not have the last migration yet
        patched.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:-1])
        open_db(older).close()
    db = fake_store(tmp_path / "live" / "memory.sqlite", 2)
    report = restore(db, older, datetime.now(UTC))
    assert report.records == 0 and report.kept is not None
    conn = open_db(db)  # the next open migrates it, as any older store
    try:
        assert schema.difference(conn).ok
        assert migrations.MIGRATIONS[-1][0] in schema.applied_names(conn)
    finally:
        conn.close()


def test_a_copy_claiming_a_migration_its_schema_lacks_is_refused(
    seeded: Path, good_copy: Path, tmp_path: Path
) -> None:
    home = copy_home(seeded, tmp_path)
    copy = _copy_of(good_copy, tmp_path)
    # The people table (0007) is gone but 0007 is still recorded: not a state any version wrote.
    _alter(copy, "DROP TABLE people")
    _refused(home, copy, "table people is missing")


def test_restore_without_yes_previews_the_copy_and_changes_nothing(
    cli: Any, home: Path, tmp_path: Path
) -> None:
    """Issue 48: `memory restore FILE` without --yes exited 1 with no preview. It shows what the copy holds
    (counts by category, persons, dates, schema version, embedder) and what it would replace; the exit
    status stays non-zero and the live database is untouched."""
    for text, category, user in (("likes green tea", "preference", "ann"), ("moved to Oslo", "event", "bo")):
        assert cli("memory", "add", text, "-c", category, "--user", user).returncode == 0
    copy = tmp_path / "copy.sqlite"
    assert cli("memory", "backup", "-o", str(copy)).returncode == 0
    assert cli("memory", "add", "a third one, after the copy").returncode == 0
    live = home / "agents" / "main" / "memory" / "memory.sqlite"
    before = live.read_bytes()
    shown = cli("memory", "restore", str(copy))
    assert shown.returncode == 1 and "add --yes" in shown.stderr
    assert "holds 2 memories (1 event, 1 preference) of 2 persons" in shown.stdout, shown.stdout
    assert "schema 00" in shown.stdout and "(3 memories)" in shown.stdout, shown.stdout
    as_json = cli("memory", "restore", str(copy), "--json")
    assert as_json.returncode == 1
    found = json.loads(as_json.stdout)
    assert (found["records"], found["currentRecords"], found["restored"]) == (2, 3, False)
    assert found["oldest"] <= found["newest"] and found["schemaVersion"]
    assert live.read_bytes() == before


def test_restore_without_yes_refuses_a_bad_copy_as_a_restore_would(cli: Any, tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not a database at all" * 100)
    shown = cli("memory", "restore", str(bad))
    assert shown.returncode == 1 and "cannot restore" in shown.stderr and shown.stdout == ""
