"""`openclaw mcp` over stdio (issue 51), with the SDK's own ClientSession against the real command as a
subprocess: initialize, the lists, each tool, each resource, the prompt; bad arguments as one-line tool
errors after which the server keeps serving; two persons on one home who never see each other's memories.

One home and three servers for the module (the owner, alice, bob): each server process is started once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from tests.mcp_helpers import McpClient, stdio_opener

TOOLS = {"memory_search", "memory_add", "memory_forget", "memory_history", "session_search", "memory_note"}
RESOURCES = {"memory://MEMORY.md", "memory://today", "memory://stats"}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("mcp") / "home"
    said = [
        ("agent:main:main", "I finally booked the flights to Lisbon for the conference"),
        ("agent:main:direct:alice", "my cello lesson moved to thursday evenings"),
    ]
    for key, text in said:
        result = run_cli(home, "session", "append", key, "--role", "user", text)
        assert result.returncode == 0, result.stderr
    shared = {"text": "the office wifi network is called Bluebird", "category": "case", "scope": "agent"}
    result = run_cli(home, "memory", "add", "--batch", "-", input=json.dumps(shared) + "\n")
    assert result.returncode == 0, result.stderr
    return home


@pytest.fixture(scope="module")
def owner(home: Path) -> Iterator[McpClient]:
    client = McpClient(stdio_opener(home))
    yield client
    client.close()


@pytest.fixture(scope="module")
def alice(home: Path) -> Iterator[McpClient]:
    client = McpClient(stdio_opener(home, "--user", "alice"))
    yield client
    client.close()


@pytest.fixture(scope="module")
def bob(home: Path) -> Iterator[McpClient]:
    client = McpClient(stdio_opener(home, "--user", "bob"))
    yield client
    client.close()


def _ids(answer: dict[str, Any]) -> list[str]:
    return [hit["id"] for hit in answer["results"]]


def _still_serving(client: McpClient) -> None:
    assert client.ok("memory_search", {"query": "anything at all"})["results"] is not None


# ---------------------------------------------------------------------- the protocol


def test_initialize_names_the_server_and_its_instructions(owner: McpClient) -> None:
    info = owner.initialized.server_info
    assert info.name == "openclaw"
    assert info.version
    assert "memory" in (owner.initialized.instructions or "")


def test_lists_the_tools_with_schemas_and_descriptions(owner: McpClient) -> None:
    tools = {tool.name: tool for tool in owner.run(lambda s: s.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 40
        assert tool.input_schema["type"] == "object"
    search = tools["memory_search"].input_schema
    assert search["required"] == ["query"]
    assert search["properties"]["k"]["maximum"] == 50
    assert set(search["properties"]["sources"]["items"]["enum"]) == {"memory", "sessions"}
    assert tools["memory_add"].input_schema["properties"]["attribute"]
    assert tools["memory_note"].input_schema["properties"]["durable"]["type"] == "boolean"


def test_lists_the_resources_and_the_prompt(owner: McpClient) -> None:
    resources = owner.run(lambda s: s.list_resources()).resources
    assert {str(r.uri) for r in resources} == RESOURCES
    prompts = owner.run(lambda s: s.list_prompts()).prompts
    assert [p.name for p in prompts] == ["recall"]
    got = owner.run(lambda s: s.get_prompt("recall", {"topic": "my travel plans"}))
    text = got.messages[0].content.text
    assert "my travel plans" in text and "memory_search" in text


# ---------------------------------------------------------------------- the tools


def test_add_then_search_finds_it_with_id_relevance_category_and_date(owner: McpClient) -> None:
    added = owner.ok("memory_add", {"text": "prefers oat milk in flat whites", "category": "preference"})
    assert added["action"] == "added" and added["id"].startswith("mem-")
    found = owner.ok("memory_search", {"query": "what milk does he take in coffee", "k": 5})
    hit = next(h for h in found["results"] if h["id"] == added["id"])
    assert hit["text"] == "prefers oat milk in flat whites"
    assert 0 < hit["relevance"] <= 1
    assert hit["category"] == "preference" and hit["date"].startswith("20")
    assert found["person"] == "default"


def test_the_same_fact_again_is_reported_as_known(owner: McpClient) -> None:
    first = owner.ok("memory_add", {"text": "allergic to peanuts", "category": "profile"})
    again = owner.ok("memory_add", {"text": "allergic to peanuts", "category": "profile"})
    assert again["action"] == "duplicate" and again["id"] == first["id"]
    assert "already remembered" in again["said"]


def test_a_profile_attribute_replaces_the_old_value_and_history_keeps_it(owner: McpClient) -> None:
    old = owner.ok("memory_add", {"text": "lives in Porto", "category": "profile", "attribute": "city"})
    new = owner.ok("memory_add", {"text": "lives in Berlin", "category": "profile", "attribute": "city"})
    assert new["action"] in ("merged", "added")
    history = owner.ok("memory_history", {"id": new["id"]})["history"]
    texts = [entry["new"]["text"] for entry in history if entry["new"]] + [
        entry["old"]["text"] for entry in history if entry["old"]
    ]
    assert "lives in Berlin" in texts
    if new["id"] == old["id"]:
        assert "lives in Porto" in texts  # the overwrite kept the old value


def test_categories_keep_only_those(owner: McpClient) -> None:
    owner.ok("memory_add", {"text": "went hiking in the Alps last summer", "category": "event"})
    owner.ok("memory_add", {"text": "likes hiking more than running", "category": "preference"})
    found = owner.ok("memory_search", {"query": "hiking", "categories": ["event"]})
    assert found["results"] and {hit["category"] for hit in found["results"]} == {"event"}


def test_forget_removes_it_and_history_shows_the_delete(owner: McpClient) -> None:
    added = owner.ok("memory_add", {"text": "parks the car on level 3", "category": "event"})
    assert owner.ok("memory_forget", {"id": added["id"]}) == {"deleted": added["id"]}
    assert added["id"] not in _ids(owner.ok("memory_search", {"query": "where is the car parked"}))
    actions = [entry["action"] for entry in owner.ok("memory_history", {"id": added["id"]})["history"]]
    assert actions[0] == "add" and actions[-1] == "delete"


def test_session_search_finds_what_was_said(owner: McpClient) -> None:
    found = owner.ok("session_search", {"query": "flights to Lisbon", "k": 3})
    hit = found["results"][0]
    assert "Lisbon" in hit["text"] and hit["role"] == "user" and hit["source"] == "sessions"
    assert 0 < hit["relevance"] <= 1 and hit["date"] and hit["id"].endswith("#0")


def test_memory_search_over_sessions_too(owner: McpClient) -> None:
    found = owner.ok("memory_search", {"query": "Lisbon flights", "sources": ["memory", "sessions"]})
    assert "sessions" in {hit["source"] for hit in found["results"]}


def test_a_durable_note_goes_to_memory_md_and_is_found_with_path_and_line(owner: McpClient) -> None:
    written = owner.ok("memory_note", {"text": "The staging password rotates every Monday", "durable": True})
    assert written["written"] == "workspace" and written["location"].startswith("MEMORY.md:")
    assert "staging password rotates" in owner.read("memory://MEMORY.md")
    found = owner.ok("memory_search", {"query": "when does the staging password rotate"})
    note = next(hit for hit in found["results"] if hit["category"] == "note")
    assert note["location"] == written["location"]


def test_a_note_goes_to_todays_log(owner: McpClient) -> None:
    written = owner.ok("memory_note", {"text": "deployed v2.3 to staging"})
    assert written["file"].startswith("memory/") and written["file"].endswith(".md")
    assert "deployed v2.3 to staging" in owner.read("memory://today")


def test_stats_count_the_persons_memories(owner: McpClient) -> None:
    owner.ok("memory_add", {"text": "plays the piano on weekends", "category": "preference"})
    stats = json.loads(owner.read("memory://stats"))
    assert stats["person"] == "default" and stats["owner"] is True
    assert stats["memories"] >= 1 and stats["byCategory"]["preference"] >= 1
    assert stats["gateway"] is False


# ---------------------------------------------------------------------- bad arguments


def test_a_missing_query_is_a_tool_error(owner: McpClient) -> None:
    assert "invalid argument query" in owner.error("memory_search", {})
    _still_serving(owner)


def test_k_of_a_million_is_a_tool_error(owner: McpClient) -> None:
    assert "invalid argument k" in owner.error("memory_search", {"query": "coffee", "k": 10**6})
    _still_serving(owner)


def test_k_of_zero_is_a_tool_error(owner: McpClient) -> None:
    assert "invalid argument k" in owner.error("session_search", {"query": "coffee", "k": 0})
    _still_serving(owner)


def test_a_blank_query_is_a_tool_error(owner: McpClient) -> None:
    assert "the query is empty" in owner.error("memory_search", {"query": "   "})
    _still_serving(owner)


def test_an_unknown_id_is_a_tool_error_for_forget(owner: McpClient) -> None:
    assert "no memory with id 'mem-00000000-nope'" in owner.error(
        "memory_forget", {"id": "mem-00000000-nope"}
    )
    _still_serving(owner)


def test_an_unknown_id_is_a_tool_error_for_history(owner: McpClient) -> None:
    assert "no memory with id" in owner.error("memory_history", {"id": "mem-00000000-nope"})
    _still_serving(owner)


def test_an_id_that_is_not_an_id_is_a_tool_error(owner: McpClient) -> None:
    assert "invalid memory id" in owner.error("memory_forget", {"id": "../../etc/passwd"})
    _still_serving(owner)


def test_an_unknown_category_is_a_tool_error(owner: McpClient) -> None:
    assert "invalid argument category" in owner.error("memory_add", {"text": "x y z", "category": "gossip"})
    _still_serving(owner)


def test_an_unknown_source_is_a_tool_error(owner: McpClient) -> None:
    assert "invalid argument sources" in owner.error("memory_search", {"query": "x", "sources": ["web"]})
    _still_serving(owner)


def test_a_nul_in_the_text_is_a_tool_error(owner: McpClient) -> None:
    assert "NUL" in owner.error("memory_add", {"text": "a\x00b"})
    _still_serving(owner)


def test_an_unknown_tool_is_a_tool_error(owner: McpClient) -> None:
    assert "memory_delete_everything" in owner.error("memory_delete_everything", {})
    _still_serving(owner)


def test_an_unknown_resource_is_refused(owner: McpClient) -> None:
    with pytest.raises(Exception, match="memory://secrets"):
        owner.read("memory://secrets")
    _still_serving(owner)


# ---------------------------------------------------------------------- two persons, one home


def test_two_persons_never_see_each_others_memories(alice: McpClient, bob: McpClient) -> None:
    mine = alice.ok("memory_add", {"text": "my locker code is 4711", "category": "profile"})
    theirs = bob.ok("memory_add", {"text": "my locker code is 9042", "category": "profile"})
    seen_by_alice = alice.ok("memory_search", {"query": "locker code", "k": 50})
    seen_by_bob = bob.ok("memory_search", {"query": "locker code", "k": 50})
    assert mine["id"] in _ids(seen_by_alice) and theirs["id"] not in _ids(seen_by_alice)
    assert theirs["id"] in _ids(seen_by_bob) and mine["id"] not in _ids(seen_by_bob)
    assert "4711" not in str(seen_by_bob["results"]) and "9042" not in str(seen_by_alice["results"])


def test_nobody_sees_the_owners_memories(owner: McpClient, bob: McpClient) -> None:
    kept = owner.ok("memory_add", {"text": "the owner's bank is Nordbank", "category": "profile"})
    assert kept["id"] not in _ids(bob.ok("memory_search", {"query": "which bank", "k": 50}))


def test_anothers_id_reads_exactly_as_an_unknown_one(alice: McpClient, bob: McpClient) -> None:
    mine = alice.ok("memory_add", {"text": "my dentist is Dr. Weiss", "category": "profile"})
    unknown = "mem-00000000-0000-7000-8000-000000000000"
    refused = bob.error("memory_forget", {"id": mine["id"]})
    assert refused == bob.error("memory_forget", {"id": unknown}).replace(unknown, mine["id"])
    assert "no memory with id" in bob.error("memory_history", {"id": mine["id"]})
    assert mine["id"] in _ids(alice.ok("memory_search", {"query": "who is my dentist"}))  # still there


def test_a_person_searches_only_their_own_sessions(alice: McpClient, bob: McpClient) -> None:
    assert "cello" in str(alice.ok("session_search", {"query": "cello lesson"})["results"])
    assert "cello" not in str(bob.ok("session_search", {"query": "cello lesson"})["results"])
    assert "Lisbon" not in str(alice.ok("session_search", {"query": "flights to Lisbon"})["results"])


def test_memory_search_over_sessions_shows_only_the_persons_own_turns(
    alice: McpClient, bob: McpClient
) -> None:
    both = {"query": "cello lesson", "sources": ["memory", "sessions"], "k": 50}
    mine = alice.ok("memory_search", both)["results"]
    assert any(hit["source"] == "sessions" and "cello" in hit["text"] for hit in mine)
    assert "cello" not in str(bob.ok("memory_search", both)["results"])
    assert "Lisbon" not in str(alice.ok("memory_search", {**both, "query": "flights to Lisbon"})["results"])


def test_memory_md_is_refused_to_a_non_owner(bob: McpClient) -> None:
    for uri in ("memory://MEMORY.md", "memory://today"):
        with pytest.raises(Exception, match="is the owner's"):
            bob.read(uri)
    _still_serving(bob)


def test_a_non_owners_note_goes_to_their_own_memory_and_says_so(alice: McpClient, owner: McpClient) -> None:
    written = alice.ok("memory_note", {"text": "alice's secret recipe uses cardamom", "durable": True})
    assert written["written"] == "memory" and "owner's" in written["note"]
    assert "cardamom" not in owner.read("memory://MEMORY.md")
    assert written["id"] in _ids(alice.ok("memory_search", {"query": "secret recipe cardamom"}))
    stats = json.loads(alice.read("memory://stats"))
    assert stats["person"] == "alice" and stats["owner"] is False


def test_the_agents_own_memories_are_everyones(owner: McpClient, alice: McpClient, bob: McpClient) -> None:
    """Agent scope is shared by design, through this entry point as through every other."""
    for client in (owner, alice, bob):
        found = client.ok("memory_search", {"query": "what is the office wifi called"})
        assert any("Bluebird" in hit["text"] and hit["scope"] == "agent" for hit in found["results"])


def test_the_owners_name_is_refused_as_a_claim(home: Path) -> None:
    result = run_cli(home, "mcp", "--user", "default")
    assert result.returncode != 0
    assert result.stderr.startswith("openclaw: error: --user 'default' is the owner's name")
    assert result.stdout == ""
