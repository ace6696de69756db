"""`memory add` and `memory history` as a user runs them: duplicates are reported, not stored twice."""

from __future__ import annotations

import json

from tests.conftest import Result

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True


def _ids(cli) -> list[str]:  # type: ignore[no-untyped-def]
    return [r["id"] for r in cli("memory", "list", "--json").json()]


def test_add_same_chinese_text_with_a_full_stop_is_a_duplicate(cli) -> None:  # type: ignore[no-untyped-def]
    first = cli("memory", "add", "我喜欢咖啡", "-c", "preference", "--json")
    assert first.returncode == 0, first.stderr
    assert first.json()["action"] == "added"
    again = cli("memory", "add", "我喜欢咖啡。", "-c", "preference", "--json")
    assert again.returncode == 0, again.stderr
    assert again.json()["action"] == "duplicate" and again.json()["id"] == first.json()["id"]
    plain = cli("memory", "add", "我喜欢咖啡！", "-c", "preference")
    assert plain.returncode == 0
    assert plain.stdout.startswith("duplicate: ") and first.json()["id"] in plain.stdout
    assert _ids(cli) == [first.json()["id"]]
    hits = cli("memory", "search", "咖啡", "--json").json()["results"]
    assert [h["id"] for h in hits] == [first.json()["id"]]
    assert cli("memory", "get", first.json()["id"], "--json").json()["fsrs"]["reps"] == 2


def test_add_batch_rerun_without_ids_is_a_noop(cli) -> None:  # type: ignore[no-untyped-def]
    lines = "\n".join(
        json.dumps({"text": text, "userId": "u1"})
        for text in ["likes hiking", "Likes hiking!", "owns a red bike", "我喜欢咖啡", "我喜欢咖啡。"]
    )
    first = cli("memory", "add", "--batch", "-", "--json", input=lines)
    assert first.returncode == 0, first.stderr
    body = first.json()
    assert (body["added"], body["duplicate"], body["skipped"]) == (3, 2, 0)
    assert [d["line"] for d in body["duplicates"]] == [2, 5]
    again = cli("memory", "add", "--batch", "-", input=lines)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("added 0, 5 duplicates of stored memories, skipped 0 existing")
    assert len(cli("memory", "list", "--user", "u1", "--json").json()) == 3


def test_add_existing_id_is_a_conflict(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("memory", "add", "likes hiking", "--id", "m-1").returncode == 0
    clash: Result = cli("memory", "add", "owns a red bike", "--id", "m-1")
    assert clash.returncode == 1
    assert "a memory with id 'm-1' already exists (choose another --id)" in clash.stderr


def test_history_after_index_clears_the_tombstone(cli) -> None:  # type: ignore[no-untyped-def]
    rid = cli("memory", "add", "likes hiking", "--json").json()["id"]
    assert cli("memory", "delete", rid).returncode == 0
    assert cli("memory", "index").returncode == 0
    assert cli("memory", "get", rid).returncode == 1
    history = cli("memory", "history", rid, "--json")
    assert history.returncode == 0, history.stderr
    assert [h["action"] for h in history.json()] == ["add", "delete"]
    assert history.json()[1]["old"]["l0"] == "likes hiking"
    shown = cli("memory", "history", rid)
    assert "delete" in shown.stdout and "likes hiking" in shown.stdout


def test_history_shows_what_an_update_replaced(cli, home) -> None:  # type: ignore[no-untyped-def]
    from openclaw_cli.memory.writing.candidate import Candidate
    from openclaw_cli.memory.writing.write_path import write_memories
    from tests.memory_helpers import service_for

    service = service_for(home)
    [first] = write_memories(service, [Candidate("Lives in Berlin", "profile", attribute="city")])
    write_memories(service, [Candidate("Moved to Munich", "profile", attribute="city")])
    service.close()
    shown = cli("memory", "history", first.record_id)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert [line.split()[1] for line in lines] == ["add", "update"]
    assert "Lives in Berlin" in lines[0]
    assert "Moved to Munich" in lines[1] and "(was: Lives in Berlin; profile 'city'" in lines[1]
