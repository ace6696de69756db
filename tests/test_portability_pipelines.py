"""`openclaw memory export | FILTER | openclaw memory import -` as real shell pipelines (bash -c).

The exporting homes are filled in-process (export needs no model); each import is the real CLI with the
real local embedding model, into a fresh home, and the test reads back which records landed. jq is the
system's (/usr/bin/jq).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.portability_helpers import HEADER, FakeService, import_file, record, run_shell

# Export order: the user store's records in insertion order, then the agent store's.
SOURCE = [
    record("mem-tea", "drinks green tea every morning", category="preference", userId="lin"),
    record("mem-espresso", "orders a double espresso after lunch", category="preference", userId="lin"),
    record("mem-dark", "prefers dark mode in every editor", category="preference"),
    record("mem-berlin", "moved to Berlin in 2024", category="event", userId="lin"),
    record("mem-cat", "has a cat called Miso", userId="lin"),
    record("mem-staging", "deploys go through the staging cluster first", category="lesson", scope="agent"),
]
OTHER = [
    record("mem-bike", "cycles to work when it is dry"),
    record("mem-piano", "practises piano on Sundays"),
]
ALL_IDS = [r["id"] for r in SOURCE]


def _filled(path: Path, records: list[dict[str, object]], tmp: Path) -> Path:
    source = tmp / f"{path.name}.jsonl"
    source.write_text(
        "\n".join(json.dumps(v) for v in [HEADER, *records, {"end": True, "records": len(records)}]) + "\n"
    )
    assert len(import_file(FakeService(path), source).added) == len(records)
    return path


@pytest.fixture(scope="module")
def homes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two exporting homes, shared by the module's tests (they only read them)."""
    root = tmp_path_factory.mktemp("pipelines")
    return {"a": _filled(root / "a", SOURCE, root), "c": _filled(root / "c", OTHER, root)}


def _landed(home: Path) -> dict[str, str]:
    """id -> l0 of what the import stored."""
    return {r.id: r.l0 for r in FakeService(home).list_records()}


def _texts(ids: list[str]) -> dict[str, str]:
    by_id = {r["id"]: r["content"]["l0"] for r in SOURCE + OTHER}  # type: ignore[index]
    return {i: by_id[i] for i in ids}


def test_grep_v_imports_the_records_that_pass_and_warns_about_the_count(homes, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "b"
    result = run_shell(
        f"oc --home {homes['a']} memory export --format jsonl | grep -v espresso | oc memory import -",
        target,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("imported 5 of 5 memories;") and "0 invalid" in result.stdout
    assert result.stderr == (
        "openclaw: warning: line 7: the end line counts 6 records, 5 were read (a filtered stream?)\n"
    )
    assert _landed(target) == _texts([i for i in ALL_IDS if i != "mem-espresso"])


def test_grep_v_with_skip_invalid_counts_only_the_records_sent(homes, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # A dry run counts as the import would (and loads no model).
    target = tmp_path / "b"
    result = run_shell(
        f"oc --home {homes['a']} memory export --format jsonl | grep -v espresso "
        "| oc memory import - --skip-invalid --dry-run --json",
        target,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    report = result.json()
    assert (report["records"], report["added"], report["skippedInvalid"]) == (5, 5, 0)
    assert report["warnings"] == ["line 7: the end line counts 6 records, 5 were read (a filtered stream?)"]
    assert sorted(report["addedIds"]) == sorted(i for i in ALL_IDS if i != "mem-espresso")
    assert _landed(target) == {}


def test_head_n_cuts_the_stream_and_the_records_read_are_imported(homes, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "b"
    result = run_shell(
        f"oc --home {homes['a']} memory export --format jsonl | head -n 3 | oc memory import - --json",
        target,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.json()["warnings"] == [
        "no end line: the stream may have been cut short; 2 records were read"
    ]
    assert (
        result.stderr
        == "openclaw: warning: no end line: the stream may have been cut short; 2 records were read\n"
    )
    assert _landed(target) == _texts(["mem-tea", "mem-espresso"])


def test_jq_select_emits_records_only_and_they_are_imported(homes, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "b"
    result = run_shell(
        f"oc --home {homes['a']} memory export --format jsonl "
        "| jq -c 'select(.category == \"preference\")' | oc memory import - --json",
        target,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.json()["warnings"] == [
        "no header line: read as export version 1.0, the current one",
        "no end line: the stream may have been cut short; 3 records were read",
    ]
    assert _landed(target) == _texts(["mem-tea", "mem-espresso", "mem-dark"])


def test_cat_of_two_exports_imports_every_record_of_both(homes, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "b"
    result = run_shell(
        f"oc --home {homes['a']} memory export --format jsonl -o a.jsonl >/dev/null "
        f"&& oc --home {homes['c']} memory export --format jsonl -o c.jsonl >/dev/null "
        "&& cat a.jsonl c.jsonl | oc memory import - --json",
        target,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.json()["warnings"] == [] and result.json()["records"] == 8
    assert _landed(target) == _texts(ALL_IDS + ["mem-bike", "mem-piano"])


def test_grep_v_of_the_header_imports_as_the_current_version(homes, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "b"
    result = run_shell(
        f"oc --home {homes['a']} memory export --format jsonl | grep -v exportedAt | oc memory import - --json",
        target,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.json()["warnings"] == ["no header line: read as export version 1.0, the current one"]
    assert _landed(target) == _texts(ALL_IDS)


def test_an_invalid_record_in_a_filtered_stream_is_still_refused_by_index(homes, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "b"
    result = run_shell(
        f"oc --home {homes['a']} memory export --format jsonl | grep -v espresso "
        '| sed \'s/"category":"lesson"/"category":"gossip"/\' | oc memory import -',
        target,
        tmp_path,
    )
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "openclaw: warning: line 7: the end line counts 6 records, 5 were read (a filtered stream?)",
        "openclaw: warning: records[4] (line 6): unknown category 'gossip'",
        "openclaw: error: 1 of 5 records cannot be imported; nothing was imported "
        "(fix them, or add --skip-invalid to import the others)",
    ]
    assert _landed(target) == {}


def test_text_that_is_not_an_export_on_stdin_is_a_one_line_error(tmp_path: Path) -> None:
    result = run_shell("printf 'hello\\nworld\\n' | oc memory import -", tmp_path / "b", tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("openclaw: error: standard input is not valid JSON")
    assert result.stderr.count("\n") == 1


def test_an_empty_stdin_is_a_one_line_error(tmp_path: Path) -> None:
    result = run_shell("grep -v . /dev/null | oc memory import -", tmp_path / "b", tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("openclaw: error: standard input is empty")
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize("kind", ["jsonl", "json"])
def test_export_into_a_reader_that_stops_early_exits_quietly(kind: str, tmp_path: Path) -> None:
    # ~300 KB of export: more than a pipe holds, so the export is still writing when head exits
    big = [record(f"mem-{i}", "", content={"l0": f"note number {i}", "l2": "x" * 10_000}) for i in range(30)]
    source = _filled(tmp_path / "a", big, tmp_path)
    result = run_shell(
        f'oc memory export --format {kind} | head -n 2; echo "status=${{PIPESTATUS[0]}}"', source, tmp_path
    )
    lines = result.stdout.splitlines()
    assert len(lines) == 3 and lines[0].startswith('{"version":"1.0"') and '"mem-0"' in lines[1]
    assert lines[2] == "status=1"  # click's quiet exit on EPIPE: no traceback, no message
    assert result.stderr == ""
