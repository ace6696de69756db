"""`memory migrate`: older export versions rewritten to the current one, with FILE.bak kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openclaw_cli.core.errors import Conflict, InvalidInput
from openclaw_cli.memory.portability.migrate import migrate_file
from tests.portability_helpers import HEADER, FakeService, import_file, write_export

# A pre-1.0 record: text at the top level and derived fields, as `memory list --json` prints one.
OLD_RECORD = {
    "id": "mem-old-1",
    "scope": "user",
    "userId": "lin",
    "agentId": "main",
    "category": "preference",
    "l0": "我喜欢喝咖啡",
    "l1": "每天早上",
    "l2": None,
    "l0Hash": "abc",
    "language": "zh",
    "vectorStatus": "ready",
    "deleted": False,
    "createdAt": "2025-03-01T08:00:00.000Z",
    "updatedAt": "2025-03-02T08:00:00.000Z",
    "fsrs": {
        "stability": 4.5,
        "difficulty": 5.0,
        "lastReview": None,
        "nextReview": None,
        "reps": 2,
        "lapses": 0,
    },
}


def _old_file(tmp_path: Path) -> Path:
    return write_export(tmp_path / "old.json", {**HEADER, "version": "0.9"}, [OLD_RECORD])


def test_a_0_x_export_is_migrated_in_place_and_the_original_kept_as_bak(tmp_path: Path) -> None:
    path = _old_file(tmp_path)
    original = path.read_bytes()
    report = migrate_file(path)
    assert (report.from_version, report.to_version, report.records) == ("0.9", "1.0", 1)
    assert report.backup == tmp_path / "old.json.bak" and report.backup.read_bytes() == original
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["version"] == "1.0"
    migrated = document["records"][0]
    assert migrated["content"] == {"l0": "我喜欢喝咖啡", "l1": "每天早上", "l2": None}
    assert not {"l0", "l0Hash", "vectorStatus", "deleted"} & set(migrated)
    service = FakeService(tmp_path / "home")
    assert import_file(service, path).added == ["mem-old-1"]
    assert service.get("mem-old-1").fsrs.reps == 2


def test_a_0_x_export_is_refused_by_import_until_migrated(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as caught:
        import_file(FakeService(tmp_path / "home"), _old_file(tmp_path))
    assert "openclaw memory migrate" in (caught.value.hint or "")


def test_a_jsonl_export_stays_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    lines = [{**HEADER, "version": "0.9"}, OLD_RECORD, {"end": True, "records": 1}]
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    migrate_file(path)
    rewritten = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert rewritten[0]["version"] == "1.0" and rewritten[1]["content"]["l0"] == "我喜欢喝咖啡"
    assert rewritten[2] == {"end": True, "records": 1}


def test_a_current_file_is_left_alone(tmp_path: Path) -> None:
    path = write_export(tmp_path / "e.json", HEADER, [])
    before = path.read_bytes()
    report = migrate_file(path)
    assert report.backup is None and path.read_bytes() == before
    assert not (tmp_path / "e.json.bak").exists()


def test_a_newer_major_version_cannot_be_migrated(tmp_path: Path) -> None:
    path = write_export(tmp_path / "e.json", {**HEADER, "version": "2.0"}, [])
    with pytest.raises(InvalidInput, match="newer than this openclaw"):
        migrate_file(path)
    assert not (tmp_path / "e.json.bak").exists()


def test_version_banana_cannot_be_migrated(tmp_path: Path) -> None:
    path = write_export(tmp_path / "e.json", {**HEADER, "version": "banana"}, [])
    with pytest.raises(InvalidInput, match="'banana' is not a version"):
        migrate_file(path)


def test_an_unknown_target_version_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="cannot migrate to version 3.1"):
        migrate_file(_old_file(tmp_path), "3.1")
    with pytest.raises(InvalidInput, match="'banana' is not a version"):
        migrate_file(_old_file(tmp_path), "banana")


def test_an_existing_backup_is_never_overwritten(tmp_path: Path) -> None:
    path = _old_file(tmp_path)
    original = path.read_bytes()
    (tmp_path / "old.json.bak").write_text("an earlier backup", encoding="utf-8")
    with pytest.raises(Conflict, match="already exists"):
        migrate_file(path)
    assert path.read_bytes() == original
    assert (tmp_path / "old.json.bak").read_text(encoding="utf-8") == "an earlier backup"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.json", "old.json.bak"]


def test_a_damaged_line_stops_the_migration_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_text(
        json.dumps({**HEADER, "version": "0.9"}) + "\n" + '{"id": "mem-1", "l0": \n', encoding="utf-8"
    )
    before = path.read_bytes()
    with pytest.raises(InvalidInput, match=r"records\[0\] \(line 2\)"):
        migrate_file(path)
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["old.jsonl"]
