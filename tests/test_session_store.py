"""The session store on real files: layout, permissions, damaged lines, concurrency, crashes, doctor."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from openclaw_cli.core.errors import InvalidInput, NotFound, StoreError
from openclaw_cli.core.paths import Home
from openclaw_cli.sessions.ids import is_session_id, uuid7
from openclaw_cli.sessions.jsonl import read_messages
from openclaw_cli.sessions.keys import parse_key
from openclaw_cli.sessions.lifecycle import SessionManager
from openclaw_cli.sessions.store import SessionStore
from openclaw_cli.sessions.upkeep.check import check_sessions
from openclaw_cli.sessions.writer import Durability

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ROOT = Path(__file__).resolve().parent.parent

APPEND_LOOP = """
import sys
from datetime import datetime, UTC
from pathlib import Path
from openclaw_cli.core.paths import Home
from openclaw_cli.sessions.store import SessionStore
from openclaw_cli.sessions.writer import Durability
home, session_id, writer, count, mode = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
store = SessionStore(Home(Path(home)), "main", Durability(mode, 1000))
print("ready", flush=True)
i = 0
while count < 0 or i < count:
    store.append(session_id, "user", f"{writer}-{i} " + "x" * 200, datetime.now(UTC))
    i += 1
"""


def make_session(home: Path, mode: str = "interval") -> tuple[SessionStore, str]:
    store = SessionStore(Home(home), "main", Durability(mode, 1000))
    meta, _ = SessionManager(store).get_or_create("agent:main:main", NOW)
    return store, meta["sessionId"]


def messages_path(home: Path, session_id: str) -> Path:
    return home / "agents" / "main" / "sessions" / session_id / "messages.jsonl"


def test_uuid7_ids_are_version_7_and_time_ordered() -> None:
    first, second = uuid7(1_700_000_000_000), uuid7(1_700_000_000_001)
    assert first.version == 7 and first.variant == "specified in RFC 4122"
    assert str(first) < str(second)


def test_layout_fields_and_permissions(home: Path) -> None:
    store, session_id = make_session(home)
    store.append(session_id, "user", "hello", NOW, sender="u1")
    store.close()
    root = home / "agents" / "main" / "sessions"
    directory = root / session_id
    assert is_session_id(session_id)
    assert sorted(p.name for p in directory.iterdir()) == ["context.json", "messages.jsonl", "meta.json"]
    meta = json.loads((directory / "meta.json").read_text())
    for field in (
        "sessionId",
        "sessionKey",
        "agentId",
        "channel",
        "chatId",
        "userId",
        "createdAt",
        "lastActiveAt",
        "messageCount",
        "totalInputTokens",
        "totalOutputTokens",
        "totalCost",
        "status",
        "model",
        "summaryCheckpoint",
    ):
        assert field in meta
    assert meta["messageCount"] == 1 and meta["status"] == "active"
    line = json.loads((directory / "messages.jsonl").read_text().splitlines()[0])
    assert (
        line["idx"] == 0 and line["role"] == "user" and line["sender"] == "u1" and "tokens" not in line
    )  # counted lazily
    index = json.loads((root / "sessions.json").read_text())
    assert index["sessions"]["agent:main:main"]["sessionId"] == session_id
    for path in [home, *home.rglob("*")]:
        mode = path.stat().st_mode & 0o777
        assert mode == (0o700 if path.is_dir() else 0o600), path


@pytest.mark.parametrize("bad", ["../evil", "a/b", "..", "x\x00y"])
def test_bad_agent_id_is_refused_and_nothing_created(tmp_path: Path, bad: str) -> None:
    home = tmp_path / "home"
    with pytest.raises(InvalidInput):
        SessionStore(Home(home), bad)
    assert not home.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("bad", ["s-../../x", "../s-1", "s-1/2", "s-\x00", "s-not-a-uuid"])
def test_bad_session_id_is_refused(home: Path, bad: str) -> None:
    store, _ = make_session(home)
    before = sorted(str(p) for p in home.parent.rglob("*"))
    with pytest.raises(InvalidInput):
        store.resolve(bad)
    with pytest.raises(InvalidInput):
        store.append(bad, "user", "x", NOW)
    assert sorted(str(p) for p in home.parent.rglob("*")) == before


def test_unknown_key_and_id_are_not_found(home: Path) -> None:
    store, _ = make_session(home)
    with pytest.raises(NotFound):
        store.resolve("agent:main:telegram:direct:404")
    with pytest.raises(NotFound):
        store.resolve(f"s-{uuid7()}")


def test_malformed_middle_line_and_torn_last_line_are_skipped_and_reported(home: Path) -> None:
    store, session_id = make_session(home)
    for text in ("one", "two", "three"):
        store.append(session_id, "user", text, NOW)
    store.close()
    path = messages_path(home, session_id)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[0] + b"{not json\n" + lines[1] + lines[2] + b'{"idx": 3, "role": "us')
    result = read_messages(path)
    assert [m["content"] for m in result.messages] == ["one", "two", "three"]
    assert [(p.line, p.torn) for p in result.problems] == [(2, False), (5, True)]
    findings = check_sessions(Home(home), "main", fix=False)
    named = {(f.check, f.path) for f in findings}
    assert ("sessions.malformed-line", str(path)) in named and ("sessions.torn-line", str(path)) in named
    assert any("line 2" in f.message for f in findings) and any("line 5" in f.message for f in findings)
    # The next append terminates the torn line instead of gluing onto it, and continues the idx sequence.
    fresh = SessionStore(Home(home), "main")
    assert fresh.append(session_id, "assistant", "four", NOW)["idx"] == 3
    after = read_messages(path)
    assert [m["idx"] for m in after.messages] == [0, 1, 2, 3] and len(after.problems) == 2


def test_truncated_meta_and_index_are_rebuilt_without_deleting(home: Path) -> None:
    store, session_id = make_session(home)
    for i in range(3):
        store.append(session_id, "user" if i % 2 == 0 else "assistant", f"message {i}", NOW)
    other = SessionManager(store).append("agent:main:telegram:direct:7", "user", "hi", NOW).session_id
    store.close()
    root = home / "agents" / "main" / "sessions"
    meta_path, index_path = root / session_id / "meta.json", root / "sessions.json"
    meta_path.write_bytes(meta_path.read_bytes()[:25])
    index_path.write_bytes(index_path.read_bytes()[:40])
    with pytest.raises(StoreError):
        SessionStore(Home(home), "main").read_index()
    findings = check_sessions(Home(home), "main", fix=False)
    assert {f.check for f in findings} >= {"sessions.index", "sessions.meta"}
    assert not any(f.fixed for f in findings)
    fixed = check_sessions(Home(home), "main", fix=True)
    assert all(f.fixed for f in fixed if f.severity != "ok")
    assert len(list(root.glob("sessions.json.corrupt-*"))) == 1
    assert len(list((root / session_id).glob("meta.json.corrupt-*"))) == 1
    rebuilt = SessionStore(Home(home), "main")
    meta = rebuilt.read_meta(session_id)
    assert meta["messageCount"] == 3 and meta["nextIdx"] == 3
    # The index lost which key the first session had, so it comes back archived; nothing is lost.
    rows = {row["sessionId"]: row for row in rebuilt_rows(rebuilt)}
    assert set(rows) == {session_id, other}
    assert rows[other]["sessionKey"] == "agent:main:telegram:direct:7"
    assert [m["content"] for m in rebuilt.read_messages(session_id).messages] == [
        f"message {i}" for i in range(3)
    ]
    assert [f.severity for f in check_sessions(Home(home), "main", fix=False)] == ["ok"]


def rebuilt_rows(store: SessionStore) -> list[dict[str, object]]:
    from openclaw_cli.sessions.index import index_rows

    return index_rows(store.read_index())


def test_index_and_directories_mismatch_is_found_and_fixed(home: Path) -> None:
    store, session_id = make_session(home)
    store.close()
    root = home / "agents" / "main" / "sessions"
    index = json.loads((root / "sessions.json").read_text())
    ghost = f"s-{uuid7()}"
    index["archived"][ghost] = {"sessionKey": "agent:main:main", "status": "archived", "updatedAt": "x"}
    del index["sessions"]["agent:main:main"]
    (root / "sessions.json").write_text(json.dumps(index))
    (root / ".locks" / f"session-{ghost}.lock").write_bytes(b"")
    checks = {f.check for f in check_sessions(Home(home), "main", fix=False)}
    assert {"sessions.index-missing", "sessions.index-extra", "sessions.stale-lock"} <= checks
    check_sessions(Home(home), "main", fix=True)
    fixed = json.loads((root / "sessions.json").read_text())
    assert fixed["sessions"]["agent:main:main"]["sessionId"] == session_id and ghost not in fixed["archived"]
    assert not (root / ".locks" / f"session-{ghost}.lock").exists()
    assert (root / session_id / "messages.jsonl").exists()


def _orphan_beside_current(home: Path, orphan_message: str | None) -> tuple[str, str, Path]:
    """A crash between a session directory's creation and its index entry, after which a later append
    created the key's current session: the orphan is on disk, the index names the other session."""
    store, current = make_session(home)
    store.append(current, "user", "kept", NOW)
    orphan = store.create_session(parse_key("agent:main:main"), NOW)["sessionId"]
    if orphan_message is not None:
        store.append(orphan, "user", orphan_message, NOW)
    store.update_index(lambda index: index["sessions"]["agent:main:main"].update(sessionId=current))
    store.close()
    return current, orphan, home / "agents" / "main" / "sessions"


def test_an_empty_orphan_session_beside_the_current_one_is_removed(home: Path) -> None:
    current, orphan, root = _orphan_beside_current(home, None)
    found = [f for f in check_sessions(Home(home), "main", fix=False) if f.severity != "ok"]
    assert [f.check for f in found] == ["sessions.index-extra"] and not found[0].fixed
    fixed = [f for f in check_sessions(Home(home), "main", fix=True) if f.check == "sessions.index-extra"]
    assert fixed[0].fixed and "held no message" in fixed[0].message
    index = json.loads((root / "sessions.json").read_text())
    assert index["sessions"]["agent:main:main"]["sessionId"] == current and index["archived"] == {}
    assert not (root / orphan).exists() and not list(root.glob(".new-*"))
    assert [f.severity for f in check_sessions(Home(home), "main", fix=False)] == ["ok"]


def test_an_orphan_session_holding_a_message_is_archived_not_removed(home: Path) -> None:
    current, orphan, root = _orphan_beside_current(home, "written by session id")
    check_sessions(Home(home), "main", fix=True)
    index = json.loads((root / "sessions.json").read_text())
    assert index["sessions"]["agent:main:main"]["sessionId"] == current
    assert index["archived"][orphan]["sessionKey"] == "agent:main:main"
    stored = read_messages(root / orphan / "messages.jsonl").messages
    assert [m["content"] for m in stored] == ["written by session id"]


def test_an_empty_orphan_session_of_a_key_without_one_becomes_current(home: Path) -> None:
    store, orphan = make_session(home)  # created, then "killed" before its index entry was written
    store.update_index(lambda index: index["sessions"].pop("agent:main:main"))
    store.close()
    check_sessions(Home(home), "main", fix=True)
    root = home / "agents" / "main" / "sessions"
    index = json.loads((root / "sessions.json").read_text())
    assert index["sessions"]["agent:main:main"]["sessionId"] == orphan and index["archived"] == {}
    assert (root / orphan / "meta.json").is_file()


def run_appender(home: Path, session_id: str, writer: str, count: int, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", APPEND_LOOP, str(home), session_id, writer, str(count), mode],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )


def test_two_processes_appending_lose_and_interleave_nothing(home: Path) -> None:
    store, session_id = make_session(home)
    store.close()
    procs = [run_appender(home, session_id, name, 300, "interval") for name in ("a", "b")]
    for proc in procs:
        assert proc.wait(timeout=120) == 0
    result = read_messages(messages_path(home, session_id))
    assert result.problems == []
    assert [m["idx"] for m in result.messages] == list(range(600))
    for writer in ("a", "b"):
        mine = [m["content"].split()[0] for m in result.messages if m["content"].startswith(writer + "-")]
        assert mine == [f"{writer}-{i}" for i in range(300)]  # each writer's order kept, none lost
    assert SessionStore(Home(home), "main").read_meta(session_id)["messageCount"] == 600


def test_sigkill_mid_appends_leaves_a_readable_file(home: Path) -> None:
    store, session_id = make_session(home)
    store.close()
    path = messages_path(home, session_id)
    proc = run_appender(home, session_id, "k", -1, "never")
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    deadline = time.monotonic() + 30
    while path.stat().st_size < 100_000 and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    result = read_messages(path)
    assert len(result.messages) > 100
    assert len(result.problems) <= 1 and all(p.torn for p in result.problems)
    assert [m["idx"] for m in result.messages] == list(range(len(result.messages)))
    after = SessionStore(Home(home), "main")
    meta = after.read_meta(session_id)  # meta.json was replaced atomically, so it parses
    assert meta["messageCount"] == len(result.messages)
    assert after.append(session_id, "user", "after the crash", NOW)["idx"] == len(result.messages)
