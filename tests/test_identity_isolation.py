"""Every memory belongs to a person (issue 20): the isolation matrix.

Three persons talk to one real gateway through every entry point (OpenAI-compatible `/v1` with `user`,
`/hooks/agent` from a DM and from a group, WebSocket `chat.send` with `userId`, `openclaw chat`, `session
append --sender` then extraction by the model, the agent's `memory_add` tool), each leaving facts that
carry a token naming their owner (`zq-alice-v1`). Then every reader is asked on behalf of each person
(`memory search --user`, `memory inject --user`, the `memory_search` tool, `/memory` in `openclaw chat`,
gateway `memory.search` with `userId`, and the system prompt the model is sent): no reader ever shows a
token of another person, and each person finds their own.

The owner, olga, writes nothing through the entry points: her words are the workspace's MEMORY.md and
today's daily log (issue 47). Every reader above, asked as the three others and as nobody, shows none of
them; olga finds them through every reader in her own direct sessions, and in a group or a session she
shares with another person nothing of them reaches the model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests import encrypted_homes
from tests.conftest import run_cli
from tests.fake_openai import FAKE_API_KEY, FakeOpenAI, module_fake  # noqa: F401 (fixture)
from tests.gateway_helpers import Gateway, http_json, request, running_gateway, write_config

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

PERSONS = ("alice", "bob", "carol")
OWNER = "olga"
PEERS = {"alice": "100", "bob": "200", "carol": "300"}  # each person's id on telegram and discord
OWNER_PEER = "900"
LINKS = {
    person: [f"openai:{person}", f"telegram:{peer}", f"discord:d{peer}", f"webchat:{person}"]
    for person, peer in {**PEERS, OWNER: OWNER_PEER}.items()
}
TOKEN = re.compile(r"zq-(alice|bob|carol|olga)-(\w+)")
# The owner's notes: a durable MEMORY.md line and a line of today's (and yesterday's) daily log. Their words
# (and those of the turns about them) are none of QUERY's, which the tests of the others' facts search.
OWNER_NOTES = {
    "MEMORY.md": "- olga's home alarm pin is zq-olga-memorymd, the spare key is under the mat\n",
    "log": "- olga's daily log: the alarm installer visits at noon, zq-olga-dailylog\n",
}
QUERY = "passport locker bike library seat gym badge wifi code number combination card"
# What each entry point leaves: a different fact each, so that no two merge as duplicates.
FACTS = {
    "v1": "my passport number is {token}",
    "dm": "my locker code is {token}",
    "group": "my bike lock combination is {token}",
    "ws": "my wifi password is {token}",
    "chat": "my library card is {token}",
    "append": "my seat number is {token}",
    "tool": "my gym badge is {token}",
}


def token(person: str, entry: str) -> str:
    return f"zq-{person}-{entry}"


def fact(person: str, entry: str) -> str:
    return FACTS[entry].format(token=token(person, entry))


def owners(text: str) -> set[str]:
    """The persons whose tokens `text` holds."""
    return {match.group(1) for match in TOKEN.finditer(text)}


def _last(messages: list[dict[str, Any]], role: str) -> str:
    found = [str(m.get("content") or "") for m in messages if m.get("role") == role]
    return found[-1] if found else ""


def fake_model(body: dict[str, Any]) -> Any:
    """The remote model: extraction answers with the speaker's facts, TOOLADD/TOOLSEARCH call the tools,
    a tool result is read back, anything else is acknowledged."""
    messages = body.get("messages", [])
    system = _last(messages, "system")
    if system.startswith("You extract long-term memories"):
        return json.dumps({"memories": _extracted(system, _last(messages, "user"))})
    if system.startswith("Two memories"):
        return json.dumps({"verdict": "different"})
    if messages and messages[-1].get("role") == "tool":
        return "found: " + str(messages[-1].get("content"))
    said = _last(messages, "user")
    for word, tool, arguments in (
        ("TOOLADD ", "memory_add", lambda rest: {"text": rest, "category": "profile"}),
        ("TOOLSEARCH", "memory_search", lambda rest: {"query": QUERY, "limit": 10}),
        ("TOOLNOTES", "memory_search", lambda rest: {"query": NOTES_QUERY, "limit": 10}),
        ("TOOLSESSIONS", "session_search", lambda rest: {"query": QUERY, "limit": 10}),
    ):
        if said.startswith(word):
            call = {"name": tool, "arguments": json.dumps(arguments(said[len(word) :]))}
            return {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "call-1", "type": "function", "function": call}],
            }
    return "noted"


def _extracted(system: str, transcript: str) -> list[dict[str, Any]]:
    wanted = re.search(r"the speaker '([^']+)' only", system)
    items = []
    for line in transcript.splitlines():
        match = re.match(r"\[(\d+)\] \S+ user(?: \(([^)]+)\))?: (.*)$", line)
        if match and "zq-" in match.group(3) and (wanted is None or match.group(2) == wanted.group(1)):
            items.append({"category": "profile", "l0": match.group(3), "messages": [int(match.group(1))]})
    return items


@pytest.fixture(scope="module", params=encrypted_homes.KINDS)
def gateway(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeOpenAI, request: pytest.FixtureRequest
) -> Iterator[Gateway]:
    """The matrix's gateway on a plain home, and on an encrypted one whose workspace notes are sealed
    too (security.encryptWorkspace): every reader of them goes through the sealed-file reader."""
    encrypted = request.param == "encrypted"
    home = encrypted_homes.prepare(tmp_path_factory.mktemp("isolation") / "home", request.param)
    write_config(
        home,
        fake,
        owner=OWNER,
        session={"dmScope": "per-channel-peer", "identityLinks": LINKS, "reset": {"atHour": None}},
        # No relevance floor: every reader returns all it may, so that whatever could leak is there to see
        # (the 12-word QUERY's best relevance sits near the default floor, and moves with the store's size).
        memory={
            "extraction": {"enabled": False},
            "search": {f"{k}Floor": 0.0 for k in ("relevance", "sentence")},
        },
        **({"security": {"encryptWorkspace": True}} if encrypted else {}),
    )
    _write_owner_notes(home)
    if encrypted:
        encrypted_homes.seal_workspace(home)
    fake.respond_with(fake_model)
    with running_gateway(home) as running:
        _write_through_every_entry_point(running)
        yield running


def _write_owner_notes(home: Path) -> None:
    workspace = home / "agents" / "main" / "workspace"
    (workspace / "memory").mkdir(parents=True)
    (workspace / "MEMORY.md").write_text(OWNER_NOTES["MEMORY.md"], encoding="utf-8")
    today = date.today()  # the gateway's local day: the prompt loads today's and yesterday's logs
    for day in (today - timedelta(days=1), today):
        (workspace / "memory" / f"{day.isoformat()}.md").write_text(OWNER_NOTES["log"], encoding="utf-8")


def _v1(gateway: Gateway, user: str | None, text: str) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "main", "messages": [{"role": "user", "content": text}]}
    if user is not None:
        body["user"] = user
    status, reply = http_json(f"{gateway.http}/v1/chat/completions", body, token=gateway.token)
    assert status == 200, reply
    return dict(reply)


def _hook(gateway: Gateway, **body: Any) -> dict[str, Any]:
    status, reply = http_json(f"{gateway.http}/hooks/agent", body, token=gateway.token)
    assert status == 200 and reply["status"] == "ok", reply
    return dict(reply)


def _cli(gateway: Gateway, *args: str, stdin: str | None = None) -> Any:
    done = run_cli(
        gateway.home,
        *args,
        input=stdin,
        env={"OPENCLAW_GATEWAY_TOKEN": gateway.token, "OPENAI_API_KEY": FAKE_API_KEY},
    )
    assert done.returncode == 0, (args, done.stderr)
    return done


def _write_through_every_entry_point(gateway: Gateway) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=f"{gateway.http}/v1", api_key=gateway.token)
    for person, peer in PEERS.items():
        client.chat.completions.create(
            model="main",
            user=person,
            messages=[{"role": "user", "content": f"remember that {fact(person, 'v1')}"}],
        )
        _hook(
            gateway,
            channel="telegram",
            peer={"kind": "direct", "id": peer},
            text=f"remember that {fact(person, 'dm')}",
        )
        _hook(
            gateway,
            channel="discord",
            peer={"kind": "group", "id": "g1"},
            sender=f"d{peer}",
            text=f"remember that {fact(person, 'group')}",
        )
        with gateway.ws() as conn:
            params = {
                "sessionKey": "agent:main:webchat:default:group:room",
                "userId": person,
                "text": f"remember that {fact(person, 'ws')}",
            }
            from tests.gateway_helpers import send_all

            acks, events = send_all(conn, [params.pop("text")], params.pop("sessionKey"), **params)
            assert acks[0]["openclaw"]["person"] == person
            assert events[-1]["state"] == "final", events
        said = _cli(gateway, "chat", "--user", person, stdin=f"remember that {fact(person, 'chat')}\n")
        assert "gateway" in said.stdout + said.stderr  # the chat went through the running gateway
        _cli(
            gateway,
            "session",
            "append",
            "agent:main:telegram:default:group:g2",
            "--sender",
            peer,
            fact(person, "append"),
        )
        _v1(gateway, person, f"TOOLADD {fact(person, 'tool')}")
    _cli(gateway, "memory", "extract", "--session", "agent:main:telegram:default:group:g2")


def _search_results(gateway: Gateway, person: str) -> list[dict[str, Any]]:
    done = _cli(gateway, "memory", "search", QUERY, "--user", person, "--all", "-k", "100", "--json")
    return list(json.loads(done.stdout)["results"])


@pytest.mark.parametrize("person", PERSONS)
def test_memory_search_user_shows_only_and_all_of_that_persons_memories(
    gateway: Gateway, person: str
) -> None:
    results = _search_results(gateway, person)
    assert {r["userId"] for r in results} == {person}
    found = owners(" ".join(r["l0"] for r in results))
    assert found == {person}
    tokens = {m.group(0) for r in results for m in TOKEN.finditer(r["l0"])}
    assert tokens == {token(person, entry) for entry in FACTS}, "each entry point wrote for its person"


@pytest.mark.parametrize("person", PERSONS)
def test_memory_inject_shows_no_other_persons_memory(gateway: Gateway, person: str) -> None:
    done = _cli(gateway, "memory", "inject", "--user", person, "--query", QUERY, "--json")
    block = json.loads(done.stdout)["text"]
    assert owners(block) == {person}, block


@pytest.mark.parametrize("person", PERSONS)
def test_gateway_memory_search_for_a_person(gateway: Gateway, person: str) -> None:
    with gateway.ws() as conn:
        reply = request(conn, "memory.search", {"query": QUERY, "k": 100, "userId": person})
    assert reply["ok"], reply
    text = " ".join(r["l0"] for r in reply["payload"]["results"])
    assert owners(text) == {person}
    assert len(reply["payload"]["results"]) >= len(FACTS)


@pytest.mark.parametrize("person", PERSONS)
def test_the_memory_search_tool_and_the_system_prompt_hold_only_the_askers_memories(
    gateway: Gateway, person: str, fake: FakeOpenAI
) -> None:
    before = len(fake.requests)
    reply = _v1(gateway, person, "TOOLSEARCH what do you know about me?")
    answer = reply["choices"][0]["message"]["content"]
    assert answer.startswith("found: ") and owners(answer) == {person}, answer
    # Every request the model was sent for this turn: the memory block and the history are the asker's.
    sent = [r.body for r in fake.requests[before:] if r.path.endswith("/chat/completions")]
    assert len(sent) == 2  # the tool call, then the answer
    for body in sent:
        assert owners(json.dumps(body["messages"], ensure_ascii=False)) <= {person}


@pytest.mark.parametrize("person", PERSONS)
def test_slash_memory_in_chat_shows_only_the_persons_memories(gateway: Gateway, person: str) -> None:
    done = _cli(gateway, "chat", "--user", person, stdin=f"/memory {QUERY}\n")
    assert owners(done.stdout) == {person}, done.stdout


def _turn(
    gateway: Gateway, fake: FakeOpenAI, entry: str, person: str | None, text: str
) -> list[dict[str, Any]]:
    """One turn of `person` (None: nobody known) through `entry`; every request the model was sent for it."""
    before = len(fake.requests)
    peer = {**PEERS, OWNER: OWNER_PEER}.get(person or "")
    if entry == "v1":
        _v1(gateway, person, text)
    elif entry == "dm":
        _hook(gateway, channel="telegram", peer={"kind": "direct", "id": peer}, text=text)
    elif entry == "group":
        _hook(gateway, channel="discord", peer={"kind": "group", "id": "g9"}, sender=f"d{peer}", text=text)
    else:
        from tests.gateway_helpers import send_all

        key = "agent:main:main" if entry == "main" else "agent:main:webchat:default:group:notes-room"
        # The owner is reached by an address she is known by: her bare name is refused (claims.py).
        user = f"webchat:{person}" if person == OWNER else person
        with gateway.ws() as conn:
            _acks, events = send_all(conn, [text], key, **({"userId": user} if user else {}))
        assert events[-1]["state"] == "final", events
    return [r.body for r in fake.requests[before:] if r.path.endswith("/chat/completions")]


@pytest.mark.parametrize("entry", ["v1", "dm", "group", "ws"])
def test_a_persons_turn_through_each_entry_point_is_sent_none_of_the_others_memories(
    gateway: Gateway, fake: FakeOpenAI, entry: str
) -> None:
    """The case of the issue: bob asks what his passport number is; alice's must not reach the model, nor
    the owner's notes (issue 47)."""
    for person in PEERS:
        text = f"what is my passport number and locker code? asking as {person}"
        [body] = _turn(gateway, fake, entry, person, text)
        system = body["messages"][0]["content"]
        assert owners(system) == {person}, system  # their own memories are injected, nobody else's


# -- the owner's workspace notes (issue 47) ------------------------------------------------------------


def _note_tokens(text: str) -> set[str]:
    return {m.group(0) for m in TOKEN.finditer(text) if m.group(1) == OWNER}


BOTH_NOTES = {"zq-olga-memorymd", "zq-olga-dailylog"}
NOTES_QUERY = "olga home alarm pin spare key installer daily log"


def test_nobody_known_gets_none_of_the_owners_notes(gateway: Gateway, fake: FakeOpenAI) -> None:
    """An anonymous /v1 call: its system prompt, and the memory_search and session_search tools."""
    for text in (
        f"what is the alarm pin? {NOTES_QUERY}",
        "TOOLNOTES what do you know?",
        "TOOLSESSIONS what?",
    ):
        sent = _turn(gateway, fake, "v1", None, text)
        assert sent and all(not _note_tokens(json.dumps(b["messages"], ensure_ascii=False)) for b in sent), (
            sent
        )


@pytest.mark.parametrize("person", PERSONS)
def test_other_people_get_none_of_the_owners_notes_from_any_reader(gateway: Gateway, person: str) -> None:
    said = " ".join(
        [
            _cli(
                gateway, "memory", "search", NOTES_QUERY, "--user", person, "--all", "-k", "100", "--json"
            ).stdout,
            _cli(gateway, "memory", "inject", "--user", person, "--query", NOTES_QUERY, "--json").stdout,
            _cli(gateway, "chat", "--user", person, stdin=f"/memory {NOTES_QUERY}\n").stdout,
            json.dumps(_v1(gateway, person, "TOOLNOTES what do you know about olga?")),
        ]
    )
    with gateway.ws() as conn:
        for method in ("memory.search", "memory.inject"):
            reply = request(conn, method, {"query": NOTES_QUERY, "k": 100, "userId": person})
            assert reply["ok"], reply
            said += json.dumps(reply["payload"])
    status, reply = http_json(
        f"{gateway.http}/rpc/memory.search",
        {"query": NOTES_QUERY, "k": 100, "userId": person},
        token=gateway.token,
    )
    assert status == 200, reply
    said += json.dumps(reply)
    assert not _note_tokens(said), said


@pytest.mark.parametrize("entry", ["v1", "dm"])
def test_the_owner_in_her_own_direct_session_gets_her_notes(
    gateway: Gateway, fake: FakeOpenAI, entry: str
) -> None:
    [body] = _turn(gateway, fake, entry, OWNER, f"what is my alarm pin? {NOTES_QUERY}")
    assert _note_tokens(body["messages"][0]["content"]) == BOTH_NOTES
    sent = _turn(gateway, fake, entry, OWNER, "TOOLNOTES what do you know about me?")
    assert "zq-olga-memorymd" in json.dumps(sent[-1]["messages"][-1], ensure_ascii=False)


def test_the_owner_finds_her_notes_through_every_reader(gateway: Gateway) -> None:
    found = _cli(gateway, "memory", "search", NOTES_QUERY, "--user", OWNER, "--all", "-k", "100", "--json")
    assert _note_tokens(found.stdout) == BOTH_NOTES
    # The CLI speaks as the owner without --user (her bare name is refused as a claim, claims.py).
    injected = _cli(gateway, "memory", "inject", "--query", NOTES_QUERY, "--json")
    assert _note_tokens(injected.stdout) == BOTH_NOTES
    chat = _cli(gateway, "chat", stdin=f"/memory {NOTES_QUERY}\n")
    assert _note_tokens(chat.stdout), chat.stdout
    with gateway.ws() as conn:
        for who in ({"asOwner": True}, {"userId": f"telegram:{OWNER_PEER}"}):
            reply = request(conn, "memory.search", {"query": NOTES_QUERY, "k": 100, **who})
            assert reply["ok"] and _note_tokens(json.dumps(reply["payload"])) == BOTH_NOTES, reply


@pytest.mark.parametrize("entry", ["group", "ws"])
def test_the_owner_in_a_group_gets_none_of_her_notes(gateway: Gateway, fake: FakeOpenAI, entry: str) -> None:
    """Other people read the replies: neither the files nor their chunks reach the model, by injection
    or by the memory_search tool."""
    for text in (f"what is my alarm pin? {NOTES_QUERY}", "TOOLNOTES what do you know about me?"):
        sent = _turn(gateway, fake, entry, OWNER, text)
        assert sent and all(not _note_tokens(json.dumps(b["messages"], ensure_ascii=False)) for b in sent), (
            sent
        )


def test_the_owner_in_a_session_she_shares_with_another_person_gets_none_of_her_notes(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """Under dmScope main-shared-by-everyone the main session is everyone's: once another person has spoken
    there, the owner's turns in it get neither MEMORY.md nor the logs nor their chunks. Her first turn,
    alone in it, still does."""
    home = tmp_path / "home"
    write_config(
        home,
        fake,
        owner=OWNER,
        session={"dmScope": "main-shared-by-everyone", "identityLinks": LINKS, "reset": {"atHour": None}},
        memory={"extraction": {"enabled": False}},
    )
    _write_owner_notes(home)
    fake.respond_with(fake_model)
    with running_gateway(home) as shared:
        [alone] = _turn(shared, fake, "main", OWNER, f"what is my alarm pin? {NOTES_QUERY}")
        assert _note_tokens(alone["messages"][0]["content"]) == BOTH_NOTES
        _turn(shared, fake, "main", "alice", "alice was here too")
        sent = _turn(shared, fake, "main", OWNER, f"what is my alarm pin? {NOTES_QUERY}")
    assert sent and not _note_tokens(json.dumps(sent[0]["messages"], ensure_ascii=False)), sent


def test_an_anonymous_v1_call_writes_no_memory_and_says_why(gateway: Gateway) -> None:
    reply = _v1(gateway, None, "remember that my anonymous secret is zq-nobody-anon")
    assert reply["openclaw"]["person"] is None
    assert "no identity" in reply["openclaw"]["memory"]
    done = _cli(gateway, "memory", "search", "anonymous secret", "--all", "--json")
    assert all("zq-nobody" not in r["l0"] for r in json.loads(done.stdout)["results"])


def test_an_anonymous_v1_call_is_the_owners_where_the_config_says_so(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    home = tmp_path / "home"
    write_config(home, fake, owner="alice", gateway={"anonymousIsOwner": True})
    with running_gateway(home) as gateway:
        reply = _v1(gateway, None, "remember that my owner secret is zq-alice-owner")
        assert reply["openclaw"] == {"person": "alice", "owner": True, "memory": "per person"}
        results = _search_results(gateway, "alice")
    assert any("zq-alice-owner" in r["l0"] for r in results)


# -- session transcripts (issue 24): a person finds only the sessions they took part in --------------


PRIVATE = ("dm", "v1", "tool")  # facts said only in the person's own direct sessions


def private_owners(text: str) -> set[str]:
    """The persons whose direct-session-only tokens `text` holds."""
    return {m.group(1) for m in TOKEN.finditer(text) if m.group(2) in PRIVATE}


def _only_theirs(person: str, hits: list[dict[str, Any]]) -> None:
    """Hits (and their context) come from sessions `person` took part in: their own direct sessions, and
    the groups and the main session all three wrote in (where others' words are theirs to see); no
    token said only in another person's direct session; and their own DM fact is found."""
    for hit in hits:
        for turn in [hit, *(side for side in (hit.get("context") or {}).values() if side)]:
            if ":direct:" in turn["sessionKey"]:
                assert turn["sessionKey"].endswith(f":{person}"), turn
            assert private_owners(turn["text"]) <= {person}, turn
    assert token(person, "dm") in " ".join(hit["text"] for hit in hits)


@pytest.mark.parametrize("person", PERSONS)
def test_session_search_user_shows_only_sessions_the_person_took_part_in(
    gateway: Gateway, person: str
) -> None:
    done = _cli(gateway, "-v", "session", "search", QUERY, "--user", person, "--all", "-k", "100", "--json")
    assert "through the gateway" in done.stderr
    _only_theirs(person, json.loads(done.stdout)["results"])
    # The owner's direct sessions (where her notes were read back to her) are not theirs to search.
    notes = _cli(gateway, "session", "search", NOTES_QUERY, "--user", person, "--all", "-k", "100", "--json")
    assert not _note_tokens(notes.stdout), notes.stdout


@pytest.mark.parametrize("person", PERSONS)
def test_gateway_session_search_for_a_person(gateway: Gateway, person: str) -> None:
    with gateway.ws() as conn:
        reply = request(conn, "session.search", {"query": QUERY, "k": 100, "all": True, "userId": person})
    assert reply["ok"], reply
    _only_theirs(person, reply["payload"]["results"])


@pytest.mark.parametrize("person", PERSONS)
def test_the_session_search_tool_searches_as_the_person_of_the_turn(gateway: Gateway, person: str) -> None:
    reply = _v1(gateway, person, "TOOLSESSIONS what did I tell you?")
    answer = reply["choices"][0]["message"]["content"]
    assert answer.startswith("found: "), answer
    hits = json.loads(answer.removeprefix("found: "))["results"]
    for hit in hits:
        assert private_owners(hit["text"]) <= {person}, hit
        assert ":direct:" not in hit["sessionKey"] or hit["sessionKey"].endswith(f":{person}"), hit
    assert any(owners(hit["text"]) == {person} for hit in hits), hits


@pytest.mark.parametrize("person", PERSONS)
def test_slash_search_in_chat_shows_only_the_persons_direct_sessions(gateway: Gateway, person: str) -> None:
    done = _cli(gateway, "chat", "--user", person, stdin="/search my locker code\n")
    assert private_owners(done.stdout) == {person}, done.stdout


def test_the_owners_notes_are_on_disk_only_in_her_workspace_files(gateway: Gateway) -> None:
    """Plain: MEMORY.md and the logs hold her words (and the index that made them searchable). Encrypted
    (encryptWorkspace on): no file holds them on disk (files_holding checks), and decrypted they are
    in the same files."""
    held = encrypted_homes.files_holding(gateway.home, b"zq-olga-memorymd")
    assert "agents/main/workspace/MEMORY.md" in held
    assert all(f.startswith("agents/main/") for f in held), held
