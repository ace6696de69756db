"""One search across memories and session transcripts (issue 53, seed 003 §4.2): `memory search --source`, the
agent's memory_search `sources` (the MCP server's is in test_mcp.py). Real session files, real SQLite, the real
embedder; the CLI as a real process, in this process and through a running gateway.

The home: Alice's, Bob's and the owner's sessions (tests/transcript_helpers.DIALOGUES: Alice plans a Lisbon trip
"We fly on May 12th"; Bob's dentist moved to Friday) and two memories said nowhere in a session: Alice prefers
window seats on flights; Bob's dentist is Dr. Weiss."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.memory.search.sources import merge, parse_sources
from tests.conftest import Result, run_cli
from tests.gateway_helpers import Gateway, start_gateway
from tests.transcript_helpers import ALICE_KEY, BOB_KEY, write_dialogues

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

WINDOW = "Alice prefers window seats on flights"
DENTIST = "Bob's dentist is Dr. Weiss on Elm Street"
FLY = "Can you help me plan the Lisbon trip? We fly on May 12th."


def _seed(home: Path) -> None:
    write_dialogues(home)
    lines = [
        {"text": WINDOW, "category": "preference", "userId": "alice"},
        {"text": DENTIST, "category": "profile", "userId": "bob"},
    ]
    result = run_cli(
        home, "memory", "add", "--batch", "-", input="".join(json.dumps(x) + "\n" for x in lines)
    )
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def quiet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("sources") / "home"
    _seed(home)
    return home


def _search(home: Path, *args: str) -> dict[str, Any]:
    result = run_cli(home, "memory", "search", *args, "--json")
    assert result.returncode == 0, result.stderr
    value: dict[str, Any] = json.loads(result.stdout)
    return value


def _texts(result: dict[str, Any]) -> list[str]:
    return [hit["text"] for hit in result["results"]]


# ---------------------------------------------------------------------- one ranking


def test_a_turn_only_fact_ranks_first_for_its_question_with_the_memory_below(quiet: Path) -> None:
    found = _search(quiet, "when is the Lisbon trip flight", "--source", "memory,sessions")
    top = found["results"][0]
    assert top["source"] == "sessions" and top["text"] == FLY
    assert (top["sessionKey"], top["index"], top["role"], top["sender"]) == (ALICE_KEY, 0, "user", "alice")
    assert top["ts"].startswith("2026-03-03")
    assert WINDOW in _texts(found)  # found too, below the turn that answers
    assert _texts(found).index(WINDOW) > 0
    scores = [hit["score"] for hit in found["results"]]
    assert scores == sorted(scores, reverse=True) and all(0 < s <= 1 for s in scores)


def test_a_memory_only_fact_ranks_first_for_its_question_with_the_turn_below(quiet: Path) -> None:
    found = _search(
        quiet, "which seat does Alice like when she flies to Lisbon", "--source", "memory,sessions"
    )
    top = found["results"][0]
    assert top["source"] == "memory" and top["text"] == WINDOW
    assert top["category"] == "preference" and top["id"].startswith("mem-") and top["createdAt"]
    assert FLY in _texts(found) and _texts(found).index(FLY) > 0
    assert found["sources"] == ["memory", "sessions"] and set(found["legs"]) == {"memory", "sessions"}


def test_sessions_alone_finds_turns_only(quiet: Path) -> None:
    found = _search(quiet, "which seat does Alice like when she flies to Lisbon", "--source", "sessions")
    assert found["results"] and {hit["source"] for hit in found["results"]} == {"sessions"}
    assert WINDOW not in _texts(found)


def test_explain_says_which_leg_each_hit_came_from(quiet: Path) -> None:
    result = run_cli(
        quiet,
        "memory",
        "search",
        "when is the Lisbon trip flight",
        "--source",
        "memory,sessions",
        "--explain",
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    turn = next(n for n, line in enumerate(lines) if "  sessions  " in line and FLY in line)
    assert lines[turn + 1].strip().startswith("from the sessions leg (#1): relevance")
    memory = next(n for n, line in enumerate(lines) if "  memory  " in line and WINDOW in line)
    assert lines[memory + 1].strip().startswith("from the memory leg (#1): score")
    assert any(line.startswith("sessions leg: ") for line in lines)


def test_the_default_is_memory_and_unchanged(quiet: Path) -> None:
    query = "which seat does Alice like when she flies to Lisbon"
    default, explicit = _search(quiet, query), _search(quiet, query, "--source", "memory")
    for value in (default, explicit):
        value.pop("timingsMs")
    assert default == explicit
    assert "sources" not in default and all("source" not in hit for hit in default["results"])
    assert WINDOW in [hit["l0"] for hit in default["results"]]
    assert FLY not in json.dumps(default)


# ---------------------------------------------------------------------- privacy


def test_with_user_another_persons_turns_never_appear(quiet: Path) -> None:
    found = _search(
        quiet, "Lisbon trip flight window seat", "--source", "memory,sessions", "--user", "bob", "--all"
    )
    shown = json.dumps(found["results"])
    assert found["results"] and "Lisbon" not in shown and WINDOW not in shown
    assert all(hit.get("sessionKey") in (None, BOB_KEY) for hit in found["results"])
    own = _search(quiet, "dentist appointment", "--source", "memory,sessions", "--user", "bob")
    assert {hit["source"] for hit in own["results"]} == {"memory", "sessions"}  # Bob's own, both legs


def test_the_agent_tool_searches_only_the_persons_sessions(quiet: Path) -> None:
    from openclaw_cli.agent.services import AgentServices
    from openclaw_cli.agent.tools.builtin import run_tool
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.core.paths import Home
    from tests.memory_helpers import with_shared_models

    services = AgentServices(Home(quiet), "main", with_shared_models(Settings()))

    def tool(person: str, query: str, sources: list[str] | None = None) -> dict[str, Any]:
        args: dict[str, Any] = {"query": query, "limit": 10}
        if sources is not None:
            args["sources"] = sources
        return run_tool(
            "memory_search",
            json.dumps(args),
            services.memory,
            person,
            lambda q, k: services.search_transcripts(q, k, person),
            lock=services.memory_lock,
        )

    try:
        both = ["memory", "sessions"]
        bob = tool("bob", "Lisbon trip flight window seat", both)
        shown = json.dumps(bob["results"])
        assert "Lisbon" not in shown and WINDOW not in shown
        alice = tool("alice", "when is the Lisbon trip flight", both)
        assert alice["results"][0] == {
            "source": "sessions",
            "sessionKey": ALICE_KEY,
            "index": 0,
            "role": "user",
            "sender": "alice",
            "ts": alice["results"][0]["ts"],
            "text": FLY,
            "kind": "message",
            "score": alice["results"][0]["score"],
        }
        assert any(hit["source"] == "memory" and hit["text"] == WINDOW for hit in alice["results"])
        plain = tool("alice", "which seat does Alice like when she flies to Lisbon")
        assert plain == tool("alice", "which seat does Alice like when she flies to Lisbon", ["memory"])
        assert set(plain["results"][0]) == {"id", "category", "text"}  # the default tool's shape, unchanged
        bad = tool("alice", "Lisbon", ["web"])
        assert bad["error"].startswith("invalid arguments (sources.0:")
        assert tool("alice", "Lisbon", [])["error"].startswith("invalid arguments (sources:")
    finally:
        services.close()


# ---------------------------------------------------------------------- through a gateway


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    home = tmp_path_factory.mktemp("served") / "home"
    _seed(home)
    gateway = start_gateway(home)
    try:
        yield gateway
    finally:
        gateway.stop()


def _without_timings(result: Result) -> dict[str, Any]:
    assert result.returncode == 0, result.stderr
    value: dict[str, Any] = json.loads(result.stdout)
    for leg in value["legs"].values():
        leg.pop("timingsMs")
    return value


def test_through_the_gateway_the_same_merge_as_in_process(served: Gateway) -> None:
    args = ("memory", "search", "when is the Lisbon trip flight", "--source", "memory,sessions", "--json")
    remote = run_cli(served.home, "-v", *args)
    assert "memory.search through the gateway at" in remote.stderr
    assert "session.search through the gateway at" in remote.stderr
    local = run_cli(served.home, *args, "--local")
    assert _without_timings(remote) == _without_timings(local)
    bob = run_cli(
        served.home,
        "memory",
        "search",
        "Lisbon trip flight",
        "--source",
        "sessions",
        "--user",
        "bob",
        "--json",
        "--all",
    )
    assert "Lisbon" not in json.dumps(_without_timings(bob)["results"])


# ---------------------------------------------------------------------- bad --source values


def _refused(home: Path, *args: str, says: str) -> None:
    result = run_cli(home, "memory", "search", *args)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert says in result.stderr


def test_an_unknown_source_is_one_line(quiet: Path) -> None:
    _refused(quiet, "Lisbon", "--source", "web", says="unknown source 'web': use memory, sessions")


def test_an_empty_source_is_one_line(quiet: Path) -> None:
    _refused(quiet, "Lisbon", "--source", "", says="unknown source ''")


def test_a_list_with_one_unknown_source_is_one_line(quiet: Path) -> None:
    _refused(quiet, "Lisbon", "--source", "memory,Sessions", says="unknown source 'Sessions'")


def test_a_trailing_comma_is_one_line(quiet: Path) -> None:
    _refused(quiet, "Lisbon", "--source", "memory,", says="unknown source ''")


def test_k_out_of_range_with_sessions_is_one_line(quiet: Path) -> None:
    _refused(quiet, "Lisbon", "--source", "sessions", "-k", "0", says="0 is not between 1 and 200")


def test_sessions_with_batch_is_one_line(quiet: Path) -> None:
    _refused(quiet, "--batch", "-", "--source", "sessions", says="--batch searches memory only")


def test_sessions_with_expand_is_one_line(quiet: Path) -> None:
    _refused(quiet, "Lisbon", "--source", "sessions", "--expand", says="--expand searches memory only")


def test_sessions_with_another_mode_is_one_line(quiet: Path) -> None:
    _refused(
        quiet, "Lisbon", "--source", "memory,sessions", "--mode", "bm25", says="--mode bm25 applies to memory"
    )


# ---------------------------------------------------------------------- the merge itself


def test_parse_sources_keeps_the_order_and_drops_repeats() -> None:
    assert parse_sources(None) == ("memory",)
    assert parse_sources("sessions,memory,sessions") == ("sessions", "memory")
    assert parse_sources(" memory , sessions ") == ("memory", "sessions")
    for bad in ("", "web", "memory;sessions", ["memory", 3]):
        with pytest.raises(InvalidInput):
            parse_sources(bad)  # type: ignore[arg-type]


def test_merge_weighs_turns_sorts_and_cuts_to_k() -> None:
    memory = {"results": [{"id": "m1", "score": 0.8, "l0": "a"}, {"id": "m2", "score": 0.3, "l0": "b"}]}
    turns = {"results": [{"sessionKey": "s", "index": 4, "score": 0.6, "text": "t"}], "warnings": ["w"]}
    merged = merge(
        ("memory", "sessions"), {"memory": memory, "sessions": turns}, 2, turn_weight=0.5, explain=True
    )
    assert [(hit["source"], hit["score"]) for hit in merged["results"]] == [("memory", 0.8), ("memory", 0.3)]
    merged = merge(
        ("memory", "sessions"), {"memory": memory, "sessions": turns}, 3, turn_weight=1.0, explain=True
    )
    assert [hit["source"] for hit in merged["results"]] == ["memory", "sessions", "memory"]
    assert merged["results"][1]["leg"] == {"name": "sessions", "rank": 1, "score": 0.6, "weight": 1.0}
    assert merged["results"][0]["text"] == "a" and merged["warnings"] == ["sessions: w"]
    assert merged["legs"]["memory"]["found"] == 2
