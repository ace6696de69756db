"""Where `memory export -o`, `memory migrate FILE` and `session export -o` may write: every bad place is a
one-line error and nothing is written. Real processes in a scratch working directory (an empty home:
exporting it needs no model)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from tests.conftest import Result
from tests.portability_helpers import HEADER, record, run_shell, write_export


def _one_error(result: Result, code: int, start: str) -> None:
    assert result.returncode == code, result.stderr
    assert result.stderr.startswith(f"openclaw: error: {start}"), result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def _files(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


def test_export_to_a_directory_is_a_usage_error_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "exports").mkdir()
    result = run_shell("oc memory export -o exports", tmp_path / "home", tmp_path)
    _one_error(
        result, 2, "--output exports is a directory (give a file name in it, e.g. exports/memories.json)"
    )
    assert _files(tmp_path) == ["exports"]


def test_export_to_an_empty_name_is_a_usage_error_and_writes_nothing(tmp_path: Path) -> None:
    result = run_shell('oc memory export -o ""', tmp_path / "home", tmp_path)
    _one_error(result, 2, "--output is empty (give a file name, or '-' for standard output)")
    assert _files(tmp_path) == []


def test_export_to_a_name_ending_in_a_slash_is_a_usage_error(tmp_path: Path) -> None:
    result = run_shell("oc memory export --format jsonl -o new/", tmp_path / "home", tmp_path)
    _one_error(
        result,
        2,
        "--output new/ ends with '/': it names a directory (give a file name in it, e.g. new/memories.jsonl)",
    )
    assert _files(tmp_path) == []


def test_export_into_missing_directories_creates_them_private(tmp_path: Path) -> None:
    result = run_shell("oc memory export -o a/b/memories.json", tmp_path / "home", tmp_path)
    assert result.returncode == 0 and result.stdout == "exported 0 memories to a/b/memories.json\n"
    assert [stat.S_IMODE(os.stat(tmp_path / d).st_mode) for d in ("a", "a/b")] == [0o700, 0o700]
    assert json.loads((tmp_path / "a/b/memories.json").read_text())["records"] == []


def test_export_into_a_directory_that_cannot_be_created_is_one_line(tmp_path: Path) -> None:
    result = run_shell("oc memory export -o /proc/openclaw-nope/memories.json", tmp_path / "home", tmp_path)
    _one_error(result, 1, "cannot create the directory /proc/openclaw-nope")
    assert not (tmp_path / "home").exists()


def test_export_under_a_file_as_if_it_were_a_directory_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    result = run_shell("oc memory export -o notes.txt/memories.json", tmp_path / "home", tmp_path)
    _one_error(result, 1, "cannot write notes.txt/memories.json: notes.txt is not a directory")
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_export_into_a_directory_that_refuses_new_files_is_one_line(tmp_path: Path) -> None:
    # /proc refuses a new file to every user, root included (a chmod 0500 directory does not stop root)
    result = run_shell("oc memory export -o /proc/memories.json", tmp_path / "home", tmp_path)
    _one_error(result, 1, "cannot write /proc/memories.json (")
    assert "choose another file, or '-' for standard output" in result.stderr


def test_export_to_a_full_device_is_one_line(tmp_path: Path) -> None:
    # /dev/fd/3 is opened on /dev/full: a device is written to as it is, and the disk-full error is named
    result = run_shell("oc memory export -o /dev/fd/3 3>/dev/full", tmp_path / "home", tmp_path)
    _one_error(result, 1, "cannot write /dev/fd/3 (No space left on device)")


def test_export_to_a_pipe_given_by_name_streams_into_it(tmp_path: Path) -> None:
    # /dev/fd/1 is the pipe to this test: replacing it with a file would lose the export
    result = run_shell("oc memory export --format jsonl -o /dev/fd/1", tmp_path / "home", tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert json.loads(lines[0])["version"] == "1.0" and json.loads(lines[1]) == {"end": True, "records": 0}
    assert lines[2] == "exported 0 memories to /dev/fd/1"


def test_export_through_a_symlink_replaces_the_file_and_keeps_the_link(tmp_path: Path) -> None:
    (tmp_path / "real.json").write_text("old")
    (tmp_path / "link.json").symlink_to("real.json")
    result = run_shell("oc memory export -o link.json", tmp_path / "home", tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "link.json").is_symlink()
    assert json.loads((tmp_path / "real.json").read_text())["records"] == []
    assert _files(tmp_path) == ["link.json", "real.json"]


def test_migrate_of_an_empty_name_is_a_usage_error(tmp_path: Path) -> None:
    result = run_shell('oc memory migrate ""', tmp_path / "home", tmp_path)
    _one_error(result, 2, "FILE is empty")


def test_migrate_of_a_directory_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "exports").mkdir()
    result = run_shell("oc memory migrate exports", tmp_path / "home", tmp_path)
    _one_error(result, 1, "exports is a directory")


def test_migrate_that_cannot_write_its_new_file_changes_nothing(tmp_path: Path) -> None:
    old = {"id": "mem-1", "l0": "old shape", "createdAt": "2025-03-01T08:00:00.000Z"}
    path = write_export(tmp_path / "old.json", {**HEADER, "version": "0.9"}, [old])
    before = path.read_bytes()
    (
        tmp_path / ".old.json.migrating"
    ).mkdir()  # where the new version is staged: it cannot replace a directory
    result = run_shell("oc memory migrate old.json", tmp_path / "home", tmp_path)
    _one_error(result, 1, "cannot write .old.json.migrating (Is a directory) (the file was not changed")
    assert path.read_bytes() == before and _files(tmp_path) == [".old.json.migrating", "old.json"]


def test_migrate_still_works_beside_the_new_checks(tmp_path: Path) -> None:
    write_export(tmp_path / "cur.json", HEADER, [record("mem-1", "x")])
    result = run_shell("oc memory migrate cur.json", tmp_path / "home", tmp_path)
    assert result.returncode == 0 and result.stdout == "cur.json is already version 1.0; nothing to do\n"


def test_session_export_to_a_directory_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "chats").mkdir()
    result = run_shell("oc session export agent:main:main -o chats", tmp_path / "home", tmp_path)
    _one_error(result, 2, "--output chats is a directory (give a file name in it, e.g. chats/chat.jsonl)")
    assert _files(tmp_path) == ["chats"]


def test_session_export_to_an_empty_name_is_a_usage_error(tmp_path: Path) -> None:
    result = run_shell('oc session export agent:main:main -o ""', tmp_path / "home", tmp_path)
    _one_error(result, 2, "--output is empty")
    assert _files(tmp_path) == []
