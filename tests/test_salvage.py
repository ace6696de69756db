"""Salvage of a damaged memory database (`memory recover`, `doctor --fix`): real damage, real files.

One leaf page of `records` in a 300-memory store is overwritten with garbage, as in the report that asked
for this: without a backup at least 90% of the memories come back, with one every memory does; the lost
ones are named; search, export and the index check work afterwards, and the damaged file is kept.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from openclaw_cli.core.errors import StoreError
from openclaw_cli.memory.store.memory_store import MemoryStore
from openclaw_cli.memory.upkeep import backup, recovery
from openclaw_cli.security.database import connect, is_plain_sqlite
from tests import encrypted_homes
from tests.conftest import Result, run_cli
from tests.gateway_helpers import running_gateway, write_config
from tests.memory_helpers import found_by_meaning
from tests.salvage_helpers import (
    cli_store,
    copy_home,
    damage_middle_leaf,
    fake_factory,
    fake_store,
    leaf_pages,
    live_ids,
    overwrite_page,
    text,
)

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

COUNT = 300
ALL_IDS = {f"mem-{i:03d}" for i in range(COUNT)}


def _db(home: Path) -> Path:
    return home / "agents" / "main" / "memory" / "memory.sqlite"


@pytest.fixture(scope="module")
def store300(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home of 300 memories added through the CLI with the default local embedder (built once)."""
    home = tmp_path_factory.mktemp("store300") / "home"
    return cli_store(home, [(f"mem-{i:03d}", text(i)) for i in range(COUNT)])


def _exported(home: Path) -> set[str]:
    done = run_cli(home, "memory", "export", "--format", "jsonl")
    assert done.returncode == 0, done.stderr
    return {line["id"] for line in done.json_lines() if "id" in line and "content" in line}


def _finds(home: Path, i: int) -> bool:
    done = run_cli(home, "memory", "search", f"teapot number {i}", "--json")
    assert done.returncode == 0, done.stderr
    return f"mem-{i:03d}" in [hit["id"] for hit in json.loads(done.stdout)["results"][:3]]


def _number(record_id: str) -> int:
    return int(record_id.removeprefix("mem-"))


def test_without_a_backup_at_least_90_percent_come_back_and_the_lost_are_named(
    store300: Path, tmp_path: Path
) -> None:
    home = copy_home(store300, tmp_path)
    db = _db(home)
    damage_middle_leaf(db)
    refused = run_cli(home, "memory", "export")
    assert refused.returncode == 1 and "memory recover" in refused.stderr, refused.stderr
    damaged_bytes = db.read_bytes()

    dry = run_cli(home, "memory", "recover", "--json")
    assert dry.returncode == 0, dry.stderr
    preview = json.loads(dry.stdout)[0]
    assert preview["applied"] is False and db.read_bytes() == damaged_bytes
    assert sorted(p.name for p in db.parent.iterdir() if "damaged" in p.name) == []

    done = run_cli(home, "memory", "recover", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)[0]
    assert report["applied"] and report["backup"] is None and report["restoredFromBackup"] == 0
    assert report["salvaged"] >= 0.9 * COUNT, report
    assert report["salvaged"] + report["lost"] == COUNT and report["lostIdsComplete"]
    assert report["salvaged"] == preview["salvaged"]
    exported = _exported(home)
    lost = {entry["id"] for entry in report["lostRecords"]}
    assert lost == ALL_IDS - exported and len(exported) == report["salvaged"]
    for entry in report["lostRecords"]:  # the keyword index still knew each lost memory's words
        assert entry["knownFrom"] == "index" and f"number {_number(entry['id'])}" in entry["keywords"]
    kept = Path(report["damagedFileKept"])
    assert kept.exists() and kept.parent == db.parent and backup.problem_of(kept) is not None
    assert report["vectorsPending"] == 0
    assert run_cli(home, "memory", "index", "--check").returncode == 0
    assert _finds(home, _number(min(exported))) and _finds(home, _number(max(exported)))
    # The salvaged vectors are the packaged models' own: a vector-only search (no keywords to help) of
    # a salvaged memory's text puts that memory first among 300 that differ from it only in numbers.
    for i in (_number(min(exported)), _number(max(exported))):
        assert found_by_meaning(home, text(i))[0] == text(i)
    assert run_cli(home, "doctor").returncode == 0


def _ids_on_page(db: Path, page: int, tmp_path: Path) -> list[str]:
    """The records a garbage page `page` takes: salvage a damaged copy without writing anything."""
    probe = tmp_path / "probe" / "memory.sqlite"
    probe.parent.mkdir()
    shutil.copyfile(db, probe)
    overwrite_page(probe, page)
    report = recovery.recover_file(probe, datetime.now(UTC), apply=False, embedder_factory=None)
    return [entry["id"] for entry in report.salvage.lost]


def test_doctor_fix_with_a_backup_brings_back_every_record(store300: Path, tmp_path: Path) -> None:
    home = copy_home(store300, tmp_path)
    db = _db(home)
    assert run_cli(home, "memory", "index", "--check").returncode == 0  # cron's check: today's backup
    pages = leaf_pages(db, "records")
    page = pages[len(pages) // 2]
    on_page = _ids_on_page(db, page, tmp_path)
    assert len(on_page) >= 5
    deleted = on_page[0]  # deleted after the backup was made: it must stay deleted
    assert run_cli(home, "memory", "delete", deleted).returncode == 0
    assert leaf_pages(db, "records") == pages
    overwrite_page(db, page)

    doctor = run_cli(home, "doctor")
    assert doctor.returncode == 1 and "memory recover" in doctor.stdout
    fixed = run_cli(home, "doctor", "--fix", "--json")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    findings = [f for f in json.loads(fixed.stdout)["findings"] if f["check"].startswith("memory.")]
    salvaged = [f for f in findings if f["fixed"]]
    assert (
        len(salvaged) == 1 and f"{len(on_page) - 1} restored from a backup, 0 lost" in salvaged[0]["message"]
    )
    assert not any(f["severity"] != "ok" and not f["fixed"] for f in findings), findings

    assert _exported(home) == ALL_IDS - {deleted}
    history = json.loads(run_cli(home, "memory", "history", deleted, "--json").stdout)
    assert [row["action"] for row in history] == ["add", "delete"]
    assert run_cli(home, "memory", "index", "--check").returncode == 0
    assert _finds(home, _number(on_page[1]))  # a memory the backup brought back is searchable
    kept = [p for p in db.parent.iterdir() if ".damaged-" in p.name]
    assert len(kept) == 1


# --- in process, on stores with a deterministic fake embedder ------------------------------------------


def _recover(db: Path, *, apply: bool = True) -> recovery.RecoverReport:
    return recovery.recover_file(db, datetime.now(UTC), apply=apply, embedder_factory=fake_factory())


@pytest.mark.parametrize("kind", encrypted_homes.KINDS)
def test_a_damaged_history_page_loses_no_record_and_the_backup_refills_the_history(
    tmp_path: Path, kind: str
) -> None:
    encrypted_homes.prepare(tmp_path, kind)  # encrypted: the store, its backup and the salvage copy
    db = fake_store(tmp_path / "memory.sqlite", COUNT)
    assert backup.daily(db, 7, datetime.now(UTC).date()) is not None
    damage_middle_leaf(db, "history")
    report = _recover(db)
    done = report.salvage
    assert done.salvaged == COUNT and not done.lost and not done.restored
    assert done.tables["history"].damaged and done.history_restored > 0
    conn = connect(db)  # keyed in an encrypted home
    assert conn.execute("SELECT count(*) FROM history").fetchone()[0] == COUNT
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


@pytest.mark.parametrize("kind", encrypted_homes.KINDS)
def test_a_file_that_does_not_open_at_all_comes_back_from_the_backup(tmp_path: Path, kind: str) -> None:
    encrypted_homes.prepare(tmp_path, kind)  # encrypted: the store, its backup and the salvage copy
    db = fake_store(tmp_path / "memory.sqlite", 50)
    assert is_plain_sqlite(db) == (kind == "plain")
    made = backup.daily(db, 7, datetime.now(UTC).date())
    assert made is not None and is_plain_sqlite(Path(made.path)) == (kind == "plain")  # encrypted too
    overwrite_page(db, 1)
    report = _recover(db)
    assert report.applied and report.salvage.salvaged == 0
    assert len(report.salvage.restored) == 50 and not report.salvage.lost
    assert live_ids(db) == {f"mem-{i:03d}" for i in range(50)}
    store = MemoryStore.open(db)
    assert store.conn.execute("SELECT count(*) FROM records_fts").fetchone()[0] == 50
    store.close()


@pytest.mark.parametrize("kind", encrypted_homes.KINDS)
def test_nothing_readable_and_no_backup_is_refused_and_nothing_is_changed(tmp_path: Path, kind: str) -> None:
    encrypted_homes.prepare(tmp_path, kind)
    db = fake_store(tmp_path / "memory.sqlite", 50)
    overwrite_page(db, 1)
    before = db.read_bytes()
    listing = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(StoreError, match="no backup"):
        _recover(db)
    assert db.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == listing


@pytest.mark.parametrize("kind", encrypted_homes.KINDS)
def test_a_dry_run_writes_nothing(tmp_path: Path, kind: str) -> None:
    encrypted_homes.prepare(tmp_path, kind)
    db = fake_store(tmp_path / "memory.sqlite", COUNT)
    damage_middle_leaf(db)
    before = db.read_bytes()
    report = _recover(db, apply=False)
    assert not report.applied and report.salvage.salvaged >= 0.9 * COUNT
    assert db.read_bytes() == before
    # A reader of a WAL database opens its -wal and -shm; nothing else appears.
    made = {p.name for p in tmp_path.iterdir()} - {"security"}  # the key file of an encrypted home
    assert made <= {"memory.sqlite", "memory.sqlite-wal", "memory.sqlite-shm"}


@pytest.mark.parametrize("kind", encrypted_homes.KINDS)
def test_a_whole_database_is_left_alone(tmp_path: Path, kind: str) -> None:
    encrypted_homes.prepare(tmp_path, kind)
    db = fake_store(tmp_path / "memory.sqlite", 20)
    before = db.read_bytes()
    report = _recover(db)
    assert report.damage is None and not report.applied and db.read_bytes() == before


@pytest.mark.parametrize("kind", encrypted_homes.KINDS)
def test_a_record_whose_overflow_page_is_damaged_is_the_only_one_lost(tmp_path: Path, kind: str) -> None:
    encrypted_homes.prepare(tmp_path, kind)
    db = fake_store(tmp_path / "memory.sqlite", 40)
    store = MemoryStore.open(db, fake_factory())
    store.conn.execute("UPDATE records SET l2 = ? WHERE id = 'mem-020'", ("long transcript " * 2000,))
    store.close()
    conn = connect(db)  # keyed in an encrypted home
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    overflow = [
        int(r[0])
        for r in conn.execute("SELECT pageno FROM dbstat WHERE name = 'records' AND pagetype = 'overflow'")
    ]
    conn.close()
    overwrite_page(db, overflow[len(overflow) // 2])
    report = _recover(db)
    assert report.salvage.tables["records"].unreadable_rows == [21]  # rowid of mem-020
    assert [entry["id"] for entry in report.salvage.lost] == ["mem-020"]
    assert report.salvage.salvaged == 39


@pytest.mark.parametrize("kind", encrypted_homes.KINDS)
def test_when_the_id_index_is_damaged_too_the_history_names_the_lost(tmp_path: Path, kind: str) -> None:
    encrypted_homes.prepare(tmp_path, kind)
    db = fake_store(tmp_path / "memory.sqlite", COUNT)
    damage_middle_leaf(db, "sqlite_autoindex_records_1")
    damage_middle_leaf(db)
    report = _recover(db, apply=False)
    done = report.salvage
    assert not done.ids_complete and done.salvaged >= 0.9 * COUNT
    assert done.salvaged + len(done.lost) == COUNT
    assert {entry["knownFrom"] for entry in done.lost} <= {"index", "history"}


def test_recover_is_refused_while_the_gateway_runs(tmp_path: Path) -> None:
    home = tmp_path / "home"
    db = _db(home)
    db.parent.mkdir(parents=True, mode=0o700)
    fake_store(db, COUNT)
    damage_middle_leaf(db)
    write_config(home, None, llm={"model": None})  # only its presence matters: no model to preload
    before = db.read_bytes()
    with running_gateway(home):
        done: Result = run_cli(home, "memory", "recover", "--yes")
        assert done.returncode == 1 and "gateway" in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    assert db.read_bytes() == before
