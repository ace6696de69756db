"""`openclaw session search` as a real process, in-process and through a running gateway (`session.search`):
the same output both ways, a person's view over the WebSocket holds only their sessions, and every bad
input is one error line, never a traceback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Result, run_cli
from tests.gateway_helpers import Gateway, request, start_gateway
from tests.transcript_helpers import ALICE_KEY, BOB_KEY, write_dialogues

VIA = "through the gateway at"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    home = tmp_path_factory.mktemp("served") / "home"
    write_dialogues(home)
    gateway = start_gateway(home)
    try:
        yield gateway
    finally:
        gateway.stop()


@pytest.fixture(scope="module")
def quiet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("quiet") / "home"
    write_dialogues(home)
    return home


def _ok(home: Path, *args: str) -> Result:
    result = run_cli(home, "-v", "session", "search", *args)
    assert result.returncode == 0, result.stderr
    return result


def _json(result: Result) -> dict[str, object]:
    value = json.loads(result.stdout)
    value.pop("timingsMs")
    value.pop("vectors", None)  # what this process embedded first: whichever search ran first did
    return value


def test_search_prints_the_turn_with_its_context(quiet: Path) -> None:
    out = _ok(quiet, "Lisbon trip", "-k", "1").stdout
    assert ALICE_KEY in out
    assert "> [0] 2026-03-03T10:00 user (alice): Can you help me plan the Lisbon trip?" in out
    assert "[1] 2026-03-03T11:00 assistant: Of course." in out


def test_json_through_the_gateway_is_what_local_prints(served: Gateway) -> None:
    args = ("dentist appointment", "--json", "--explain", "--role", "user")
    remote, local = _ok(served.home, *args), _ok(served.home, *args, "--local")
    assert VIA in remote.stderr and VIA not in local.stderr
    assert _json(remote) == _json(local)
    hit = json.loads(remote.stdout)["results"][0]
    assert (hit["sessionKey"], hit["role"], hit["sender"]) == (BOB_KEY, "user", "bob") and "explain" in hit


def test_text_through_the_gateway_is_what_local_prints(served: Gateway) -> None:
    args = ("上海出差", "--user", "alice", "--since", "2026-03-05", "--until", "2026-03-05")
    remote, local = _ok(served.home, *args), _ok(served.home, *args, "--local")
    assert VIA in remote.stderr
    assert remote.stdout == local.stdout and "上海" in remote.stdout


def test_a_person_through_the_gateway_sees_only_their_sessions(served: Gateway) -> None:
    with served.ws() as ws:
        for query in ("dentist appointment Friday", "Lisbon trip", "quarterly report"):
            frame = request(ws, "session.search", {"query": query, "userId": "alice", "all": True})
            assert frame["ok"], frame
            keys = {hit["sessionKey"] for hit in frame["payload"]["results"]}
            contexts = {
                side["sessionKey"]
                for hit in frame["payload"]["results"]
                for side in hit["context"].values()
                if side is not None
            }
            assert keys | contexts <= {ALICE_KEY}
        widened = request(
            ws, "session.search", {"query": "dentist", "userId": "alice", "filterUserId": "bob"}
        )
        assert not widened["ok"] and widened["error"]["code"] == "INVALID_PARAMS"


def test_the_gateway_refuses_a_bad_role(served: Gateway) -> None:
    with served.ws() as ws:
        frame = request(ws, "session.search", {"query": "dentist", "role": "tool"})
    assert not frame["ok"] and "unknown role" in frame["error"]["message"]


def test_the_gateway_refuses_a_lone_surrogate(served: Gateway) -> None:
    with served.ws() as ws:
        ws.send('{"type":"req","id":"x","method":"session.search","params":{"query":"a \\ud800"}}')
        frame = json.loads(ws.recv(timeout=30))
    assert not frame["ok"] and "lone surrogate" in frame["error"]["message"]


# -- bad input at the CLI, each its own test ----------------------------------------------------------


def _refused(home: Path, *args: str, says: str) -> None:
    result = run_cli(home, "session", "search", *args, "--local")
    assert result.returncode not in (0, 70), result
    assert result.stderr.startswith("openclaw: error:") and says in result.stderr
    assert "Traceback" not in result.stderr


def test_cli_refuses_a_bad_date(quiet: Path) -> None:
    _refused(quiet, "trip", "--since", "2026-13-01", says="bad date")


def test_cli_refuses_since_after_until(quiet: Path) -> None:
    _refused(quiet, "trip", "--since", "2026-03-06", "--until", "2026-03-04", says="not before")


def test_cli_refuses_an_unknown_role(quiet: Path) -> None:
    _refused(quiet, "trip", "--role", "system", says="unknown role")


def test_cli_refuses_an_unknown_session(quiet: Path) -> None:
    _refused(quiet, "trip", "--session", "agent:main:telegram:default:direct:nobody", says="no session")


def test_cli_refuses_an_empty_query(quiet: Path) -> None:
    _refused(quiet, "", says="empty")


def test_cli_refuses_a_query_that_is_not_utf8(quiet: Path) -> None:
    result = run_cli(quiet, "session", "search", "-", "--local", input=b"a \xed\xa0\x80 b")
    assert result.returncode not in (0, 70) and "not valid UTF-8" in result.stderr


def test_cli_refuses_k_out_of_range(quiet: Path) -> None:
    _refused(quiet, "trip", "-k", "0", says="k must be between")


def test_memory_index_checks_and_repairs_the_transcript_index(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_dialogues(home)
    missing = run_cli(home, "memory", "index", "--check")
    assert missing.returncode == 0 and "transcripts: not built yet" in missing.stdout
    repaired = run_cli(home, "memory", "index", "--json")
    assert repaired.returncode == 0, repaired.stderr
    assert repaired.json()["transcripts"] == {"turns": 9, "embedded": 9}
    checked = run_cli(home, "memory", "index", "--check", "--json")
    assert checked.returncode == 0, checked.stdout
    assert (
        checked.json()["transcripts"]["messages"] == 9
        and checked.json()["transcripts"]["pendingVectors"] == 0
    )


def test_search_through_the_gateway_loads_no_model_in_the_cli(served: Gateway) -> None:
    from tests.import_trace import imported_modules

    status, modules = imported_modules(served.home, "session", "search", "Lisbon trip")
    assert status == 0
    heavy = {m.split(".")[0] for m in modules} & {"numpy", "onnxruntime", "jieba", "litellm", "apsw"}
    assert heavy == set()
    assert "openclaw_cli.memory.service" not in modules
