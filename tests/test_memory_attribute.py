"""Profile attributes on every write path (seed 000 §3.1): a new value of the same person's attribute
replaces the old one, with a history row: `memory add --attribute`, `attribute` in `--batch` lines, and
the agent's `memory_add` tool. A bad attribute name is one line and stores nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.agent.tools.builtin import run_tool
from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.store.records import validate_attribute
from tests.conftest import Result
from tests.memory_helpers import service_for

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True


def _records(cli: Any) -> list[dict[str, Any]]:
    listed = cli("memory", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    body = listed.json()
    return body["records"] if isinstance(body, dict) else body


def test_memory_add_attribute_replaces_the_old_value_with_history(cli: Any) -> None:
    first = cli("memory", "add", "Works as a nurse at St Mary", "-c", "profile", "--attribute", "job", "--json")
    assert first.returncode == 0, first.stderr
    record_id = first.json()["id"]
    second = cli("memory", "add", "Teaches maths at the high school", "-c", "profile", "-a", "job")
    assert second.returncode == 0, second.stderr
    assert second.stdout.startswith(f"updated {record_id}")
    history = cli("memory", "history", record_id, "--json")
    assert history.returncode == 0, history.stderr
    rows = history.json()
    rows = rows["history"] if isinstance(rows, dict) else rows
    assert [row["action"] for row in rows] == ["add", "update"]
    assert rows[1]["old"]["l0"] == "Works as a nurse at St Mary"
    [record] = _records(cli)
    assert (record["id"], record["l0"], record["attribute"]) == (record_id, "Teaches maths at the high school", "job")


def test_batch_lines_with_an_attribute_replace_and_other_people_keep_theirs(cli: Any, tmp_path: Path) -> None:
    lines = [
        {"text": "Lives in Berlin", "category": "profile", "attribute": "city", "userId": "ana"},
        {"text": "Lives in Berlin", "category": "profile", "attribute": "city", "userId": "ben"},
        {"text": "Likes long walks", "category": "preference", "userId": "ana"},
        {"text": "Moved to Munich in May", "category": "profile", "attribute": "city", "userId": "ana"},
    ]
    added = cli("memory", "add", "--batch", "-", "--json", input="".join(json.dumps(x) + "\n" for x in lines))
    assert added.returncode == 0, added.stderr
    body = added.json()
    assert (body["added"], body["replaced"], body["duplicate"]) == (3, 1, 0)
    [replacement] = body["replacements"]
    assert (replacement["line"], replacement["old"]) == (4, "Lives in Berlin")
    cities = {(r["userId"], r["l0"]) for r in _records(cli) if r.get("attribute") == "city"}
    assert cities == {("ana", "Moved to Munich in May"), ("ben", "Lives in Berlin")}
    again = cli("memory", "add", "--batch", "-", "--json", input=json.dumps(lines[3]) + "\n")
    assert again.returncode == 0, again.stderr
    assert (again.json()["added"], again.json()["replaced"], again.json()["duplicate"]) == (0, 0, 1)


def test_a_batch_line_with_a_control_character_in_its_attribute_stores_nothing(cli: Any) -> None:
    lines = [
        {"text": "Likes green tea", "category": "preference"},
        {"text": "Works as a nurse", "category": "profile", "attribute": "jo\u0007b"},
    ]
    result: Result = cli("memory", "add", "--batch", "-", input="".join(json.dumps(x) + "\n" for x in lines))
    assert result.returncode != 0
    message = result.stderr.strip().splitlines()
    assert "line 2" in message[0] and "invalid attribute" in message[0]
    assert "Traceback" not in result.stderr
    assert _records(cli) == []


def test_memory_add_refuses_an_attribute_with_a_control_character(cli: Any) -> None:
    result = cli("memory", "add", "Works as a nurse", "-c", "profile", "--attribute", "job\x1b[31m")
    assert result.returncode != 0
    assert "invalid attribute" in result.stderr and "Traceback" not in result.stderr
    assert _records(cli) == []


def test_memory_add_refuses_an_attribute_on_a_category_that_never_replaces(cli: Any) -> None:
    result = cli("memory", "add", "Drinks tea", "-c", "preference", "--attribute", "drink")
    assert result.returncode == 2
    assert "--attribute" in result.stderr and "-c profile" in result.stderr


@pytest.mark.parametrize("bad", ["a" * 65, "tab\there", "zero\u200bwidth", "bell\u0007"])
def test_bad_attribute_names_are_refused(bad: str) -> None:
    with pytest.raises(InvalidInput):
        validate_attribute(bad)


def test_attribute_names_are_trimmed_and_blank_is_none() -> None:
    assert validate_attribute("  job ") == "job"
    assert validate_attribute("   ") is None
    assert validate_attribute("工作") == "工作"


def test_the_memory_add_tool_replaces_a_profile_value_by_attribute(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    try:
        first = run_tool(
            "memory_add",
            json.dumps({"text": "Works as a nurse", "category": "profile", "attribute": "job"}),
            service,
            "ana",
        )
        assert first["action"] == "added", first
        second = run_tool(
            "memory_add",
            json.dumps({"text": "Teaches maths now", "category": "profile", "attribute": "job"}),
            service,
            "ana",
        )
        assert (second["action"], second["id"]) == ("merged", first["id"]), second
        assert service.get(first["id"]).l0 == "Teaches maths now"
        assert service.history(first["id"])[-1]["old"]["l0"] == "Works as a nurse"
        bad = run_tool(
            "memory_add",
            json.dumps({"text": "Plays chess", "category": "profile", "attribute": "x\u0000y"}),
            service,
            "ana",
        )
        assert "error" in bad
        assert [r.l0 for r in service.list_records()] == ["Teaches maths now"]
        with pytest.raises(InvalidInput):
            service.build_record(NewMemory("Plays chess", "profile", attribute="a\nb"))
    finally:
        service.close()
