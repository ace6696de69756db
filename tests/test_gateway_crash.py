"""SIGKILL of the gateway mid-turn: every session file still parses, and no acknowledged message is lost."""

from __future__ import annotations

import json
import stat
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from openclaw_cli.core.paths import Home
from openclaw_cli.sessions.index import read_index
from openclaw_cli.sessions.store import SessionStore, iso
from tests.fake_openai import FakeOpenAI
from tests.gateway_helpers import (
    chat_until_final,
    echo_last_user,
    echo_server,
    frames_until,
    request,
    running_gateway,
    send,
    start_gateway,
    write_config,
)

SESSIONS = {"agent:main:direct:ann": ["a1", "a2", "a3"], "agent:main:direct:bob": ["b1", "b2"]}


@pytest.fixture
def slow_fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    server.respond_with(echo_last_user)
    server.delay = 3.0  # every turn is still waiting for the model when the gateway is killed
    yield server
    server.stop()


def _user_texts(home: Path, key: str) -> list[str]:
    store = SessionStore(Home(home), "main")
    session_id = store.current_session_id(key)
    if session_id is None:
        return []
    view = store.read_session(session_id)
    assert view.problems == [], view.problems
    return [m["content"] for m in view.messages if m["role"] == "user"]


def _asked(fake: FakeOpenAI) -> set[str]:
    """The user texts the model has been asked about so far."""
    return {
        str(message.get("content"))
        for recorded in fake.requests_to("/chat/completions")
        for message in recorded.body.get("messages", [])
        if message.get("role") == "user"
    }


def test_sigkill_mid_turn_loses_no_acknowledged_message(tmp_path: Path, slow_fake: FakeOpenAI) -> None:
    home = tmp_path / "home"
    write_config(home, slow_fake, gateway={"queue": {"mode": "followup", "debounceMs": 0}})
    gateway = start_gateway(home)
    try:
        with gateway.ws() as conn:
            ids = {
                send(conn, "chat.send", {"text": t, "sessionKey": k}): t
                for k, texts in SESSIONS.items()
                for t in texts
            }
            acked = frames_until(conn, lambda f: f.get("type") == "res" and f.get("id") == list(ids)[-1])
            assert all(f["ok"] for f in acked if f.get("type") == "res")
        deadline = time.monotonic() + 60
        while not {"a1", "b1"} <= _asked(slow_fake) and time.monotonic() < deadline:
            time.sleep(0.05)  # both sessions' first turns have reached their model call
        assert {"a1", "b1"} <= _asked(slow_fake)
    finally:
        gateway.kill()

    # after the crash: every file parses
    root = home / "agents" / "main" / "sessions"
    index = read_index(root / "sessions.json")
    for entry in index["sessions"].values():
        json.loads((root / entry["sessionId"] / "meta.json").read_bytes())
    # Killed mid-turn: each session holds the start of what was sent, and ann (3 turns of a 3 s model)
    # cannot have reached its last. On a loaded machine one session's first turn may reach the model a turn
    # later than the other's, so how far each got is not fixed; that nothing is lost or doubled is.
    before = {key: _user_texts(home, key) for key in SESSIONS}
    for key, texts in SESSIONS.items():
        assert before[key] and before[key] == texts[: len(before[key])], before
    assert before["agent:main:direct:ann"] != SESSIONS["agent:main:direct:ann"]

    slow_fake.delay = 0.0
    with running_gateway(home) as restarted:
        deadline = time.monotonic() + 60
        history: list[dict[str, object]] = []
        with restarted.ws() as conn:
            # The last user message is stored before its reply: wait for the reply itself, or a loaded
            # machine reads the history between the two.
            while time.monotonic() < deadline:
                history = request(conn, "chat.history", {"sessionKey": "agent:main:direct:ann"})["payload"][
                    "messages"
                ]
                replied = ("assistant", "echo: a3") in [(m["role"], m["content"]) for m in history]
                if replied and all(_user_texts(home, key) == texts for key, texts in SESSIONS.items()):
                    break
                time.sleep(0.1)
    assert {key: _user_texts(home, key) for key in SESSIONS} == SESSIONS  # each once, in order
    assert ("assistant", "echo: a3") in [(m["role"], m["content"]) for m in history]
    assert (home / "gateway" / "inbox.jsonl").read_text().count('"op": "accept"') <= 3  # compacted


def test_sigkill_right_after_replies_loses_nothing_and_answers_nothing_twice(tmp_path: Path) -> None:
    """The reply is on the client's screen: its turn stored both messages (fsynced as session.fsync
    says) before the reply went out; only the usage totals (issue 23: after the reply) may lag, and
    meta.json, replaced atomically, parses whatever the moment of the kill."""
    with echo_server() as fake:
        home = tmp_path / "home"
        write_config(home, fake, gateway={"queue": {"mode": "followup", "debounceMs": 0}})
        gateway = start_gateway(home)
        try:
            with gateway.ws() as conn:
                for text in ("k1", "k2", "k3"):
                    ack = request(conn, "chat.send", {"text": text, "sessionKey": "agent:main:direct:kim"})
                    [*_, final] = chat_until_final(conn, {ack["payload"]["runId"]})
                    assert final["text"] == f"echo: {text}"
        finally:
            gateway.kill()  # at once after the last reply reached the client
        store = SessionStore(Home(home), "main")
        session_id = store.current_session_id("agent:main:direct:kim")
        assert session_id is not None
        json.loads((store.session_dir(session_id) / "meta.json").read_bytes())
        pairs = [
            ("user", t) if i % 2 == 0 else ("assistant", f"echo: {t}")
            for t in ("k1", "k2", "k3")
            for i in (0, 1)
        ]
        assert [(m["role"], m["content"]) for m in store.read_session(session_id).messages] == pairs
        with running_gateway(home) as restarted, restarted.ws() as conn:
            # the journal's unfinished messages are queued at start, before the gateway answers
            status = request(conn, "status")["payload"]
        assert (status["turnsDone"], status["lanes"]) == (0, 0), status
        assert [(m["role"], m["content"]) for m in store.read_session(session_id).messages] == pairs
        assert len(fake.requests_to("/chat/completions")) == 3  # nothing was answered again


def test_inbox_journal_skips_a_torn_last_line_and_compacts(tmp_path: Path) -> None:
    from openclaw_cli.gateway.inbox import Inbox

    inbox = Inbox(tmp_path / "gateway" / "inbox.jsonl")
    first = inbox.accept("main", "agent:main:main", "one", None, "2026-11-30T10:00:00.000Z")
    second = inbox.accept("main", "agent:main:main", "two", "bob", "2026-11-30T10:00:01.000Z")
    inbox.done([first.id])
    inbox.close()
    with open(inbox.path, "ab") as handle:
        handle.write(b'{"op": "accept", "id": "m-torn", "agentId": "ma')  # killed mid-write, never acked
    assert [entry.text for entry in Inbox(inbox.path).pending()] == ["two"]
    inbox.compact([second])
    assert inbox.path.read_text(encoding="utf-8").count("\n") == 1
    assert stat.S_IMODE(inbox.path.stat().st_mode) == 0o600
    assert [(e.text, e.sender) for e in Inbox(inbox.path).pending()] == [("two", "bob")]


def test_inbox_journal_empties_itself_when_nothing_is_pending(tmp_path: Path) -> None:
    from openclaw_cli.gateway import inbox as inbox_module

    journal = inbox_module.Inbox(tmp_path / "inbox.jsonl")
    kept = journal.accept("main", "agent:main:main", "still waiting", None, "2026-11-30T10:00:00.000Z")
    for n in range(inbox_module.COMPACT_AFTER - 1):
        entry = journal.accept("main", "agent:main:main", f"message {n}", None, "2026-11-30T10:00:00.000Z")
        journal.done([entry.id])
    assert "still waiting" in journal.path.read_text()  # one message is still open: it is never dropped
    journal.done([kept.id])
    assert journal.path.read_bytes() == b""  # nothing pending: delivered messages do not linger
    journal.accept("main", "agent:main:main", "after", None, "2026-11-30T10:00:00.000Z")
    assert [e.text for e in inbox_module.Inbox(journal.path).pending()] == ["after"]


def test_sigterm_lets_the_running_turn_finish(tmp_path: Path, slow_fake: FakeOpenAI) -> None:
    slow_fake.delay = 1.5
    home = tmp_path / "home"
    write_config(home, slow_fake, gateway={"queue": {"mode": "followup", "debounceMs": 0}})
    gateway = start_gateway(home)
    try:
        with gateway.ws() as conn:
            assert request(conn, "chat.send", {"text": "finish me", "sessionKey": "agent:main:direct:ann"})[
                "ok"
            ]
        deadline = time.monotonic() + 60
        while not slow_fake.requests_to("/chat/completions") and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        gateway.stop()  # SIGTERM while the model is still answering
    assert gateway.process.returncode is not None
    store = SessionStore(Home(home), "main")
    session_id = store.current_session_id("agent:main:direct:ann")
    assert session_id is not None
    messages = store.read_session(session_id).messages
    assert [(m["role"], m["content"]) for m in messages] == [
        ("user", "finish me"),
        ("assistant", "echo: finish me"),
    ]
    assert not (home / "gateway" / "gateway.pid").exists()


def _sessions_on_disk(home: Path) -> list[str]:
    return SessionStore(Home(home), "main").session_ids_on_disk()


def _reopen_journal(home: Path, texts: list[str], accepted_at: str) -> None:
    """The journal as a crash before the `done` lines would leave it: the accepts of `texts`, open.
    (They are written anew: a running gateway drops delivered messages from the journal at once.)"""
    from openclaw_cli.gateway.inbox import Inbox

    path = home / "gateway" / "inbox.jsonl"
    path.write_bytes(b"")
    journal = Inbox(path)
    for text in texts:
        journal.accept("main", "agent:main:main", text, None, accepted_at)
    journal.close()


def _say(gateway_home: Path, texts: list[str]) -> None:
    with running_gateway(gateway_home) as gw, gw.ws() as conn:
        for text in texts:
            ack = request(conn, "chat.send", {"text": text, "sessionKey": "agent:main:main"})
            frames_until(
                conn,
                lambda f, run=ack["payload"]["runId"]: (
                    f.get("event") == "chat"
                    and f["payload"]["runId"] == run
                    and f["payload"]["state"] != "delta"
                ),
            )


def test_a_new_command_that_stored_nothing_is_not_replayed(tmp_path: Path) -> None:
    """`/new` stores no message, so the journal cannot find it in the session after a crash: it is done
    when the session is newer than the command, and re-run once (then done) when it is not."""
    fake = FakeOpenAI().start()
    fake.respond_with(echo_last_user)
    try:
        home = tmp_path / "home"
        write_config(home, fake, gateway={"queue": {"mode": "followup", "debounceMs": 0}})
        _say(home, ["hello"])
        said_at = iso(datetime.now(UTC))
        _say(home, ["/new", "/new fresh start"])
        sessions = _sessions_on_disk(home)
        assert len(sessions) == 3
        _reopen_journal(home, ["/new", "/new fresh start"], said_at)  # both ran; their `done` lines are lost
        with running_gateway(home) as gw:
            assert "re-queued" not in gw.log()
        assert _sessions_on_disk(home) == sessions
        assert _user_texts(home, "agent:main:main") == ["fresh start"]
        assert "/new" not in (home / "gateway" / "inbox.jsonl").read_text(encoding="utf-8")

        # a `/new` acknowledged after the current session began that never ran: it runs once
        from openclaw_cli.gateway.inbox import Inbox

        journal = Inbox(home / "gateway" / "inbox.jsonl")
        journal.accept("main", "agent:main:main", "/new", None, iso(datetime.now(UTC)))
        journal.close()
        with running_gateway(home) as gw:
            deadline = time.monotonic() + 60
            while len(_sessions_on_disk(home)) < 4 and time.monotonic() < deadline:
                time.sleep(0.05)
        assert gw.log().count("re-queued 1 acknowledged message") == 1
        assert len(_sessions_on_disk(home)) == 4 and _user_texts(home, "agent:main:main") == []
        with running_gateway(home) as gw:
            pass
        assert gw.log().count("re-queued") == 1  # done: not again
        assert len(_sessions_on_disk(home)) == 4
    finally:
        fake.stop()
