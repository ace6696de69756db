"""JSON Lines exports as shell pipelines leave them (filtered, cut, joined, headerless), read in-process.

The same pipelines run as real processes in test_portability_pipelines.py; here each framing case is
checked on its own, over real SQLite files with a deterministic local embedder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.memory.portability.migrate import migrate_file
from openclaw_cli.memory.portability.transfer import InvalidExport
from tests.portability_helpers import HEADER, FakeService, import_file, record, write_export

END = {"end": True, "records": 0}


def _lines(path: Path, *values: Any) -> Path:
    path.write_text("".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values), encoding="utf-8")
    return path


def _end(count: int) -> dict[str, Any]:
    return {**END, "records": count}


def _stored(service: FakeService) -> list[str]:
    return sorted(r.id for r in service.list_records())


def test_a_filtered_stream_imports_every_record_read_with_a_count_warning(tmp_path: Path) -> None:
    # `grep -v espresso`: the second of three records is gone, the end line still counts three
    path = _lines(tmp_path / "e.jsonl", HEADER, record("mem-1", "tea"), record("mem-3", "juice"), _end(3))
    service = FakeService(tmp_path / "a")
    report = import_file(service, path)
    assert report.added == ["mem-1", "mem-3"] and report.total == 2 and report.invalid == []
    assert report.warnings == ["line 4: the end line counts 3 records, 2 were read (a filtered stream?)"]
    assert _stored(service) == ["mem-1", "mem-3"]


def test_skip_invalid_counts_only_the_records_sent(tmp_path: Path) -> None:
    path = _lines(tmp_path / "e.jsonl", HEADER, record("mem-1", "tea"), _end(2))
    report = import_file(FakeService(tmp_path / "a"), path, skip_invalid=True)
    assert (report.total, report.added, report.invalid) == (1, ["mem-1"], [])
    assert report.to_dict()["skippedInvalid"] == 0 and len(report.to_dict()["warnings"]) == 1


def test_joined_exports_import_every_record_of_both(tmp_path: Path) -> None:
    # `cat a.jsonl b.jsonl`: a header in the middle starts the second export
    path = _lines(
        tmp_path / "e.jsonl",
        HEADER,
        record("mem-a1", "tea"),
        record("mem-a2", "juice"),
        _end(2),
        {**HEADER, "agent": "work"},
        record("mem-b1", "coffee"),
        _end(1),
    )
    service = FakeService(tmp_path / "a")
    report = import_file(service, path)
    assert report.added == ["mem-a1", "mem-a2", "mem-b1"] and report.warnings == []
    assert _stored(service) == ["mem-a1", "mem-a2", "mem-b1"]


def test_each_part_of_a_joined_stream_is_read_with_its_own_version(tmp_path: Path) -> None:
    # 1.4 may carry fields this openclaw does not know (ignored); in a 1.0 part they are a typo (invalid)
    newer = record("mem-b1", "coffee", mood="cheerful")
    path = _lines(
        tmp_path / "e.jsonl",
        HEADER,
        record("mem-a1", "tea"),
        _end(1),
        {**HEADER, "version": "1.4"},
        newer,
        _end(1),
    )
    assert import_file(FakeService(tmp_path / "a"), path).added == ["mem-a1", "mem-b1"]
    swapped = _lines(
        tmp_path / "f.jsonl",
        {**HEADER, "version": "1.4"},
        record("mem-a1", "tea"),
        _end(1),
        HEADER,
        newer,
        _end(1),
    )
    with pytest.raises(InvalidExport) as caught:
        import_file(FakeService(tmp_path / "b"), swapped)
    [error] = caught.value.errors
    assert error.line == 5 and "mood" in error.message


def test_a_joined_part_of_another_major_version_refuses_the_import(tmp_path: Path) -> None:
    path = _lines(
        tmp_path / "e.jsonl",
        HEADER,
        record("mem-a1", "tea"),
        _end(1),
        {**HEADER, "version": "2.0"},
        record("mem-b1", "x"),
        _end(1),
    )
    service = FakeService(tmp_path / "a")
    with pytest.raises(
        InvalidInput, match=r"line 4: export version 2\.0 has another major version"
    ) as caught:
        import_file(service, path)
    assert "memory migrate" in (caught.value.hint or "")
    assert not service.db_path("user").exists()


def test_a_stream_without_its_header_is_read_as_the_current_version(tmp_path: Path) -> None:
    # `grep -v version` (or `tail -n +2`): records and the end line
    path = _lines(tmp_path / "e.jsonl", record("mem-1", "tea"), record("mem-2", "juice"), _end(2))
    report = import_file(FakeService(tmp_path / "a"), path)
    assert report.added == ["mem-1", "mem-2"] and report.version == "1.0"
    assert report.warnings == ["no header line: read as export version 1.0, the current one"]


def test_records_alone_are_read_with_a_header_and_an_end_warning(tmp_path: Path) -> None:
    # `jq -c 'select(...)'` emits only the records it selects
    path = _lines(tmp_path / "e.jsonl", record("mem-2", "juice"))
    report = import_file(FakeService(tmp_path / "a"), path)
    assert report.added == ["mem-2"]
    assert report.warnings == [
        "no header line: read as export version 1.0, the current one",
        "no end line: the stream may have been cut short; 1 record was read",
    ]


def test_a_stream_cut_right_after_its_header_imports_nothing_with_a_warning(tmp_path: Path) -> None:
    report = import_file(FakeService(tmp_path / "a"), _lines(tmp_path / "e.jsonl", HEADER))
    assert (report.total, report.added) == (0, [])
    assert report.warnings == ["no end line: the stream may have been cut short; 0 records were read"]


def test_records_after_the_end_line_continue_with_a_warning(tmp_path: Path) -> None:
    path = _lines(
        tmp_path / "e.jsonl", HEADER, record("mem-1", "tea"), _end(1), record("mem-2", "juice"), _end(1)
    )
    report = import_file(FakeService(tmp_path / "a"), path)
    assert report.added == ["mem-1", "mem-2"]
    assert report.warnings == [
        "line 4: records follow the end line on line 3 without a header line; read as version 1.0"
    ]


def test_a_cut_export_joined_to_another_is_named_at_the_second_header(tmp_path: Path) -> None:
    path = _lines(
        tmp_path / "e.jsonl", HEADER, record("mem-1", "tea"), HEADER, record("mem-2", "juice"), _end(1)
    )
    report = import_file(FakeService(tmp_path / "a"), path)
    assert report.added == ["mem-1", "mem-2"]
    assert report.warnings == [
        "line 3: a header line comes before the end line of the export above it (was that one cut short?)"
    ]


def test_an_end_line_without_a_count_is_a_warning(tmp_path: Path) -> None:
    path = _lines(tmp_path / "e.jsonl", HEADER, record("mem-1", "tea"), {"end": True})
    report = import_file(FakeService(tmp_path / "a"), path)
    assert report.added == ["mem-1"] and report.warnings == ["line 3: the end line has no record count"]


def test_blank_lines_before_the_header_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text(
        "\n\n"
        + json.dumps(HEADER)
        + "\n"
        + json.dumps(record("mem-1", "tea"))
        + "\n"
        + json.dumps(_end(1))
        + "\n"
    )
    report = import_file(FakeService(tmp_path / "a"), path)
    assert report.added == ["mem-1"] and report.warnings == []


def test_a_line_that_is_not_json_in_a_filtered_stream_is_still_invalid(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text(json.dumps(HEADER) + "\nnot json at all\n" + json.dumps(record("mem-1", "tea")) + "\n")
    with pytest.raises(InvalidExport) as caught:
        import_file(FakeService(tmp_path / "a"), path)
    [error] = caught.value.errors
    assert (error.index, error.line) == (0, 2) and error.message.startswith("not valid JSON")
    assert caught.value.warnings == ["no end line: the stream may have been cut short; 2 records were read"]


def test_a_first_line_that_is_neither_export_nor_record_is_refused(tmp_path: Path) -> None:
    path = _lines(tmp_path / "e.jsonl", {"name": "lin"}, {"name": "sam"})
    with pytest.raises(InvalidInput, match="is not one JSON document"):
        import_file(FakeService(tmp_path / "a"), path)


def test_a_json_document_imports_without_warnings(tmp_path: Path) -> None:
    path = write_export(tmp_path / "e.json", HEADER, [record("mem-1", "tea"), record("mem-2", "juice")])
    report = import_file(FakeService(tmp_path / "a"), path)
    assert report.added == ["mem-1", "mem-2"] and report.warnings == []


def test_two_json_documents_joined_are_refused_pointing_to_json_lines(tmp_path: Path) -> None:
    one = write_export(tmp_path / "a.json", HEADER, [record("mem-1", "tea")]).read_text()
    path = tmp_path / "e.json"
    path.write_text(one + "\n" + one)
    with pytest.raises(InvalidInput, match="is not one JSON document") as caught:
        import_file(FakeService(tmp_path / "a"), path)
    assert "--format jsonl" in (caught.value.hint or "")


def test_a_pretty_printed_record_is_refused_pointing_to_one_record_per_line(tmp_path: Path) -> None:
    # `jq 'select(...)'` without -c prints a record over several lines
    path = tmp_path / "e.json"
    path.write_text(json.dumps(record("mem-1", "tea"), indent=2))
    with pytest.raises(InvalidInput, match="not an openclaw memory export") as caught:
        import_file(FakeService(tmp_path / "a"), path)
    assert "jq -c" in (caught.value.hint or "")


def test_migrate_converts_each_part_of_a_joined_stream_from_its_own_version(tmp_path: Path) -> None:
    old = {
        "id": "mem-old",
        "l0": "old shape",
        "createdAt": "2025-03-01T08:00:00.000Z",
        "vectorStatus": "ready",
    }
    path = _lines(
        tmp_path / "e.jsonl",
        HEADER,
        record("mem-new", "new shape"),
        _end(1),
        {**HEADER, "version": "0.9"},
        old,
        _end(1),
    )
    report = migrate_file(path)
    assert report.records == 2 and report.backup == tmp_path / "e.jsonl.bak"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line.get("id") for line in lines] == [None, "mem-new", "mem-old", None]
    assert lines[2]["content"] == {"l0": "old shape", "l1": None, "l2": None} and lines[-1] == _end(2)
    service = FakeService(tmp_path / "a")
    assert import_file(service, path).added == ["mem-new", "mem-old"]
