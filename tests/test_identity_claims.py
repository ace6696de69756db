"""Claimed identities (issue 47): the isolation matrix's cases where a caller names who speaks.

One real gateway (dmScope main, the default; owner alice, linked to telegram:100 and webchat:me) and the
fake model. A caller holding the token tries:
- the owner's name at every entry point that takes a person id (`/v1` `user`, chat.send `userId`,
  `/hooks/agent` `peer` and `sender`, memory.search/memory.inject/memory.add/session.search `userId` over
  the WebSocket and `POST /rpc/METHOD`, `openclaw chat --user`): each is refused alike, in one line, and
  nothing reaches the model (so MEMORY.md never does);
- a DM whose sender is not its peer (hooks, chat.send, `session append`, `openclaw chat`): refused, so nobody
  speaks in, or is sent, another person's DM history;
- two non-owner DMs under dmScope main: each gets its own per-channel-peer session and neither prompt holds
  the other's words, the owner keeps the main session, and `doctor` and `gateway status` say so.
Then every transcript reader (`session search --user`, gateway session.search, the session_search tool)
is asked for the people involved: nobody gets a line somebody else said in their own sessions.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.core.errors import InvalidInput
from tests.conftest import run_cli
from tests.fake_openai import FAKE_API_KEY, FakeOpenAI, module_fake  # noqa: F401 (fixture)
from tests.gateway_helpers import Gateway, http_json, request, running_gateway, send_all, write_config

OWNER = "alice"
LINKS = {
    "alice": ["telegram:100", "webchat:me"],
    "bob": ["telegram:200", "telegram:201"],  # one person behind two telegram accounts
}
MEMORY_MD = "the owner's curated notes: zq-owner-memorymd"
BOB_DM = "my PIN is zq-bob-pin"
CAROL_DM = "my locker code is zq-carol-locker"
OWNER_MAIN = "the owner said zq-owner-main"
SECRETS = ("zq-owner-memorymd", "zq-bob-pin", "zq-carol-locker", "zq-owner-main")
BOB_KEY = "agent:main:telegram:direct:bob"  # bob's DMs, kept out of the owner's main session
CAROL_KEY = "agent:main:telegram:direct:300"
QUERY = "PIN locker code owner said"


def fake_model(body: dict[str, Any]) -> Any:
    """Echo the user's last words; TOOLSESSIONS calls session_search, whose result is read back."""
    messages = body.get("messages", [])
    if messages and messages[-1].get("role") == "tool":
        return "found: " + str(messages[-1].get("content"))
    said = next((str(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
    if said.startswith("TOOLSESSIONS"):
        call = {"name": "session_search", "arguments": json.dumps({"query": QUERY, "limit": 10})}
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call-1", "type": "function", "function": call}],
        }
    return "echo: " + said


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory, fake: FakeOpenAI) -> Iterator[Gateway]:
    home = tmp_path_factory.mktemp("claims") / "home"
    write_config(
        home,
        fake,
        owner=OWNER,
        session={"identityLinks": LINKS, "reset": {"atHour": None}},
        memory={"extraction": {"enabled": False}},
    )
    workspace = home / "agents" / "main" / "workspace"
    workspace.mkdir(parents=True)
    (workspace / "MEMORY.md").write_text(MEMORY_MD + "\n", encoding="utf-8")
    fake.respond_with(fake_model)
    with running_gateway(home) as running:
        _hook(running, peer={"kind": "direct", "id": "100"}, text=OWNER_MAIN)
        _hook(running, peer={"kind": "direct", "id": "200"}, text=BOB_DM)
        _hook(running, peer={"kind": "direct", "id": "300"}, text=CAROL_DM)
        yield running


def _hook(gateway: Gateway, **body: Any) -> dict[str, Any]:
    status, reply = http_json(
        f"{gateway.http}/hooks/agent", {"channel": "telegram", **body}, token=gateway.token
    )
    assert status == 200 and reply["status"] == "ok", reply
    return dict(reply)


def _cli(gateway: Gateway, *args: str, stdin: str | None = None) -> Any:
    env = {"OPENCLAW_GATEWAY_TOKEN": gateway.token, "OPENAI_API_KEY": FAKE_API_KEY}
    return run_cli(gateway.home, *args, input=stdin, env=env)


def _model_calls(fake: FakeOpenAI) -> int:
    return len(fake.requests_to("/chat/completions"))


def _sessions(gateway: Gateway) -> dict[str, Any]:
    index = gateway.home / "agents" / "main" / "sessions" / "sessions.json"
    return dict(json.loads(index.read_text())["sessions"])


def _messages(gateway: Gateway, key: str) -> list[dict[str, Any]]:
    with gateway.ws() as conn:
        reply = request(conn, "chat.history", {"sessionKey": key, "limit": 1000})
    assert reply["ok"], reply
    return list(reply["payload"]["messages"])


def _secrets(text: str) -> set[str]:
    return {secret for secret in SECRETS if secret in text}


def _one_line(message: str) -> None:
    assert message and "\n" not in message.strip(), message


# -- the owner's name, at every entry point that takes a person id -----------------------------------


def _ws_refusal(gateway: Gateway, method: str, params: dict[str, Any]) -> str:
    with gateway.ws() as conn:
        reply = request(conn, method, params)
    assert not reply["ok"] and reply["error"]["code"] == "INVALID_PARAMS", reply
    return str(reply["error"]["message"])


def _rpc_refusal(gateway: Gateway, method: str, params: dict[str, Any]) -> str:
    status, reply = http_json(f"{gateway.http}/rpc/{method}", params, token=gateway.token)
    assert status == 400 and not reply["ok"], reply
    return str(reply["error"]["message"])


def _http_refusal(gateway: Gateway, path: str, body: dict[str, Any]) -> str:
    status, reply = http_json(f"{gateway.http}{path}", body, token=gateway.token)
    assert status == 400, reply
    return str(reply["error"]["message"])


def _cli_refusal(gateway: Gateway, *args: str, stdin: str | None = None) -> str:
    done = _cli(gateway, *args, stdin=stdin)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "echo:" not in done.stdout  # no turn ran
    return done.stderr


V1 = {"model": "main", "messages": [{"role": "user", "content": "what is in MEMORY.md?"}]}
OWNER_NAME_CASES: dict[str, Any] = {
    "v1-user": lambda gw, name: _http_refusal(gw, "/v1/chat/completions", {**V1, "user": name}),
    "chat.send-userId": lambda gw, name: _ws_refusal(gw, "chat.send", {"text": "hi", "userId": name}),
    "chat.send-userId-dm-key": lambda gw, name: _ws_refusal(
        gw, "chat.send", {"text": "hi", "userId": name, "sessionKey": "agent:main:webchat:direct:mallory"}
    ),
    "hooks-direct-peer": lambda gw, name: _http_refusal(
        gw, "/hooks/agent", {"channel": "telegram", "peer": {"kind": "direct", "id": name}, "text": "hi"}
    ),
    "hooks-group-sender": lambda gw, name: _http_refusal(
        gw,
        "/hooks/agent",
        {"channel": "telegram", "peer": {"kind": "group", "id": "g1"}, "sender": name, "text": "hi"},
    ),
    "ws-memory.search": lambda gw, name: _ws_refusal(gw, "memory.search", {"query": "notes", "userId": name}),
    "ws-memory.inject": lambda gw, name: _ws_refusal(gw, "memory.inject", {"query": "notes", "userId": name}),
    "ws-memory.add": lambda gw, name: _ws_refusal(
        gw, "memory.add", {"text": "I am the owner", "userId": name}
    ),
    "ws-session.search": lambda gw, name: _ws_refusal(gw, "session.search", {"query": QUERY, "userId": name}),
    "rpc-memory.search": lambda gw, name: _rpc_refusal(
        gw, "memory.search", {"query": "notes", "userId": name}
    ),
    "rpc-memory.inject": lambda gw, name: _rpc_refusal(
        gw, "memory.inject", {"query": "notes", "userId": name}
    ),
    "rpc-session.search": lambda gw, name: _rpc_refusal(
        gw, "session.search", {"query": QUERY, "userId": name}
    ),
    "chat-user": lambda gw, name: _cli_refusal(gw, "chat", "--user", name, stdin="what is in MEMORY.md?\n"),
}


@pytest.mark.parametrize("spelling", ["alice", "ALICE", " Alice "])
@pytest.mark.parametrize("entry", list(OWNER_NAME_CASES))
def test_the_owners_name_is_refused_at_every_entry_point_alike(
    gateway: Gateway, fake: FakeOpenAI, entry: str, spelling: str
) -> None:
    before, calls = _sessions(gateway), _model_calls(fake)
    message = OWNER_NAME_CASES[entry](gateway, spelling)
    assert "is the owner's name" in message, message
    _one_line(message)
    assert _sessions(gateway) == before  # nothing stored, no session started
    assert _model_calls(fake) == calls  # so the model was never sent MEMORY.md


def test_memory_inject_user_in_process_refuses_the_owners_name_as_the_gateway_does(gateway: Gateway) -> None:
    done = _cli(gateway, "memory", "inject", "--local", "--user", "Alice", "--query", "notes")
    assert done.returncode == 1 and "is the owner's name" in done.stderr, done.stderr
    _one_line(done.stderr)


def test_as_owner_and_user_id_together_are_refused(gateway: Gateway) -> None:
    params = {"query": "notes", "userId": "bob", "asOwner": True}
    assert "not both" in _ws_refusal(gateway, "memory.search", params)


def test_an_address_linked_to_the_owner_is_the_owner(gateway: Gateway, fake: FakeOpenAI) -> None:
    """The owner is reached through an address the config gives them, at the WebSocket as at /v1."""
    calls = _model_calls(fake)
    with gateway.ws() as conn:
        acks, events = send_all(conn, ["what do my notes say?"], "agent:main:main", userId="webchat:me")
    assert acks[0]["openclaw"] == {"person": "alice", "owner": True, "memory": "per person"}
    assert acks[0]["sessionKey"] == "agent:main:main" and "rerouted" not in acks[0]
    assert events[-1]["state"] == "final"
    [body] = [r.body for r in fake.requests_to("/chat/completions")[calls:]]
    assert "zq-owner-memorymd" in body["messages"][0]["content"]  # the owner's own private session


# -- a direct message's sender is its peer ------------------------------------------------------------


def test_a_hook_dm_whose_sender_is_not_its_peer_is_refused(gateway: Gateway, fake: FakeOpenAI) -> None:
    """The case of the issue: a DM with alice's peer and bob's sender ran in alice's session."""
    before, calls = _sessions(gateway), _model_calls(fake)
    body = {"channel": "telegram", "peer": {"kind": "direct", "id": "100"}, "sender": "200", "text": "hi"}
    message = _http_refusal(gateway, "/hooks/agent", body)
    assert "is not the direct peer" in message and "sender" in message, message
    _one_line(message)
    assert _sessions(gateway) == before and _model_calls(fake) == calls


def test_a_hook_dm_from_an_unknown_sender_to_a_non_owner_peer_is_refused(gateway: Gateway) -> None:
    body = {"channel": "telegram", "peer": {"kind": "direct", "id": "200"}, "sender": "666", "text": "hi"}
    before = _messages(gateway, BOB_KEY)
    assert "is not the direct peer" in _http_refusal(gateway, "/hooks/agent", body)
    assert _messages(gateway, BOB_KEY) == before


def test_a_hook_dm_whose_sender_is_its_peer_after_identity_links_is_accepted(gateway: Gateway) -> None:
    """telegram:201 is bob too: the same person as the peer, so the message is his."""
    reply = _hook(gateway, peer={"kind": "direct", "id": "200"}, sender="201", text="also me, bob")
    assert reply["sessionKey"] == BOB_KEY and reply["openclaw"]["person"] == "bob"


@pytest.mark.parametrize(
    "params",
    [
        {"userId": "mallory"},
        {"userId": "telegram:300"},  # carol, another real person
        {"sender": "666"},
    ],
    ids=["userId-stranger", "userId-other-person", "sender-stranger"],
)
def test_chat_send_into_someone_elses_dm_session_is_refused(
    gateway: Gateway, fake: FakeOpenAI, params: dict[str, Any]
) -> None:
    before, calls = _messages(gateway, BOB_KEY), _model_calls(fake)
    message = _ws_refusal(
        gateway, "chat.send", {"text": "tell me bob's PIN", "sessionKey": BOB_KEY, **params}
    )
    assert "a direct message's sender is its peer" in message, message
    _one_line(message)
    assert _messages(gateway, BOB_KEY) == before and _model_calls(fake) == calls


def test_session_append_into_someone_elses_dm_session_is_refused(gateway: Gateway) -> None:
    before = _messages(gateway, BOB_KEY)
    done = _cli(gateway, "session", "append", BOB_KEY, "--sender", "666", "tell me the PIN")
    assert done.returncode != 0 and "a direct message's sender is its peer" in done.stderr, done.stderr
    _one_line(done.stderr)
    assert _messages(gateway, BOB_KEY) == before


def test_session_append_of_a_non_owner_into_the_main_session_is_refused(gateway: Gateway) -> None:
    before = _messages(gateway, "agent:main:main")
    done = _cli(gateway, "session", "append", "agent:main:main", "--sender", "telegram:300", "hello all")
    assert done.returncode != 0 and "the main session is the owner's" in done.stderr, done.stderr
    assert _messages(gateway, "agent:main:main") == before


def test_chat_as_another_person_in_someone_elses_dm_session_is_refused(gateway: Gateway) -> None:
    before = _messages(gateway, BOB_KEY)
    stderr = _cli_refusal(gateway, "chat", "--user", "mallory", "--session", BOB_KEY, stdin="my PIN?\n")
    assert "a direct message's sender is its peer" in stderr, stderr
    assert _messages(gateway, BOB_KEY) == before


# -- dmScope main with more than one person ----------------------------------------------------------


def test_two_non_owner_dms_under_main_get_their_own_sessions(gateway: Gateway, fake: FakeOpenAI) -> None:
    calls = _model_calls(fake)
    bob = _hook(gateway, peer={"kind": "direct", "id": "200"}, text="what did the others tell you?")
    carol = _hook(gateway, peer={"kind": "direct", "id": "300"}, text="what did the others tell you?")
    assert (bob["sessionKey"], carol["sessionKey"]) == (BOB_KEY, CAROL_KEY)
    assert "main session is the owner's" in bob["rerouted"] and "rerouted" in carol
    bob_body, carol_body = [r.body for r in fake.requests_to("/chat/completions")[calls:]]
    # each prompt holds that person's own DM only: not the other's, not the owner's main session or notes
    assert _secrets(json.dumps(bob_body["messages"])) == {"zq-bob-pin"}
    assert _secrets(json.dumps(carol_body["messages"])) == {"zq-carol-locker"}


def test_the_owner_keeps_the_main_session_under_main(gateway: Gateway, fake: FakeOpenAI) -> None:
    calls = _model_calls(fake)
    reply = _hook(gateway, peer={"kind": "direct", "id": "100"}, text="and what did I say?")
    assert reply["sessionKey"] == "agent:main:main" and "rerouted" not in reply
    [body] = [r.body for r in fake.requests_to("/chat/completions")[calls:]]
    said = json.dumps(body["messages"])
    assert _secrets(said) == {"zq-owner-memorymd", "zq-owner-main"}


def test_chat_send_of_a_non_owner_without_a_key_gets_their_own_session(
    gateway: Gateway, fake: FakeOpenAI
) -> None:
    """chat.send's default key is the main session: another person is given their own, not the owner's."""
    calls = _model_calls(fake)
    with gateway.ws() as conn:
        acks, events = send_all(
            conn, ["hello, I am mallory: zq-mallory-own"], "agent:main:main", userId="mallory"
        )
    assert acks[0]["sessionKey"] == "agent:main:direct:mallory" and "rerouted" in acks[0]
    assert acks[0]["openclaw"]["owner"] is False and events[-1]["state"] == "final"
    [body] = [r.body for r in fake.requests_to("/chat/completions")[calls:]]
    assert _secrets(json.dumps(body["messages"])) == set()


def test_openclaw_chat_as_a_non_owner_gets_their_own_session(gateway: Gateway) -> None:
    done = _cli(gateway, "chat", "--user", "telegram:300", stdin="hello from the terminal\n")
    assert done.returncode == 0, done.stderr
    assert f"session {CAROL_KEY}" in done.stdout + done.stderr
    assert "echo: hello from the terminal" in done.stdout
    assert _secrets(done.stdout) == set()


def test_doctor_and_gateway_status_say_that_dms_were_kept_out_of_the_main_session(gateway: Gateway) -> None:
    state = gateway.home / "gateway" / "dm-reroutes.json"
    assert state.stat().st_mode & 0o777 == 0o600
    assert json.loads(state.read_text())["agents"]["main"]["count"] >= 2
    assert not _secrets(state.read_text()) and "bob" not in state.read_text()  # counts only, no person
    status = _cli(gateway, "gateway", "status", "--json")
    moved = json.loads(status.stdout)["gateway"]["dmReroutes"]["main"]
    assert moved["count"] >= 2 and moved["dmScope"] == "main" and moved["lastAt"]
    text = _cli(gateway, "gateway", "status")
    assert "went to their own session" in text.stdout, text.stdout
    doctor = _cli(gateway, "doctor", "--json")
    [finding] = [f for f in json.loads(doctor.stdout)["findings"] if f["check"] == "session.dmScope"]
    assert finding["severity"] == "warning" and "per-channel-peer" in finding["message"]
    assert "main-shared-by-everyone" in finding["hint"]
    assert "went to their own session" in _cli(gateway, "doctor").stdout


# -- transcripts: taking part in a session never grants another person's lines -----------------------


PEOPLE = {"bob": {"zq-bob-pin"}, "telegram:300": {"zq-carol-locker"}, "mallory": set()}


@pytest.mark.parametrize("person", list(PEOPLE))
def test_session_search_user_finds_only_the_persons_own_lines(gateway: Gateway, person: str) -> None:
    done = _cli(gateway, "session", "search", QUERY, "--user", person, "--all", "-k", "100", "--json")
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)["results"]
    assert _secrets(json.dumps(hits)) == PEOPLE[person], hits


@pytest.mark.parametrize("person", list(PEOPLE))
def test_gateway_session_search_finds_only_the_persons_own_lines(gateway: Gateway, person: str) -> None:
    with gateway.ws() as conn:
        reply = request(conn, "session.search", {"query": QUERY, "k": 100, "all": True, "userId": person})
    assert reply["ok"], reply
    assert _secrets(json.dumps(reply["payload"]["results"])) == PEOPLE[person]


@pytest.mark.parametrize(("peer", "person"), [("200", "bob"), ("300", "telegram:300")])
def test_the_session_search_tool_finds_only_the_persons_own_lines(
    gateway: Gateway, peer: str, person: str
) -> None:
    reply = _hook(gateway, peer={"kind": "direct", "id": peer}, text="TOOLSESSIONS what did I say?")
    assert reply["reply"].startswith("found: "), reply
    assert _secrets(reply["reply"]) == PEOPLE[person], reply["reply"]


# -- the explicit shared scope, and what config accepts -----------------------------------------------


def test_an_unknown_dm_scope_is_refused_naming_the_shared_one(tmp_path: Path) -> None:
    done = run_cli(tmp_path / "home", "config", "set", "session.dmScope", "shared")
    assert done.returncode != 0 and "main-shared-by-everyone" in done.stderr, done.stderr


def test_main_shared_by_everyone_puts_every_dm_in_the_main_session(tmp_path: Path, fake: FakeOpenAI) -> None:
    """The literal shared behaviour is there for whoever asks for it by name, and doctor says what it means."""
    home = tmp_path / "home"
    write_config(
        home,
        fake,
        owner=OWNER,
        session={"dmScope": "main-shared-by-everyone", "identityLinks": LINKS, "reset": {"atHour": None}},
        memory={"extraction": {"enabled": False}},
    )
    with running_gateway(home) as gw:
        first = _hook(gw, peer={"kind": "direct", "id": "300"}, text="carol here")
        second = _hook(gw, peer={"kind": "direct", "id": "200"}, text="bob here")
        assert first["sessionKey"] == second["sessionKey"] == "agent:main:main"
        assert "rerouted" not in first and "rerouted" not in second
        with gw.ws() as conn:
            assert request(conn, "status")["payload"]["dmReroutes"] == {}
    doctor = run_cli(home, "doctor", "--json")
    [finding] = [f for f in json.loads(doctor.stdout)["findings"] if f["check"] == "session.dmScope"]
    assert finding["severity"] == "warning" and "sees what the others said" in finding["message"]


# -- the rules themselves (claims.py), without a gateway ---------------------------------------------


def _rules(owner: str | None, scope: str = "main") -> Any:
    from openclaw_cli.identity.persons import IdentityRules

    return IdentityRules(LINKS, owner, dm_scope=scope)


def test_an_owner_configured_as_an_unlinked_address_is_claimed_by_that_address_only() -> None:
    from openclaw_cli.identity.claims import claimed_person

    rules = _rules("telegram:555")
    assert claimed_person("telegram:555", rules, "userId") == "telegram:555"
    assert claimed_person("555", rules, "peer", channel="telegram") == "telegram:555"
    # the same peer id on another channel is another person, and not the owner
    assert claimed_person("555", rules, "user", channel="openai") == "openai:555"


def test_without_an_owner_the_placeholder_default_is_the_owners_name() -> None:
    from openclaw_cli.identity.claims import claimed_person

    for given, channel in (("default", None), ("DEFAULT", "openai")):
        with pytest.raises(InvalidInput, match="is the owner's name"):
            claimed_person(given, _rules(None), "id", channel=channel)


def test_a_name_that_cannot_be_a_session_key_gets_no_session_of_its_own() -> None:
    from openclaw_cli.identity.claims import speaker_session
    from openclaw_cli.identity.persons import Identity
    from openclaw_cli.sessions.keys import parse_key

    with pytest.raises(InvalidInput, match="cannot name a session of its own") as caught:
        speaker_session(_rules(OWNER), parse_key("agent:main:main"), Identity("bob smith"), "userId")
    assert "\n" not in caught.value.message


def test_the_main_session_takes_a_non_owner_only_under_the_shared_scope() -> None:
    from openclaw_cli.identity.claims import speaker_session
    from openclaw_cli.identity.persons import Identity
    from openclaw_cli.sessions.keys import parse_key

    main, bob = parse_key("agent:main:main"), Identity("bob")
    with pytest.raises(InvalidInput, match="the main session is the owner's"):
        speaker_session(_rules(OWNER), main, bob, "--sender", reroute=False)
    shared = speaker_session(_rules(OWNER, "main-shared-by-everyone"), main, bob, "--sender", reroute=False)
    assert (shared.key, shared.rerouted) == (main, False)
