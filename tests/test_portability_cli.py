"""`openclaw memory export | import | migrate` as real processes (the real local embedding model)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from tests.conftest import run_cli
from tests.memory_helpers import found_by_meaning
from tests.portability_helpers import HEADER, record, write_export

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True


def test_export_piped_into_import_in_another_home_finds_the_memories(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("memory", "add", "我喜欢喝咖啡，不喜欢茶", "-c", "preference", "--user", "lin").returncode == 0
    assert cli("memory", "add", "prefers dark mode in every editor", "-c", "preference").returncode == 0
    exported = cli("memory", "export", "--format", "jsonl")
    assert exported.returncode == 0 and exported.stderr == ""
    other = tmp_path / "other"
    imported = run_cli(other, "memory", "import", "-", "--json", input=exported.stdout)
    assert imported.returncode == 0, imported.stderr
    assert imported.json()["added"] == 2 and imported.json()["pendingVectors"] == 0
    found = run_cli(other, "memory", "search", "coffee", "--user", "lin", "--json")
    assert found.json()["results"][0]["l0"] == "我喜欢喝咖啡，不喜欢茶"
    # The import embedded with the packaged models: a vector-only search, across languages and without
    # a shared word, finds the memory (the in-process portability tests use a fake embedder for speed).
    assert found_by_meaning(other, "which drink does she prefer", "--user", "lin") == [
        "我喜欢喝咖啡，不喜欢茶"
    ]
    again = run_cli(other, "memory", "import", "-", input=exported.stdout)
    assert again.returncode == 0 and "skipped 2 existing" in again.stdout


def test_export_to_a_file_is_private_and_complete(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cli("memory", "add", "likes long walks")
    target = tmp_path / "out" / "memories.json"
    result = cli("memory", "export", "-o", str(target))
    assert result.returncode == 0 and "exported 1 memories" in result.stdout
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    assert json.loads(target.read_text(encoding="utf-8"))["records"][0]["content"]["l0"] == "likes long walks"
    assert sorted(p.name for p in target.parent.iterdir()) == ["memories.json"]


def test_invalid_records_are_listed_by_index_and_nothing_is_imported(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write_export(
        tmp_path / "e.json",
        HEADER,
        [record("mem-1", "fine"), record("mem-2", "x", category="gossip"), record("mem-1", "again")],
    )
    result = cli("memory", "import", str(path))
    assert result.returncode == 1 and result.stdout == ""
    lines = result.stderr.strip().split("\n")
    assert "records[1]" in lines[0] and "unknown category 'gossip'" in lines[0]
    assert "records[2]" in lines[1] and "duplicate id 'mem-1'" in lines[1]
    assert lines[-1].startswith("openclaw: error: 2 of 3 records cannot be imported; nothing was imported")
    as_json = cli("memory", "import", str(path), "--json")
    assert as_json.returncode == 1 and [e["index"] for e in as_json.json()["invalid"]] == [1, 2]
    assert cli("memory", "list", "--json").json() == []


def test_version_2_0_is_refused_naming_migrate_and_migrate_explains(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write_export(tmp_path / "e.json", {**HEADER, "version": "2.0"}, [record("mem-1", "x")])
    result = cli("memory", "import", str(path))
    assert result.returncode == 1 and "openclaw memory migrate" in result.stderr
    assert "Traceback" not in result.stderr
    migrated = cli("memory", "migrate", str(path))
    assert migrated.returncode == 1 and "newer than this openclaw" in migrated.stderr


def test_migrate_rewrites_an_old_file_and_keeps_the_backup(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    old = {"id": "mem-1", "l0": "old shape", "createdAt": "2025-03-01T08:00:00.000Z", "vectorStatus": "ready"}
    path = write_export(tmp_path / "e.json", {**HEADER, "version": "0.9"}, [old])
    result = cli("memory", "migrate", str(path), "--json")
    assert result.returncode == 0, result.stderr
    assert result.json()["backup"] == str(path) + ".bak" and result.json()["to"] == "1.0"
    dry = cli("memory", "import", str(path), "--dry-run", "--json")
    assert dry.returncode == 0 and dry.json()["added"] == 1 and dry.json()["dryRun"] is True


def test_bad_usage_exits_2(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write_export(tmp_path / "e.json", HEADER, [])
    assert cli("memory", "import", str(path), "--on-conflict", "merge").returncode == 2
    assert cli("memory", "export", "--format", "xml").returncode == 2
    assert cli("memory", "export", "--scope", "team").returncode == 2


def test_a_missing_or_non_json_file_is_a_one_line_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    missing = cli("memory", "import", str(tmp_path / "nope.json"))
    assert missing.returncode == 1 and "no such file" in missing.stderr
    garbage = tmp_path / "g.json"
    garbage.write_bytes(b"\x89PNG not an export")
    result = cli("memory", "import", str(garbage))
    assert result.returncode == 1 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
