"""`memory purge --user P --all-agents --sessions --yes` leaves no byte of P's words under the home
(DESIGN.md "Identity"): P speaks through every entry point of a real gateway (the fake model echoes, so
replies quote P), another person Q and the owner keep their words, and the purge runs while the gateway
runs (it does the work itself) or after it stopped. Also: the journal forgets delivered messages at once.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.identity.persons import history_name
from tests import encrypted_homes
from tests.agent_helpers import tool_call
from tests.conftest import run_cli
from tests.fake_openai import FakeOpenAI
from tests.gateway_helpers import (
    Gateway,
    chat_until_final,
    echo_last_user,
    http_json,
    request,
    running_gateway,
    write_config,
)

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

P = "plumquokka"  # every word of P's carries it
Q = "tealwombat"  # Q's words
OWNER = "owlcitrine"  # the owner's
GROUP = "agent:main:telegram:default:group:g1"
LINKS = {"pat": ["telegram:pat_tg", "openai:pat-api"], "quinn": ["telegram:quinn_tg"]}


def files_holding(home: Path, needle: str) -> list[str]:
    """Every file under `home` (databases and their -wal/-shm, sessions, journal, logs) holding `needle`
    (in an encrypted home: none on disk, and those whose decrypted content does)."""
    return encrypted_homes.files_holding(home, needle.encode())


def responder(body: dict[str, Any]) -> Any:
    """Echo the last user message; asked to "please store", call memory_add with P's words first."""
    last = (body.get("messages") or [{}])[-1]
    if body.get("tools") and last.get("role") == "user" and "please store" in str(last.get("content")):
        return tool_call("memory_add", {"text": f"pat keeps a {P}-tool badge"}, "call-pat")
    return echo_last_user(body)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    server.respond_with(responder)
    yield server
    server.stop()


def _hook(gw: Gateway, text: str, *, sender: str | None, group: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {"channel": "telegram", "text": text}
    body["peer"] = {"kind": "group", "id": "g1"} if group else "pat_tg"
    if sender is not None:
        body["sender"] = sender
    status, reply = http_json(gw.http + "/hooks/agent", body, token=gw.token)
    assert status == 200 and reply["status"] == "ok", reply
    return reply


def _ws_turn(gw: Gateway, text: str, **params: Any) -> None:
    with gw.ws() as conn:
        ack = request(conn, "chat.send", {"text": text, **params})
        assert ack["ok"], ack
        events = chat_until_final(conn, {ack["payload"]["runId"]})
    assert events[-1]["state"] == "final", events


def _cli_ok(home: Path, *args: str, input: str | None = None) -> Any:
    done = run_cli(home, *args, input=input)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def _speak_everywhere(gw: Gateway) -> None:
    """P through every entry point; Q in the same group; the owner in the main session."""
    from openai import OpenAI

    home = gw.home
    client = OpenAI(base_url=gw.http + "/v1", api_key=gw.token, max_retries=0)
    for agent in ("main", "work"):
        reply = client.chat.completions.create(
            model=agent, messages=[{"role": "user", "content": f"pat via v1 {P}-v1"}], user="pat-api"
        )
        assert reply.choices[0].message.content == f"echo: pat via v1 {P}-v1"
    _hook(gw, f"pat in the group {P}-hook", sender="pat_tg")
    _hook(gw, f"quinn in the group {Q}-hook", sender="quinn_tg")
    _hook(gw, f"pat in a direct message {P}-dm", sender=None, group=False)  # dmScope main: the main session
    tool = _hook(gw, f"please store {P}-ask for me", sender="pat_tg")
    assert tool["reply"].startswith("echo: ")
    _ws_turn(gw, f"pat over websocket {P}-ws", userId="pat")
    _ws_turn(gw, f"remember that my locker code is {P}-locker", sessionKey=GROUP, sender="pat_tg")
    _hook(gw, f"remember that quinn likes {Q}-tea", sender="quinn_tg")
    chat = _cli_ok(home, "chat", "--user", "pat", input=f"pat in openclaw chat {P}-chat\n")
    assert f"echo: pat in openclaw chat {P}-chat" in chat.stdout
    _cli_ok(home, "session", "append", GROUP, "--role", "user", "--sender", "pat_tg", f"pat appended {P}-app")
    _cli_ok(home, "session", "append", GROUP, "--role", "user", "--sender", "quinn_tg", f"quinn {Q}-app")
    _cli_ok(home, "session", "append", "agent:main:main", "--role", "user", f"owner note {OWNER}")
    # `openclaw chat` in a terminal keeps the person's prompt history here (prompt_toolkit's format);
    # an encrypted home keeps none (cli/chat/commands.py).
    history = home / "agents" / "main" / "chat" / history_name("pat")
    history.parent.mkdir(mode=0o700, exist_ok=True)
    if not encrypted_homes.is_encrypted(home):
        history.write_text(f"\n# 2026-01-01 10:00:00.000000\n+pat typed {P}-typed\n", encoding="utf-8")
    memories = json.loads(_cli_ok(home, "memory", "list", "--json").stdout)
    pats = [m["l0"] for m in memories if P in m["l0"]]
    assert any(f"{P}-tool" in t for t in pats) and any(f"{P}-locker" in t for t in pats), pats
    assert {m["userId"] for m in memories if P in m["l0"]} == {"pat"}
    assert any(Q in m["l0"] and m["userId"] == "quinn" for m in memories)


def _home(tmp_path: Path, fake: FakeOpenAI, kind: str = "plain") -> Path:
    home = encrypted_homes.prepare(tmp_path / "home", kind)
    write_config(
        home,
        fake,
        agents={"list": [{"id": "main"}, {"id": "work"}]},
        # P's DMs, chat.send and `openclaw chat` share the owner's main session, which a purge redacts: since
        # issue 47 that takes the explicit scope (under `main` they would go to P's own sessions)
        session={"identityLinks": LINKS, "dmScope": "main-shared-by-everyone"},
    )
    return home


def _purge(home: Path) -> dict[str, Any]:
    done = run_cli(home, "memory", "purge", "--user", "pat", "--all-agents", "--sessions", "--yes", "--json")
    assert done.returncode == 0, (done.stdout, done.stderr)
    return dict(json.loads(done.stdout))


def _check_forgotten(home: Path, report: dict[str, Any]) -> None:
    assert files_holding(home, P) == []
    assert report["purged"] >= 2 and report["sessions"] >= 2  # P's /v1 sessions with main and work
    assert report["redactedSessions"] == 2  # the group and the main session
    group = [f for f in files_holding(home, Q) if f.endswith("messages.jsonl")]
    main = [f for f in files_holding(home, OWNER) if f.endswith("messages.jsonl")]
    assert len(group) == 1 and len(main) == 1
    assert "agents/main/memory/memory.sqlite" in files_holding(home, Q)  # Q's "remember that"
    shown = _cli_ok(home, "session", "show", GROUP, "--json").json()
    assert shown["problems"] == []
    assert [m["idx"] for m in shown["messages"]] == list(range(len(shown["messages"])))
    quinn = [m for m in shown["messages"] if m["role"] == "user" and Q in m["content"]]
    assert [m.get("userId") for m in quinn] == ["quinn"] * 3
    assert {m["content"] for m in shown["messages"] if m.get("purged")} == {"[purged]"}


@pytest.mark.parametrize("kind", encrypted_homes.KINDS)
def test_a_purge_while_the_gateway_runs_leaves_no_byte_of_the_person(
    tmp_path: Path, fake: FakeOpenAI, kind: str
) -> None:
    home = _home(tmp_path, fake, kind)
    with running_gateway(home) as gw:
        _speak_everywhere(gw)
        held = files_holding(home, P)
        assert any(f.startswith("agents/main/memory/memory.sqlite") for f in held)  # or its -wal
        assert f"agents/main/chat/{history_name('pat')}" in held or kind == "encrypted"
        assert any(f.startswith("agents/work/sessions/") for f in held)
        report = _purge(home)
        assert report["via"] == "gateway"
        _check_forgotten(home, report)
        reply = _hook(gw, f"quinn again {Q}-after", sender="quinn_tg")  # the gateway still serves
        assert reply["reply"] == f"echo: [quinn_tg] quinn again {Q}-after"
        sent = json.dumps(fake.requests_to("/chat/completions")[-1].body)
        assert P not in sent and "[purged]" in sent  # the model no longer sees P's words either
        assert files_holding(home, P) == []


def test_a_purge_after_the_gateway_stopped_leaves_no_byte_of_the_person(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    home = _home(tmp_path, fake)
    with running_gateway(home) as gw:
        _speak_everywhere(gw)
    assert files_holding(home, P) != []
    report = _purge(home)
    assert report["via"] == "direct"
    _check_forgotten(home, report)
    with running_gateway(home) as gw:  # what the purge left starts and serves
        reply = _hook(gw, f"quinn later {Q}-later", sender="quinn_tg")
        assert reply["reply"] == f"echo: [quinn_tg] quinn later {Q}-later"
    assert files_holding(home, P) == []


def test_the_gateway_journal_forgets_delivered_messages_without_a_restart(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    home = tmp_path / "home"
    write_config(home, fake)
    journal = home / "gateway" / "inbox.jsonl"
    with running_gateway(home) as gw:
        for n in range(3):
            _hook(gw, f"delivered {P} number {n}", sender=None, group=False)
        deadline = time.monotonic() + 10
        while P.encode() in journal.read_bytes() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert P.encode() not in journal.read_bytes()
        assert gw.process.poll() is None  # no restart was needed


def test_the_journal_keeps_pending_messages_and_drops_delivered_ones_past_a_bound(tmp_path: Path) -> None:
    from openclaw_cli.gateway.inbox import COMPACT_AFTER, Inbox

    journal = Inbox(tmp_path / "inbox.jsonl")
    waiting = journal.accept("main", "agent:main:main", "still waiting", None, "2026-11-30T10:00:00.000Z")
    for n in range(COMPACT_AFTER):
        entry = journal.accept("main", "agent:main:main", f"delivered {n}", None, "2026-11-30T10:00:00.000Z")
        journal.done([entry.id])
    text = journal.path.read_text(encoding="utf-8")
    assert "delivered" not in text and "still waiting" in text  # rewritten: the pending one kept
    assert [e.text for e in Inbox(journal.path).pending()] == ["still waiting"]
    journal.done([waiting.id])
    assert journal.path.read_bytes() == b""
    journal.close()
