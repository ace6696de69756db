"""`openclaw mcp` with a gateway of the same home running (issue 51): it reads and writes through the
gateway (no model is ever loaded in the MCP process), with the same results as without one, under the
same per-person rules; when the gateway stops, the server goes on with its own services."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from tests.gateway_helpers import Gateway, start_gateway
from tests.mcp_helpers import McpClient, stdio_opener

QUERIES = ["which tea do I like", "when is the dentist", "hiking", "what does my sister do"]
MEMORIES = [
    {"text": "likes green tea with jasmine", "category": "preference"},
    {"text": "dentist appointment on the 14th at 9am", "category": "event"},
    {"text": "went hiking in the Dolomites in August", "category": "event"},
    {"text": "my sister Ana works as an architect in Lyon", "category": "profile"},
    {"text": "prefers window seats on long flights", "category": "preference"},
    {"text": "alice keeps her bike in the cellar", "category": "event", "userId": "alice"},
]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("mcpgw") / "home"
    batch = home.parent / "memories.jsonl"
    batch.write_text(
        "".join(json.dumps({"userId": "default", **m}) + "\n" for m in MEMORIES), encoding="utf-8"
    )
    result = run_cli(home, "memory", "add", "--batch", str(batch))
    assert result.returncode == 0, result.stderr
    result = run_cli(
        home, "session", "append", "agent:main:main", "--role", "user", "we talked about the dentist"
    )
    assert result.returncode == 0, result.stderr
    return home


def _answers(client: McpClient) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for query in QUERIES:
        found = client.ok("memory_search", {"query": query, "k": 5, "sources": ["memory", "sessions"]})
        out[query] = [(hit["id"], hit["relevance"]) for hit in found["results"]]
    out["sessions"] = [h["id"] for h in client.ok("session_search", {"query": "dentist"})["results"]]
    out["categories"] = [
        h["id"]
        for h in client.ok("memory_search", {"query": "x y hiking", "categories": ["event"]})["results"]
    ]
    return out


@pytest.fixture(scope="module")
def without_gateway(home: Path) -> dict[str, Any]:
    client = McpClient(stdio_opener(home))
    try:
        assert json.loads(client.read("memory://stats"))["gateway"] is False
        return _answers(client)
    finally:
        client.close()


@pytest.fixture(scope="module")
def gateway(home: Path, without_gateway: dict[str, Any]) -> Iterator[Gateway]:
    running = start_gateway(home)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def owner(home: Path, gateway: Gateway) -> Iterator[McpClient]:
    client = McpClient(stdio_opener(home))
    yield client
    client.close()


@pytest.fixture(scope="module")
def alice(home: Path, gateway: Gateway) -> Iterator[McpClient]:
    client = McpClient(stdio_opener(home, "--user", "alice"))
    yield client
    client.close()


def _mcp_pids(home: Path) -> list[int]:
    """The `openclaw mcp` processes of `home` (found by their command line and OPENCLAW_HOME)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"openclaw_cli" in cmdline and b"mcp" in cmdline and f"OPENCLAW_HOME={home}".encode() in environ:
            found.append(int(entry.name))
    return found


def test_the_same_results_with_a_gateway_as_without(
    owner: McpClient, without_gateway: dict[str, Any]
) -> None:
    assert json.loads(owner.read("memory://stats"))["gateway"] is True
    now = _answers(owner)
    assert now["sessions"] == without_gateway["sessions"] and now["sessions"]
    assert now["categories"] == without_gateway["categories"] and now["categories"]
    for query in QUERIES:
        assert [i for i, _ in now[query]] == [i for i, _ in without_gateway[query]], query
        for (_, then), (_, here) in zip(without_gateway[query], now[query], strict=True):
            assert here == pytest.approx(then, abs=0.01)  # FSRS recall moves with the clock, a little


def test_writes_go_through_the_gateway_and_no_model_loads_here(owner: McpClient, home: Path) -> None:
    added = owner.ok("memory_add", {"text": "the wifi password is on the fridge", "category": "event"})
    assert added["action"] == "added"
    assert added["id"] in [h["id"] for h in owner.ok("memory_search", {"query": "wifi password"})["results"]]
    assert owner.ok("memory_forget", {"id": added["id"]}) == {"deleted": added["id"]}
    assert [e["action"] for e in owner.ok("memory_history", {"id": added["id"]})["history"]] == [
        "add",
        "delete",
    ]
    pids = _mcp_pids(home)
    assert pids
    for pid in pids:
        maps = Path(f"/proc/{pid}/maps").read_text()
        assert "onnxruntime" not in maps, "the MCP process loaded a model although a gateway serves it"


def test_privacy_holds_through_the_gateway(owner: McpClient, alice: McpClient) -> None:
    theirs = owner.ok("memory_search", {"query": "which tea do I like"})["results"][0]["id"]
    seen = alice.ok("memory_search", {"query": "which tea do I like", "k": 50})["results"]
    assert theirs not in [hit["id"] for hit in seen]
    assert "bike" in str(alice.ok("memory_search", {"query": "where is the bike"})["results"])
    unknown = "mem-00000000-0000-7000-8000-000000000000"
    assert alice.error("memory_forget", {"id": theirs}) == alice.error(
        "memory_forget", {"id": unknown}
    ).replace(unknown, theirs)
    assert "dentist" not in str(alice.ok("session_search", {"query": "dentist"})["results"])


def test_when_the_gateway_stops_the_server_goes_on_by_itself(owner: McpClient, gateway: Gateway) -> None:
    gateway.stop()
    assert json.loads(owner.read("memory://stats"))["gateway"] is False
    found = owner.ok("memory_search", {"query": "which tea do I like"})
    assert "jasmine" in found["results"][0]["text"]
