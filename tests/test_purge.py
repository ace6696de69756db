"""`memory purge --user U`: every memory of U gone from every store, with history, vectors and sessions,
so that no byte of the text is left anywhere under the home (seed 000 §12)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.memory.store.sqlite import vec
from openclaw_cli.memory.store.sqlite.vec import all_tables as vector_tables
from openclaw_cli.memory.store.vectors.cache import passage_hash
from tests.conftest import run_cli
from tests.encrypted_homes import KINDS, files_holding, prepare
from tests.memory_helpers import add, service_for

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

MARKER = "zanzibarquokka"


def _files_holding(home: Path, needle: bytes) -> list[str]:
    """Every file under `home` (databases, -wal, -shm, caches, sessions) whose bytes contain `needle`
    (in an encrypted home: none on disk, and those whose decrypted content does)."""
    return files_holding(home, needle)


def _cli(home: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    result = run_cli(home, *args, env=env)
    return result


def _fill(home: Path) -> None:
    """Alice's marker in main's store, in work's store, in the shared store and in two sessions."""
    shared = {"OPENCLAW_MEMORY__SHAREUSERMEMORY": "true"}
    # Her Telegram address is linked to her name, so her DM sessions are hers (identity.py).
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    links = {"alice": ["telegram:alice"], "bob": ["telegram:bob"]}
    (home / "openclaw.json").write_text(json.dumps({"session": {"identityLinks": links}}), encoding="utf-8")
    # main's three memories in one process (each `memory add` process loads both models).
    main_memories = [
        {"text": f"alice's code word is {MARKER}", "userId": "alice"},
        {"text": f"{MARKER} 我喜欢喝咖啡", "userId": "alice", "category": "preference", "l1": MARKER},
        {"text": "bob likes green tea", "userId": "bob"},
    ]
    lines = "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in main_memories)
    added = run_cli(home, "memory", "add", "--batch", "-", input=lines)
    assert added.returncode == 0, added.stderr
    steps: list[tuple[tuple[str, ...], dict[str, str] | None]] = [
        (("--agent", "work", "memory", "add", f"alice said {MARKER} at work", "-u", "alice"), None),
        (("--agent", "team", "memory", "add", f"shared note {MARKER}", "-u", "alice"), shared),
        (
            (
                "session",
                "append",
                "agent:main:telegram:default:direct:alice",
                "--role",
                "user",
                f"I am {MARKER}",
            ),
            None,
        ),
        (
            (
                "--agent",
                "work",
                "session",
                "append",
                "agent:work:telegram:default:direct:alice",
                "--role",
                "user",
                MARKER,
            ),
            None,
        ),
        (
            (
                "session",
                "append",
                "agent:main:telegram:default:direct:bob",
                "--role",
                "user",
                "hello from bob",
            ),
            None,
        ),
    ]
    for args, env in steps:
        done = _cli(home, *args, env=env)
        assert done.returncode == 0, (args, done.stderr)
    assert _cli(home, "memory", "search", "咖啡").returncode == 0  # jieba's cache is written


@pytest.fixture(scope="module", params=KINDS)
def filled(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """_fill's home, made once for the module, plain and encrypted: each test purges its own copy."""
    home = prepare(tmp_path_factory.mktemp("filled") / "home", request.param)
    _fill(home)
    return home


def _copy_of(filled: Path, tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(filled, home, symlinks=True)
    return home


def test_purge_of_one_agent_names_the_agents_it_did_not_cover(tmp_path: Path, filled: Path) -> None:
    home = _copy_of(filled, tmp_path)
    done = _cli(home, "memory", "purge", "--user", "alice", "--yes", "--json")
    assert done.returncode == 1
    assert "work" in done.stderr and "--all-agents" in done.stderr
    report = json.loads(done.stdout)
    assert report["purged"] == 3 and report["notCovered"] == ["work"]  # main's two and the shared one
    assert _files_holding(home, MARKER.encode()) != []
    left = _files_holding(home, MARKER.encode())
    # What was not asked for: work's store, and the sessions (no --sessions).
    assert all(f.startswith(("agents/work/", "agents/main/sessions/")) for f in left), left
    assert "agents/work/memory/memory.sqlite" in left


def test_purge_all_agents_with_sessions_leaves_no_byte_of_the_text(tmp_path: Path, filled: Path) -> None:
    home = _copy_of(filled, tmp_path)
    assert len(_files_holding(home, MARKER.encode())) >= 5
    assert _files_holding(home, "我喜欢喝咖啡".encode()) != []
    done = _cli(home, "memory", "purge", "--user", "alice", "--all-agents", "--sessions", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["purged"], report["sessions"], report["notCovered"]) == (4, 2, [])
    assert report["historyRows"] == 4
    assert _files_holding(home, MARKER.encode()) == []
    # jieba's cache is its packaged dictionary (words, not what the user wrote): the sentence is gone.
    assert _files_holding(home, "我喜欢喝咖啡".encode()) == []
    # Bob is untouched: his memory and his session are still there.
    assert "bob likes green tea" in _cli(home, "memory", "list").stdout
    sessions = _cli(home, "session", "list", "--json")
    assert [s["sessionKey"] for s in json.loads(sessions.stdout)] == [
        "agent:main:telegram:default:direct:bob"
    ]


def test_purge_removes_vectors_cache_entries_and_history(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    texts = [f"alice fact {n} about {MARKER}" for n in range(6)]
    for text in texts:
        add(service, text, user_id="alice")
    add(service, "bob fact", user_id="bob")
    store = service.store(service.db_path("user"))
    [table] = vector_tables(store.conn)
    alice_rows = [r for (r,) in store.conn.execute("SELECT rowid FROM records WHERE user_id = 'alice'")]
    blobs = [
        store.conn.execute(f"SELECT embedding FROM {table} WHERE rowid = ?", (r,)).fetchone()[0]
        for r in alice_rows
    ]
    assert len(blobs) == 6 and all(blobs)
    assert len(store.cached_vectors(_key(store), [passage_hash(t) for t in texts])) == 6  # 6 of 6 cached

    report = service.purge_user("alice")

    assert (report.memories, report.history_rows) == (6, 6)
    assert store.cached_vectors(_key(store), [passage_hash(t) for t in texts]) == {}
    assert store.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 1
    assert store.conn.execute("SELECT count(*) FROM records_fts").fetchone()[0] == 1
    history = list(store.conn.execute("SELECT user_id, action, new_value FROM history ORDER BY seq"))
    assert [(u, a) for u, a, _ in history] == [("bob", "add"), (None, "purge")]
    assert "alice" not in history[-1][2]
    path = service.db_path("user")
    service.close()
    data = b"".join(p.read_bytes() for p in path.parent.iterdir() if p.is_file())
    assert MARKER.encode() not in data and b"alice" not in data
    assert not [blob for blob in blobs if blob in data]


def test_purge_of_a_user_with_no_memories_changes_nothing_else(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    add(service, "bob fact", user_id="bob")
    assert service.purge_user("nobody").memories == 0
    assert [r.user_id for r in service.list_records()] == ["bob"]
    service.close()


def test_purge_with_an_empty_user_id_is_refused(tmp_path: Path) -> None:
    done = _cli(tmp_path / "home", "memory", "purge", "--user", " ", "--yes")
    assert done.returncode == 1 and "invalid user id" in done.stderr


def _key(store: Any) -> str:
    from openclaw_cli.memory.store.vectors.cache import embedder_key

    identity = vec.stored_identity(store.conn)
    assert identity is not None
    return embedder_key(identity)


def test_a_purge_names_the_look_alike_ids_it_left_and_how_to_purge_them(cli: Any) -> None:
    """Issue 48: `/v1` `user: "victim"` is the person `openai:victim`, `--user victim` another one. Purging
    one lists the other (and the same peer on another channel), with the command that purges it too."""
    for user, text in (
        ("victim", "lives on Elm Street"),
        ("openai:victim", "works at the bakery"),
        ("telegram:victim", "has a red bike"),
    ):
        assert cli("memory", "add", text, "--user", user).returncode == 0
    assert cli("memory", "add", "likes tea", "--user", "bystander").returncode == 0
    done = cli("memory", "purge", "--user", "victim", "--yes")
    assert done.returncode == 0, done.stderr
    for other in ("openai:victim", "telegram:victim"):
        assert f"note: '{other}' may be the same person" in done.stdout, done.stdout
        assert f"openclaw memory purge --user {other} --yes" in done.stdout
    assert "bystander" not in done.stdout
    kept = cli("memory", "list", "--json").json()
    assert sorted(r["userId"] for r in kept) == ["bystander", "openai:victim", "telegram:victim"]
    again = cli("memory", "purge", "--user", "openai:victim", "--yes", "--json")
    assert again.returncode == 0 and again.json()["lookalikes"] == ["telegram:victim"]
