"""Who a message belongs to (openclaw_cli/identity/persons.py): resolution, the owner's private session, memory
written per speaker in shared sessions, and every bad identity refused before anything is stored."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.config.loading import Settings
from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.identity.person_ids import canonical_person, person_of_address
from openclaw_cli.identity.persons import author_of, for_key, identify, owner_id
from openclaw_cli.sessions.keys import parse_key
from openclaw_cli.sessions.store import SessionStore
from tests import agent_helpers
from tests.agent_helpers import ScriptedModel, chat_settings, runtime_for, system_text, turn
from tests.conftest import run_cli
from tests.fake_openai import FakeOpenAI
from tests.gateway_helpers import Gateway, http_json, request, running_gateway, write_config

# The fake model server and the scripted model behind it (agent_helpers).
fake, model = agent_helpers.fake, agent_helpers.model

LINKS = {"alice": ["telegram:100", "discord:987"], "bob": ["telegram:200"]}


def _settings(**values: Any) -> Settings:
    return Settings.model_validate({"session": {"identityLinks": LINKS}, **values})


# -- resolution ---------------------------------------------------------------------------------------


def test_a_linked_address_is_its_person_and_an_unlinked_one_is_channel_and_peer() -> None:
    assert person_of_address("telegram", "100", LINKS) == "alice"
    assert person_of_address("Discord", "987", LINKS) == "alice"  # one person across channels
    assert person_of_address("telegram", "555", LINKS) == "telegram:555"
    assert canonical_person("TELEGRAM:200", LINKS) == "bob"
    assert canonical_person("carol", LINKS) == "carol"


def test_the_owner_is_one_person_across_channels_and_default_when_unset() -> None:
    assert owner_id(_settings()) == "default"
    settings = _settings(owner="alice")
    assert for_key(settings, parse_key("agent:main:telegram:default:direct:100")).owner
    assert for_key(settings, parse_key("agent:main:discord:direct:987")).owner
    assert for_key(settings, parse_key("agent:main:main")).person == "alice"
    assert not for_key(settings, parse_key("agent:main:telegram:direct:200")).owner
    # the owner configured by an address is that address's person
    assert owner_id(_settings(owner="telegram:100")) == "alice"


def test_a_write_naming_nobody_is_the_owners_in_user_scope_and_nobodys_in_agent_scope() -> None:
    # `memory add` without --user (issue 55 moved this rule out of the CLI into identity/).
    settings = _settings(owner="telegram:100")
    assert author_of(None, "user", settings) == "alice"
    assert author_of(None, "agent", settings) is None
    assert author_of("bob", "user", settings) == "bob"
    assert author_of(None, "user", _settings()) == "default"


def test_keys_resolve_to_the_speaker_or_nobody() -> None:
    settings = _settings()
    group = parse_key("agent:main:telegram:default:group:42")
    assert for_key(settings, group, sender="200").person == "bob"
    assert for_key(settings, group).person is None  # a group message without a sender: nobody known
    assert for_key(settings, parse_key("agent:main:direct:alice")).person == "alice"  # per-peer, linked
    assert for_key(settings, group, user="carol").person == "carol"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (123, "must be a string"),
        (["alice"], "must be a string"),
        ("", "is empty"),
        ("x" * 129, "longer than 128"),
        ("bad\nname", "control character"),
    ],
)
def test_a_bad_identity_is_refused_with_one_line(value: Any, message: str) -> None:
    with pytest.raises(InvalidInput, match=message) as caught:
        canonical_person(value, LINKS)
    assert "\n" not in caught.value.message


def test_anonymous_is_nobody_unless_the_config_makes_it_the_owner() -> None:
    assert identify(None, _settings()).person is None
    owned = identify(None, _settings(owner="alice", gateway={"anonymousIsOwner": True}))
    assert (owned.person, owned.owner) == ("alice", True)


# -- the owner's private session, and memory per speaker ----------------------------------------------


def _memory_md(home: Path, text: str) -> None:
    workspace = home / "agents" / "main" / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "MEMORY.md").write_text(text, encoding="utf-8")


@pytest.mark.parametrize("scope", ["main", "per-peer", "per-channel-peer", "per-account-channel-peer"])
def test_memory_md_loads_in_the_owners_dm_under_every_dm_scope_and_never_for_others(
    tmp_path: Path, fake: FakeOpenAI, model: ScriptedModel, scope: str
) -> None:
    from openclaw_cli.sessions.keys import build_key, dm_key

    _memory_md(tmp_path, "the owner's curated notes: mooncake")
    settings = chat_settings(fake.url, owner="alice", session={"dmScope": scope, "identityLinks": LINKS})
    runtime = runtime_for(tmp_path, settings)
    try:
        for peer, expected in (("100", True), ("200", False)):
            key = build_key(dm_key("main", "telegram", "default", peer, dm_scope=scope, identity_links=LINKS))
            turn(runtime, "hello", key, user_id=person_of_address("telegram", peer, LINKS))
            assert ("mooncake" in system_text(model.agent_requests[-1])) is expected, (scope, peer)
    finally:
        runtime.close()


def test_each_speaker_of_a_shared_session_gets_their_own_memories(
    tmp_path: Path, fake: FakeOpenAI, model: ScriptedModel
) -> None:
    """dmScope main puts every DM in one session: extraction still writes each person's facts as theirs."""
    settings = chat_settings(fake.url, session={"identityLinks": LINKS})
    runtime = runtime_for(tmp_path, settings)
    try:
        turn(runtime, "FACT alice keeps bees", user_id="alice")
        turn(runtime, "FACT bob plays the oboe", user_id="bob")
        services = runtime.services("main")
        session_id = services.sessions.current_session_id("agent:main:main")
        assert session_id is not None
        with services.memory_lock:
            services.extraction.flush(session_id, None, None)
        owners = {r.l0: r.user_id for r in services.memory.list_records(limit=50)}
    finally:
        runtime.close()
    assert owners == {"User: alice keeps bees": "alice", "User: bob plays the oboe": "bob"}


def test_an_anonymous_message_is_stored_but_remembered_for_nobody(
    tmp_path: Path, fake: FakeOpenAI, model: ScriptedModel
) -> None:
    runtime = runtime_for(tmp_path, chat_settings(fake.url))
    try:
        result, _ = turn(
            runtime, "remember that my locker is 42", "agent:main:openai:direct:anonymous", user_id=None
        )
        assert runtime.services("main").memory.list_records(limit=10) == []
        stored = SessionStore(runtime.home, "main")
        session_id = stored.current_session_id("agent:main:openai:direct:anonymous")
        assert session_id is not None
        [message] = [m for m in stored.read_messages(session_id).messages if m["role"] == "user"]
        assert message.get("anonymous") is True and "userId" not in message
        assert any("no identity" in notice for notice in result.notices)
    finally:
        runtime.close()


# -- bad input at the gateway: refused, and nothing stored under anyone ------------------------------


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    home = tmp_path_factory.mktemp("identity") / "home"
    server = FakeOpenAI().start()
    write_config(home, server, owner="alice", session={"identityLinks": LINKS, "reset": {"atHour": None}})
    try:
        with running_gateway(home) as running:
            yield running
    finally:
        server.stop()


def _sessions(gateway: Gateway) -> list[str]:
    index = gateway.home / "agents" / "main" / "sessions" / "sessions.json"
    return sorted(json.loads(index.read_text())["sessions"]) if index.exists() else []


@pytest.mark.parametrize(
    ("user", "status", "message"),
    [
        (42, 400, "must be a string"),
        ("u" * 200, 400, "longer than 128"),
        ("alice", 400, "is the owner's name"),
        ("default", 200, ""),  # not the owner's name once an owner is configured
    ],
)
def test_v1_refuses_a_bad_user_and_stores_nothing(
    gateway: Gateway, user: Any, status: int, message: str
) -> None:
    before = _sessions(gateway)
    body = {"model": "main", "user": user, "messages": [{"role": "user", "content": "remember that I hum"}]}
    code, reply = http_json(f"{gateway.http}/v1/chat/completions", body, token=gateway.token)
    assert code == status, reply
    if status != 200:
        assert message in reply["error"]["message"] and "\n" not in reply["error"]["message"]
        assert _sessions(gateway) == before


def test_hooks_refuse_a_sender_that_is_too_long(gateway: Gateway) -> None:
    before = _sessions(gateway)
    body = {"channel": "telegram", "peer": {"kind": "group", "id": "9"}, "sender": "s" * 300, "text": "hi"}
    code, reply = http_json(f"{gateway.http}/hooks/agent", body, token=gateway.token)
    assert code == 400 and "longer than" in reply["error"]["message"]
    assert _sessions(gateway) == before


@pytest.mark.parametrize("user", [7, "", "z" * 129])
def test_chat_send_refuses_a_bad_user_id(gateway: Gateway, user: Any) -> None:
    before = _sessions(gateway)
    with gateway.ws() as conn:
        reply = request(conn, "chat.send", {"sessionKey": "agent:main:main", "text": "hi", "userId": user})
    assert not reply["ok"] and "userId" in reply["error"]["message"]
    assert _sessions(gateway) == before


def test_chat_send_without_user_id_is_the_key_peers_person(gateway: Gateway) -> None:
    with gateway.ws() as conn:
        reply = request(conn, "chat.send", {"sessionKey": "agent:main:discord:direct:987", "text": "hello"})
    assert reply["ok"], reply
    assert reply["payload"]["openclaw"] == {"person": "alice", "owner": True, "memory": "per person"}


def test_a_peer_linked_to_two_persons_is_a_config_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    links = json.dumps({"alice": ["telegram:1"], "bob": ["telegram:1"]})
    done = run_cli(home, "config", "set", "session.identityLinks", links)
    assert done.returncode == 1
    assert "telegram:1 is linked to both 'alice' and 'bob'" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (home / "openclaw.json").exists() or "bob" not in (home / "openclaw.json").read_text()
