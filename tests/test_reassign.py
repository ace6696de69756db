"""`openclaw memory reassign`: memories written under `default` (or any person) given to their person, with
a history row each, through the real CLI over real SQLite files (issue 20)."""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.core.errors import InvalidInput, UsageError
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.store.sqlite.connection import open_db
from openclaw_cli.memory.store.sqlite.vec import current_table
from openclaw_cli.memory.writing.reassign import ReassignRequest, reassign
from tests.conftest import ROOT, Result, base_env, run_cli

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

TELEGRAM = "agent:main:telegram:default:direct:123"
WHERE_FIELDS = "the fields are session, category, since, id"


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home where two conversations wrote under `default` (one each in agent:main:main and a Telegram
    DM, that one as the gateway did before it resolved persons: `--user default` stands for it),
    `memory add` wrote a preference under `default` and one memory of `bob`."""
    home = tmp_path_factory.mktemp("seed") / "home"
    # A DM's speaker is its peer (issue 47), so `--user default` no longer speaks in the Telegram DM: the
    # old state is made by linking the DM's address to `default` while it is written, then unlinking it.
    home.mkdir(parents=True, mode=0o700)
    config = home / "openclaw.json"
    config.write_text(json.dumps({"session": {"identityLinks": {"default": ["telegram:123"]}}}))
    for key, line in (
        ("agent:main:main", "remember that my favourite tea is sencha"),
        (TELEGRAM, "remember that my neighbour Gao Feng keeps bees on the roof"),
    ):
        result = run_cli(home, "chat", "--local", "--session", key, input=line + "\n")
        assert result.returncode == 0 and "Saved to memory: " in result.stdout, result.stderr
    config.unlink()
    for args in (
        ("prefers dark mode in every editor", "-c", "preference"),
        ("bob likes espresso", "-u", "bob"),
    ):
        assert run_cli(home, "memory", "add", *args).returncode == 0
    return home


@pytest.fixture
def home(seeded: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "home"
    shutil.copytree(seeded, copy)
    return copy


def cli(home: Path, *args: str, **kwargs: Any) -> Result:
    return run_cli(home, *args, **kwargs)


def records(home: Path, agent: str = "main") -> dict[str, tuple[str, str]]:
    """l0 -> (user_id, id) of the live records, read from the database file itself."""
    with sqlite3.connect(home / "agents" / agent / "memory" / "memory.sqlite") as conn:
        rows = conn.execute("SELECT l0, user_id, id FROM records WHERE deleted = 0").fetchall()
    return {str(l0): (str(user), str(rid)) for l0, user, rid in rows}


def history_rows(home: Path, agent: str = "main") -> list[tuple[Any, ...]]:
    with sqlite3.connect(home / "agents" / agent / "memory" / "memory.sqlite") as conn:
        return conn.execute("SELECT record_id, user_id, action FROM history ORDER BY seq").fetchall()


def session_id(home: Path, key: str) -> str:
    listed = cli(home, "session", "list", "--json").json()
    return next(row["sessionId"] for row in listed if row["sessionKey"] == key)


def owner(home: Path, fragment: str) -> str:
    return next(user for l0, (user, _) in records(home).items() if fragment in l0)


# --- moving ------------------------------------------------------------------------------------------


def test_one_conversation_moves_to_its_person_and_search_and_history_follow(home: Path) -> None:
    moved = cli(home, "memory", "reassign", "--from", "default", "--to", "telegram:123", "--where",
                f"session={TELEGRAM}", "--yes", "--json")  # fmt: skip
    assert moved.returncode == 0, moved.stderr
    report = moved.json()
    assert (report["from"], report["to"], report["moved"], report["dryRun"]) == (
        "default",
        "telegram:123",
        1,
        False,
    )
    [database] = report["databases"]
    [memory] = database["memories"]
    assert "Gao Feng" in memory["l0"] and database["agent"] == "main"
    assert owner(home, "Gao Feng") == "telegram:123"
    assert owner(home, "sencha") == "default" and owner(home, "dark mode") == "default"  # nothing else moved

    found = cli(home, "memory", "search", "who keeps bees on the roof", "--user", "telegram:123", "--json")
    assert memory["id"] in [hit["id"] for hit in found.json()["results"]]
    gone = cli(home, "memory", "search", "who keeps bees on the roof", "--user", "default", "--json")
    assert memory["id"] not in [hit["id"] for hit in gone.json()["results"]]

    history = cli(home, "memory", "history", memory["id"], "--json").json()
    assert [h["action"] for h in history] == ["add", "reassign"]
    assert (history[1]["old"]["userId"], history[1]["new"]["userId"]) == ("default", "telegram:123")
    assert history[1]["reason"] == f"reassigned from default to telegram:123 (where session={TELEGRAM})"
    shown = cli(home, "memory", "history", memory["id"]).stdout
    assert "reassign" in shown and "(person: default -> telegram:123)" in shown


def _side_tables(home: Path, rid: str) -> tuple[str, set[tuple[str, str, str]]]:
    """The person on the memory's vector (vec0 metadata) and the `people` rows naming Gao Feng."""
    conn = open_db(home / "agents" / "main" / "memory" / "memory.sqlite", create=False)  # with sqlite-vec
    try:
        table = current_table(conn)
        [(rowid,)] = conn.execute("SELECT rowid FROM records WHERE id = ?", (rid,)).fetchall()
        [(person,)] = conn.execute(f"SELECT user_id FROM {table} WHERE rowid = ?", (rowid,)).fetchall()
        rows = conn.execute("SELECT user_id, kind, name FROM people WHERE name LIKE 'Gao%'").fetchall()
    finally:
        conn.close()
    return str(person), {(str(user), str(kind), str(name)) for user, kind, name in rows}


def test_the_side_tables_follow_the_moved_memories(home: Path) -> None:
    """The vector's person (vec0 metadata), the earlier history rows and the names the memory introduces."""
    rid = records(home)["User's neighbour Gao Feng keeps bees on the roof"][1]
    assert _side_tables(home, rid) == ("default", {("default", "cast", "Gao Feng")})
    assert cli(home, "memory", "reassign", "--from", "default", "--to", "lin", "--where", f"id={rid}",
               "--yes").returncode == 0  # fmt: skip
    assert _side_tables(home, rid) == ("lin", {("lin", "cast", "Gao Feng")})
    assert {(user, action) for record, user, action in history_rows(home) if record == rid} == {
        ("lin", "add"),
        ("lin", "reassign"),
    }


def test_a_purge_of_the_new_person_removes_the_moved_memories_and_their_history(home: Path) -> None:
    rid = records(home)["User's favourite tea is sencha"][1]
    assert (
        cli(
            home, "memory", "reassign", "--from", "default", "--to", "lin", "-w", f"id={rid}", "--yes"
        ).returncode
        == 0
    )
    purged = cli(home, "memory", "purge", "--user", "lin", "--yes")
    # The owner said it with "remember that", so today's log (the owner's notes, never rewritten by a
    # purge) holds it too: the purge names that file and says what to do, with exit 1.
    assert purged.returncode == 1 and "purged 1 memories of lin" in purged.stdout
    assert "workspace/memory/" in purged.stderr and "remove those lines yourself" in purged.stderr
    assert rid not in {record for record, _, _ in history_rows(home)}
    assert b"sencha" not in (home / "agents" / "main" / "memory" / "memory.sqlite").read_bytes()


def test_session_filter_takes_a_session_id(home: Path) -> None:
    sid = session_id(home, "agent:main:main")
    moved = cli(home, "memory", "reassign", "--from", "default", "--to", "alice", "--where", f"session={sid}",
                "--yes", "--json")  # fmt: skip
    assert moved.returncode == 0, moved.stderr
    assert [m["l0"] for m in moved.json()["databases"][0]["memories"]] == ["User's favourite tea is sencha"]
    assert owner(home, "sencha") == "alice" and owner(home, "Gao Feng") == "default"


def test_category_and_since_filters_must_all_match(home: Path) -> None:
    both = ("--where", "category=preference", "--where", "since=2000-01-01")
    moved = cli(home, "memory", "reassign", "--from", "default", "--to", "alice", *both, "--yes", "--json")
    assert moved.returncode == 0, moved.stderr
    # "my favourite tea is sencha" is a preference by its content (issue 48), like the added one.
    assert sorted(m["l0"] for m in moved.json()["databases"][0]["memories"]) == [
        "User's favourite tea is sencha",
        "prefers dark mode in every editor",
    ]
    future = cli(home, "memory", "reassign", "--from", "default", "--to", "alice", "-w", "since=2999-01-01",
                 "--yes", "--json")  # fmt: skip
    assert future.returncode == 0 and future.json()["moved"] == 0 and future.json()["databases"] == []
    assert owner(home, "bees") == "default"


def test_nothing_matching_moves_nothing_and_says_so(home: Path) -> None:
    before = history_rows(home)
    result = cli(
        home, "memory", "reassign", "--from", "default", "--to", "alice", "-w", "category=lesson", "--yes"
    )
    assert result.returncode == 0
    assert "no memories of default matching category=lesson: nothing to move" in result.stdout
    assert history_rows(home) == before


def test_dry_run_lists_and_changes_nothing(home: Path) -> None:
    db = home / "agents" / "main" / "memory" / "memory.sqlite"
    before = db.read_bytes()
    result = cli(home, "memory", "reassign", "--from", "default", "--to", "alice", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("would move 3 memories of default to alice:")
    assert "sencha" in result.stdout and "Gao Feng" in result.stdout and "dark mode" in result.stdout
    as_json = cli(
        home, "memory", "reassign", "--from", "default", "--to", "alice", "--dry-run", "--json"
    ).json()
    assert (as_json["dryRun"], as_json["matched"], as_json["moved"]) == (True, 3, 0)
    assert db.read_bytes() == before
    assert {user for user, _ in records(home).values()} == {"default", "bob"}


def test_every_agent_with_all_agents_and_the_others_named_without(home: Path) -> None:
    assert cli(home, "--agent", "work", "memory", "add", "standup at nine every weekday").returncode == 0
    alone = cli(home, "memory", "reassign", "--from", "default", "--to", "alice", "--yes", "--json")
    assert alone.returncode == 0, alone.stderr
    assert alone.json()["moved"] == 3 and alone.json()["notCovered"] == ["work"]
    assert records(home, "work")["standup at nine every weekday"][0] == "default"
    human = cli(home, "memory", "reassign", "--from", "alice", "--to", "lin", "--yes")
    assert "moved 3 memories of alice to lin (main 3)" in human.stdout
    every = cli(
        home, "memory", "reassign", "--from", "default", "--to", "alice", "--all-agents", "--yes", "--json"
    )
    assert every.returncode == 0, every.stderr
    assert [(d["agent"], d["moved"]) for d in every.json()["databases"]] == [("work", 1)]
    assert records(home, "work")["standup at nine every weekday"][0] == "alice"


def test_unknown_from_names_the_agents_that_hold_the_person(home: Path) -> None:
    assert cli(home, "--agent", "work", "memory", "add", "standup at nine", "-u", "carol").returncode == 0
    result = cli(home, "memory", "reassign", "--from", "carol", "--to", "alice", "--yes")
    assert result.returncode == 1
    assert (
        "no memories of person 'carol' in the stores of agent main (persons: bob, default); agents work "
        "hold some (--all-agents)" in _error_line(result)
    )
    every = cli(home, "memory", "reassign", "--from", "carol", "--to", "alice", "--all-agents", "--yes")
    assert every.returncode == 0 and "moved 1 memories of carol to alice (work 1)" in every.stdout


def test_doctor_warns_before_and_not_after_the_memories_are_reassigned(home: Path) -> None:
    before = cli(home, "doctor", "--json").json()
    [warning] = [f for f in before["findings"] if f["severity"] == "warning"]
    # the Telegram DM's: the main session's is the owner's own while no owner is configured
    assert warning["message"].startswith(
        "agent main: 1 memories of user 'default' were written from conversations"
    )
    assert cli(home, "memory", "reassign", "--from", "default", "--to", "alice", "--yes").returncode == 0
    after = cli(home, "doctor", "--json")
    assert after.returncode == 0
    assert [f for f in after.json()["findings"] if f["severity"] != "ok"] == []
    [store] = after.json()["persons"]
    assert store["persons"] == [{"userId": "alice", "memories": 3}, {"userId": "bob", "memories": 1}]


def test_the_shared_store_is_covered_when_user_memory_is_shared(home: Path) -> None:
    shared = {"OPENCLAW_MEMORY__SHAREUSERMEMORY": "true"}
    assert cli(home, "memory", "add", "allergic to peanuts", "-c", "profile", env=shared).returncode == 0
    moved = cli(
        home, "memory", "reassign", "--from", "default", "--to", "alice", "--yes", "--json", env=shared
    )
    assert moved.returncode == 0, moved.stderr
    assert sorted((d["agent"], d["moved"]) for d in moved.json()["databases"]) == [
        ("_shared", 1),
        ("main", 3),
    ]
    assert records(home, "_shared")["allergic to peanuts"][0] == "alice"


# --- confirmation ------------------------------------------------------------------------------------


def test_without_yes_and_no_terminal_it_refuses(home: Path) -> None:
    before = history_rows(home)
    result = cli(home, "memory", "reassign", "--from", "default", "--to", "alice")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "openclaw: error: refusing to move 3 memories of 'default' without --yes (standard input is not a "
        "terminal) (add --yes to move them; --dry-run lists them)"
    ]
    assert history_rows(home) == before


def _on_a_terminal(home: Path, answer: bytes, *args: str) -> tuple[int, str]:
    """Run the CLI with a pseudo-terminal as its stdin (and stderr), typing `answer` at the question."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "openclaw_cli", *args],
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=terminal,
        env=base_env(home),
        cwd=ROOT,
    )
    os.close(terminal)
    shown = b""
    deadline = time.monotonic() + 60
    while b"[y/N]" not in shown and time.monotonic() < deadline:
        shown += os.read(controller, 4096)
    os.write(controller, answer)
    process.wait(60)
    assert process.stdout is not None
    process.stdout.read()
    os.close(controller)
    return process.returncode, shown.decode()


def test_on_a_terminal_it_shows_the_memories_and_asks(home: Path) -> None:
    code, shown = _on_a_terminal(home, b"y\n", "memory", "reassign", "--from", "default", "--to", "alice")
    assert code == 0
    assert "sencha" in shown and "Move 3 memories of 'default' to 'alice'? [y/N]" in shown
    assert {user for user, _ in records(home).values()} == {"alice", "bob"}


def test_on_a_terminal_no_moves_nothing(home: Path) -> None:
    before = history_rows(home)
    code, _ = _on_a_terminal(home, b"n\n", "memory", "reassign", "--from", "default", "--to", "alice")
    assert code == 1
    assert history_rows(home) == before


# --- bad input: one line each ------------------------------------------------------------------------


def _error_line(result: Result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_from_and_to_the_same_person(home: Path) -> None:
    result = cli(home, "memory", "reassign", "--from", "bob", "--to", "bob", "--yes")
    assert result.returncode == 2
    assert (
        _error_line(result) == "openclaw: error: --from and --to are both 'bob' (name two different persons)"
    )


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--from", ""), ("--to", ""), ("--from", "x" * 129), ("--to", "x" * 129), ("--to", "   ")],
)
def test_invalid_person_id(home: Path, flag: str, value: str) -> None:
    args = {"--from": "default", "--to": "alice", flag: value}
    result = cli(home, "memory", "reassign", "--from", args["--from"], "--to", args["--to"], "--yes")
    assert result.returncode == 1
    assert _error_line(result).startswith(f"openclaw: error: invalid user id {value!r}")


@pytest.mark.parametrize("which", ["from", "to"])
def test_person_id_with_nul(tmp_path: Path, which: str) -> None:
    """A NUL cannot travel in argv: the core refuses it for any caller."""
    users = {"from": "default", "to": "alice", which: "a\x00b"}
    request = ReassignRequest(users["from"], users["to"])
    with pytest.raises(InvalidInput, match=re.escape("invalid user id 'a\\x00b'")):
        reassign(Home(tmp_path / "h"), "main", False, request, lambda path: pytest.fail("no store is opened"))


def test_unknown_from_lists_the_persons(home: Path) -> None:
    result = cli(home, "memory", "reassign", "--from", "carol", "--to", "alice", "--yes")
    assert result.returncode == 1
    assert _error_line(result) == (
        "openclaw: error: no memories of person 'carol' in the stores of agent main (persons: bob, default) "
        "(see `openclaw memory status` for the persons and their memories)"
    )


@pytest.mark.parametrize(
    ("where", "says"),
    [
        ("session", f"invalid --where 'session': {WHERE_FIELDS}"),
        ("person=alice", f"invalid --where 'person=alice': {WHERE_FIELDS}"),
        ("=x", f"invalid --where '=x': {WHERE_FIELDS}"),
        ("category=", "invalid --where 'category=': category needs a value"),
        ("category=hobby", "invalid --where 'category=hobby': unknown category"),
        ("since=yesterday", "invalid --where 'since=yesterday': since takes a date, YYYY-MM-DD"),
        ("since=2026-02-30", "invalid --where 'since=2026-02-30': since takes a date, YYYY-MM-DD"),
        ("id=../etc", "invalid --where 'id=../etc': invalid memory id '../etc'"),
        ("session=agent:main", "invalid --where session=agent:main:"),
        ("session=not-a-session", "invalid --where session=not-a-session: invalid session id"),
    ],
)
def test_malformed_where(home: Path, where: str, says: str) -> None:
    before = history_rows(home)
    result = cli(home, "memory", "reassign", "--from", "default", "--to", "alice", "--where", where, "--yes")
    assert result.returncode == 2
    assert _error_line(result).startswith(f"openclaw: error: {says}")
    assert history_rows(home) == before


def test_where_names_the_fields_in_its_hint(home: Path) -> None:
    result = cli(home, "memory", "reassign", "--from", "default", "--to", "alice", "-w", "who=me", "--yes")
    assert result.returncode == 2
    assert "session (a session key or id), category, since (YYYY-MM-DD) or id" in _error_line(result)


def test_a_session_key_without_sessions_is_not_found(home: Path) -> None:
    result = cli(home, "memory", "reassign", "--from", "default", "--to", "alice", "-w",
                 "session=agent:main:slack:default:direct:nobody", "--yes")  # fmt: skip
    assert result.returncode == 1
    assert _error_line(result).startswith(
        "openclaw: error: no session for key agent:main:slack:default:direct:nobody"
    )


def test_the_where_usage_error_comes_before_any_question(tmp_path: Path) -> None:
    """Parsing is the core's first step: the same error for every caller, before a store is opened."""
    with pytest.raises(UsageError, match=WHERE_FIELDS):
        reassign(
            Home(tmp_path / "h"),
            "main",
            False,
            ReassignRequest("default", "alice", ("nope",)),
            lambda path: pytest.fail("no store is opened for a malformed filter"),
        )
    assert not (tmp_path / "h").exists()


def test_help_has_examples(home: Path) -> None:
    result = cli(home, "memory", "reassign", "--help")
    assert result.returncode == 0
    assert (
        "Examples:" in result.stdout
        and "openclaw memory reassign --from default --to alice --dry-run" in result.stdout
    )


# --- the schema ----------------------------------------------------------------------------------------


def test_an_older_database_keeps_its_history_and_learns_the_reassign_action(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import apsw

    from openclaw_cli.memory.store.sqlite import migrations
    from openclaw_cli.memory.store.sqlite.connection import open_db

    path = tmp_path / "m.sqlite"
    with monkeypatch.context() as patch:
        patch.setattr(
            migrations, "MIGRATIONS", [m for m in migrations.MIGRATIONS if m[0] != "0010_history_reassign"]
        )
        old = open_db(path)
        old.execute(
            "INSERT INTO history(record_id, user_id, action, old_value, new_value, at, reason) VALUES "
            "('mem-1', 'default', 'add', NULL, NULL, '2026-01-01T00:00:00.000Z', NULL), "
            "('mem-1', 'default', 'delete', '{\"l0\": \"x\"}', NULL, '2026-01-02T00:00:00.000Z', 'gone')"
        )
        with pytest.raises(apsw.ConstraintError):
            old.execute("INSERT INTO history(record_id, action, at) VALUES ('mem-1', 'reassign', 'now')")
        rows = old.execute("SELECT * FROM history ORDER BY seq").fetchall()
        old.close()
    conn = open_db(path)
    assert conn.execute("SELECT * FROM history ORDER BY seq").fetchall() == rows
    conn.execute("INSERT INTO history(record_id, action, at) VALUES ('mem-1', 'reassign', 'now')")
    with pytest.raises(apsw.ConstraintError):
        conn.execute("INSERT INTO history(record_id, action, at) VALUES ('mem-1', 'bogus', 'now')")
    indexes = [
        r[0]
        for r in conn.execute("SELECT name FROM sqlite_schema WHERE tbl_name = 'history' AND type = 'index'")
    ]
    assert indexes == ["history_by_record"]
