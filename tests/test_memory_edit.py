"""`memory edit` (memory/edit.py): a memory corrected in place, with a history row; every bad input refused
with nothing changed. The core function in-process on a real store; the command once as a process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_cli.core.errors import InvalidInput, NotFound
from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.edit import MemoryEdit, edit_memory
from openclaw_cli.memory.search.result import SearchRequest
from openclaw_cli.memory.service import MemoryService
from tests.conftest import run_cli
from tests.memory_helpers import service_for

LIMIT = 16000


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryService]:
    svc = service_for(tmp_path_factory.mktemp("edit") / "home")
    yield svc
    svc.close()


def _add(service: MemoryService, text: str, **fields: object) -> str:
    record, _ = service.add(NewMemory(l0=text, user_id="alice", **fields))  # type: ignore[arg-type]
    return record.id


def _ids(service: MemoryService, query: str, **fields: object) -> list[str]:
    result = service.search(SearchRequest(query=query, k=5, **fields))  # type: ignore[arg-type]
    return [hit.record.id for hit in result.hits]


def test_a_new_text_is_stored_searched_and_kept_in_history(service: MemoryService) -> None:
    record_id = _add(service, "Alice lives in Paris", category="profile", attribute="city")
    record, changed = edit_memory(
        service, MemoryEdit(record_id, text="Alice lives in Lyon", reason="moved"), LIMIT
    )
    assert changed and record.id == record_id and record.l0 == "Alice lives in Lyon"
    assert record.vector_status == "ready"
    assert record_id in _ids(service, "Lyon") and record_id not in _ids(service, "Paris")
    last = service.history(record_id)[-1]
    assert last["action"] == "update" and last["old"]["l0"] == "Alice lives in Paris"
    assert last["new"]["l0"] == "Alice lives in Lyon" and last["reason"] == "moved"


def test_category_and_attribute_change_and_the_filters_follow(service: MemoryService) -> None:
    record_id = _add(service, "Alice plays the cello on Sundays", category="note")
    record, changed = edit_memory(
        service, MemoryEdit(record_id, category="preference", attribute="music"), LIMIT
    )
    assert changed and (record.category, record.attribute) == ("preference", "music")
    assert record_id in _ids(service, "cello", categories=("preference",))
    assert record_id not in _ids(service, "cello", categories=("note",))
    record, _ = edit_memory(service, MemoryEdit(record_id, attribute=""), LIMIT)
    assert record.attribute is None


def test_the_same_values_change_nothing_and_write_no_history(service: MemoryService) -> None:
    record_id = _add(service, "Alice drinks green tea")
    before = len(service.history(record_id))
    record, changed = edit_memory(service, MemoryEdit(record_id, text="  Alice drinks green tea "), LIMIT)
    assert not changed and record.l0 == "Alice drinks green tea"
    assert len(service.history(record_id)) == before


@pytest.mark.parametrize(
    ("edit", "error", "says"),
    [
        (MemoryEdit("X"), InvalidInput, "nothing to change"),
        (MemoryEdit("X", text="   "), InvalidInput, "empty"),
        (MemoryEdit("X", text="a\x00b"), InvalidInput, "NUL"),
        (MemoryEdit("X", text="x" * (LIMIT + 1)), InvalidInput, "over the limit"),
        (MemoryEdit("X", category="gossip"), InvalidInput, "unknown category"),
        (MemoryEdit("X", attribute="a\x07b"), InvalidInput, "invalid attribute"),
        (MemoryEdit("mem-does-not-exist", text="x"), NotFound, "no memory"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(
    service: MemoryService, edit: MemoryEdit, error: type[Exception], says: str
) -> None:
    record_id = _add(service, "Alice keeps bees")
    target = (
        edit if edit.record_id != "X" else MemoryEdit(record_id, edit.text, edit.category, edit.attribute)
    )
    before = service.history(record_id)
    with pytest.raises(error, match=says):
        edit_memory(service, target, LIMIT)
    assert service.get(record_id).l0 == "Alice keeps bees" and service.history(record_id) == before


def test_a_workspace_note_is_edited_in_its_file(service: MemoryService) -> None:
    record_id = _add(
        service, "a line of MEMORY.md", category="note", source={"path": "MEMORY.md", "startLine": 3}
    )
    with pytest.raises(InvalidInput, match="edit that file"):
        edit_memory(service, MemoryEdit(record_id, text="changed"), LIMIT)


def test_the_command(tmp_path: Path) -> None:
    home = tmp_path / "home"
    added = run_cli(home, "memory", "add", "Bob likes jazz", "--user", "bob", "--json")
    record_id = added.json()["id"]
    done = run_cli(home, "memory", "edit", record_id, "--text", "Bob likes blues", "--json")
    assert done.returncode == 0 and done.json()["l0"] == "Bob likes blues" and done.json()["changed"] is True
    history = run_cli(home, "memory", "history", record_id).stdout
    assert "was: Bob likes jazz; edited by hand" in history
    bad = run_cli(home, "memory", "edit", record_id, "--category", "gossip")
    assert bad.returncode != 0 and "unknown category" in bad.stderr and len(bad.stderr.splitlines()) == 1
    missing = run_cli(home, "memory", "edit", "mem-nope", "--text", "x")
    assert missing.returncode != 0 and "no memory with id" in missing.stderr
