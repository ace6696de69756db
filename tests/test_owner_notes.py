"""The workspace Markdown is the owner's (issue 47): its indexed chunks are the owner's memories, found by the
owner and by nobody else; a store whose notes an older version indexed as every person's is fixed by the
first sync, in place; export leaves the notes out and import skips them; SHARED.md is the deliberate
exception. Every command runs as a real process on a real SQLite file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openclaw_cli.memory.store.sqlite.connection import open_db
from openclaw_cli.memory.store.sqlite.vec import all_tables

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

SECRET = "Owner's home alarm code is zqalarm4417"
LOG_LINE = "dentist appointment with Dr. Wu zqdentist on Elm Street"
QUERY = "what is the home alarm code and when is the dentist"


def _db(home: Path) -> Path:
    return home / "agents" / "main" / "memory" / "memory.sqlite"


def _note_rows(home: Path) -> list[tuple[int, str, str, str | None]]:
    conn = open_db(_db(home))
    try:
        return [
            (int(rowid), str(record_id), str(scope), user)
            for rowid, record_id, scope, user in conn.execute(
                "SELECT rowid, id, scope, user_id FROM records WHERE category = 'note' "
                "AND json_extract(source, '$.path') IS NOT NULL ORDER BY rowid"
            )
        ]
    finally:
        conn.close()


def _as_an_older_version_indexed_them(home: Path) -> None:
    """The rows an older version wrote for the same files: agent scope, no person, in the records and in
    every vector table (the schema is unchanged; only whose the rows are differs)."""
    conn = open_db(_db(home))
    try:
        with conn:
            where = "category = 'note' AND json_extract(source, '$.path') IS NOT NULL"
            rows = [int(r) for (r,) in conn.execute(f"SELECT rowid FROM records WHERE {where}")]
            conn.execute(f"UPDATE records SET scope = 'agent', user_id = NULL WHERE {where}")
            for table in all_tables(conn):
                for rowid in rows:
                    conn.execute(
                        f"UPDATE {table} SET scope = 'agent', user_id = '' WHERE rowid = ?", (rowid,)
                    )
    finally:
        conn.close()


def _inject(cli: Any, user: str | None, query: str = QUERY) -> str:
    args = ["memory", "inject", "--query", query, "--json", *(["--user", user] if user else [])]
    done = cli(*args)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["text"])


def _notes_written(cli: Any) -> None:
    for args in (["memory", "note", "--durable", SECRET], ["memory", "note", LOG_LINE]):
        done = cli(*args)
        assert done.returncode == 0, done.stderr
    done = cli("memory", "index")
    assert done.returncode == 0, done.stderr


def test_the_owner_finds_the_notes_and_other_people_do_not(cli: Any) -> None:
    _notes_written(cli)
    owner = _inject(cli, None)
    assert "zqalarm4417" in owner and "zqdentist" in owner
    for person in ("telegram:99", "carol", "openai:default"):
        text = _inject(cli, person)
        assert "zqalarm" not in text and "zqdentist" not in text, (person, text)
    for person in ("carol", "telegram:99"):
        done = cli("memory", "search", QUERY, "--user", person, "--all", "--json")
        assert done.returncode == 0, done.stderr
        assert "zqalarm" not in done.stdout and "zqdentist" not in done.stdout
    done = cli("memory", "search", QUERY, "--user", "default", "--all", "--json")
    assert "zqalarm4417" in done.stdout


def test_a_store_with_notes_under_agent_scope_is_fixed_by_the_first_sync_in_place(
    cli: Any, home: Path
) -> None:
    _notes_written(cli)
    before = _note_rows(home)
    assert before and all((scope, user) == ("user", "default") for _, _, scope, user in before)
    _as_an_older_version_indexed_them(home)
    assert all((scope, user) == ("agent", None) for _, _, scope, user in _note_rows(home))

    doctor = cli("doctor", "--json")
    found = [f for f in json.loads(doctor.stdout)["findings"] if f["check"] == "memory.notes"]
    assert len(found) == 1 and found[0]["severity"] == "error", found
    assert f"{len(before)} workspace notes" in found[0]["message"]
    assert doctor.returncode != 0

    # The first reader to search syncs: another person's injection already finds none of the notes.
    text = _inject(cli, "carol")
    assert "zqalarm" not in text and "zqdentist" not in text, text
    after = _note_rows(home)
    # The same rows and ids (nothing re-chunked, so nothing re-embedded), now the owner's.
    assert [(rowid, record_id) for rowid, record_id, _, _ in after] == [(r, i) for r, i, _, _ in before]
    assert all((scope, user) == ("user", "default") for _, _, scope, user in after)
    assert "zqalarm4417" in _inject(cli, None)
    doctor = cli("doctor", "--json")
    assert not [f for f in json.loads(doctor.stdout)["findings"] if f["check"] == "memory.notes"]


def test_doctor_fix_gives_stray_notes_to_the_owner(cli: Any, home: Path) -> None:
    _notes_written(cli)
    _as_an_older_version_indexed_them(home)
    done = cli("doctor", "--fix", "--json")
    [found] = [f for f in json.loads(done.stdout)["findings"] if f["check"] == "memory.notes"]
    assert found["fixed"] is True and "'default''s alone" in found["message"]
    assert all((scope, user) == ("user", "default") for _, _, scope, user in _note_rows(home))


def test_notes_move_to_a_newly_configured_owner(cli: Any, home: Path) -> None:
    _notes_written(cli)
    done = cli("config", "set", "owner", "olga")
    assert done.returncode == 0, done.stderr
    assert "zqalarm4417" in _inject(cli, None)  # the CLI's own person is the new owner
    done = cli("memory", "search", "home alarm code", "--user", "default", "--all", "--json")
    assert "zqalarm" not in done.stdout  # no longer the owner's: "default" is somebody else now
    assert {user for _, _, _, user in _note_rows(home)} == {"olga"}


def test_shared_md_is_the_deliberate_way_to_share_notes_with_everyone(cli: Any, home: Path) -> None:
    root = home / "agents" / "main" / "workspace"
    _notes_written(cli)
    (root / "SHARED.md").write_text("- The guest wifi network is called zqguestnet\n", encoding="utf-8")
    for person in ("carol", "telegram:99", None):
        text = _inject(cli, person, "what is the guest wifi network called")
        assert "zqguestnet" in text, (person, text)
        assert "zqalarm" not in _inject(cli, person) or person is None


def test_export_leaves_the_notes_out_and_a_round_trip_keeps_them_in_the_files(
    cli: Any, home: Path, tmp_path: Path
) -> None:
    _notes_written(cli)
    assert cli("memory", "add", "prefers window seats zqseat", "-c", "preference").returncode == 0
    exported = tmp_path / "export.jsonl"
    done = cli("memory", "export", "--format", "jsonl", "-o", str(exported))
    assert done.returncode == 0, done.stderr
    text = exported.read_text(encoding="utf-8")
    assert "zqseat" in text and "zqalarm" not in text and "zqdentist" not in text

    # An older version's export held the notes as agent-scope records: import skips them and says why.
    [header, *records, end] = text.splitlines()
    old_note = {
        **json.loads(records[0]),
        "id": "mem-old-note-1",
        "scope": "agent",
        "userId": None,
        "category": "note",
        "content": {"l0": SECRET, "l1": None, "l2": None},
        "source": {"path": "MEMORY.md", "startLine": 1, "endLine": 1, "fileHash": "0" * 64},
    }
    trailer = {**json.loads(end), "records": len(records) + 1}
    old_export = tmp_path / "old.jsonl"
    lines = [header, *records, json.dumps(old_note), json.dumps(trailer)]
    old_export.write_text("\n".join(lines) + "\n", encoding="utf-8")
    other = tmp_path / "other-home"
    from tests.conftest import run_cli

    done = run_cli(other, "memory", "import", str(old_export), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["skippedWorkspaceNotes"] == 1 and report["added"] == len(records)
    assert "workspace notes were not imported" in done.stderr
    found = run_cli(other, "memory", "search", "home alarm code", "--all", "--json")
    assert "zqalarm" not in found.stdout
    # The files are the truth: copied with the workspace, they are the new owner's notes again.
    (other / "agents" / "main" / "workspace").mkdir(parents=True)
    source = home / "agents" / "main" / "workspace" / "MEMORY.md"
    (other / "agents" / "main" / "workspace" / "MEMORY.md").write_bytes(source.read_bytes())
    found = run_cli(other, "memory", "search", "home alarm code", "--user", "default", "--json")
    assert "zqalarm4417" in found.stdout


def test_the_owner_saying_what_memory_md_says_is_stored_not_dropped_as_a_duplicate(
    cli: Any, home: Path
) -> None:
    root = home / "agents" / "main" / "workspace"
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text("User's dentist is Dr Wu zqwu\n", encoding="utf-8")
    assert cli("memory", "index").returncode == 0
    done = cli("memory", "add", "User's dentist is Dr Wu zqwu", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["id"] not in [record_id for _, record_id, _, _ in _note_rows(home)]


def test_reassign_leaves_the_owners_notes_with_the_owner(cli: Any, home: Path) -> None:
    _notes_written(cli)
    assert cli("memory", "add", "likes kayaking zqkayak").returncode == 0
    done = cli("memory", "reassign", "--from", "default", "--to", "alice", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    assert {user for _, _, _, user in _note_rows(home)} == {"default"}
    assert "zqkayak" in _inject(cli, "alice", "kayaking")
