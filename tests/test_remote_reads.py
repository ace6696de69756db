"""`openclaw memory search` and `memory inject` through a running gateway (gateway/client/reads.py): real
gateway processes on 127.0.0.1 and real CLI processes. The gateway is used when it runs for the home, is of
this version and accepts the token; otherwise the command runs in-process, and prints the same either way.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Result, run_cli
from tests.gateway_helpers import Gateway, http_json, request, start_gateway
from tests.import_trace import imported_modules
from tests.memory_helpers import add, service_for

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

VIA = "through the gateway at"
OTHER_VERSION = "0.0.0-older"
MEMORIES = [
    ("Lin likes dark themes in his editor", "preference", "user", "lin"),
    ("Lin drinks his coffee with oat milk", "preference", "user", "lin"),
    ("Mia drinks her coffee black, no sugar", "preference", "user", "mia"),
    ("Mia's editor is Helix with the gruvbox theme", "preference", "user", "mia"),
    ("Deploy the site with make release, never by hand", "lesson", "agent", None),
    ("The team meets on Tuesdays at ten about the coffee machine", "event", "user", "lin"),
]


def _seed(home: Path) -> None:
    service = service_for(home)
    try:
        for text, category, scope, user in MEMORIES:
            add(service, text, category=category, scope=scope, user_id=user)
    finally:
        service.close()


def _home(factory: pytest.TempPathFactory, name: str) -> Path:
    home = factory.mktemp(name) / "home"
    home.mkdir(mode=0o700)
    _seed(home)
    return home


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """A seeded home with its gateway running on loopback (its token in the home)."""
    gateway = start_gateway(_home(tmp_path_factory, "served"))
    try:
        yield gateway
    finally:
        gateway.stop()


@pytest.fixture(scope="module")
def quiet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A seeded home without a gateway."""
    return _home(tmp_path_factory, "quiet")


def _cli(home: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    result = run_cli(home, "-v", *args, env=env)
    assert result.returncode == 0, result.stderr
    return result


def _without_timings(text: str) -> Any:
    value = json.loads(text)
    value.pop("timingsMs", None)
    return value


def _same_both_ways(home: Path, *args: str, env: dict[str, str] | None = None) -> tuple[Result, Result]:
    """(through whatever the home offers, --local), their stdout equal."""
    offered = _cli(home, *args, env=env)
    local = _cli(home, *args, "--local", env=env)
    if "--json" in args:
        assert _without_timings(offered.stdout) == _without_timings(local.stdout)
    else:
        assert offered.stdout == local.stdout
    return offered, local


def test_search_text_is_the_same_through_the_gateway(served: Gateway) -> None:
    remote, local = _same_both_ways(served.home, "memory", "search", "which editor theme")
    assert VIA in remote.stderr
    assert "Lin likes dark themes in his editor" in remote.stdout
    assert VIA not in local.stderr


def test_search_json_is_the_same_through_the_gateway(served: Gateway) -> None:
    args = ("memory", "search", "coffee", "-k", "3", "-c", "preference,event", "--json")
    remote, _ = _same_both_ways(served.home, *args)
    assert VIA in remote.stderr
    found = remote.json()
    assert found["k"] == 3 and found["results"]
    assert {hit["category"] for hit in found["results"]} <= {"preference", "event"}


def test_search_explain_and_all_are_the_same_through_the_gateway(served: Gateway) -> None:
    args = ("memory", "search", "deploy release", "--explain", "--all", "--scope", "agent", "--json")
    remote, _ = _same_both_ways(served.home, *args)
    assert VIA in remote.stderr
    found = remote.json()
    assert [hit["scope"] for hit in found["results"]] == ["agent"]
    assert "explain" in found["results"][0] and "words" in found["analysis"]


def test_inject_is_the_same_through_the_gateway(served: Gateway) -> None:
    remote, _ = _same_both_ways(served.home, "memory", "inject", "--query", "coffee", "--user", "lin")
    assert VIA in remote.stderr
    assert "oat milk" in remote.stdout


def test_inject_json_is_the_same_through_the_gateway(served: Gateway) -> None:
    remote, _ = _same_both_ways(served.home, "memory", "inject", "-q", "how do we deploy the site", "--json")
    assert VIA in remote.stderr
    assert "make release" in remote.json()["text"]


def test_inject_for_a_session_is_the_same_through_the_gateway(served: Gateway) -> None:
    key = "agent:main:main"
    assert run_cli(served.home, "session", "append", key, "how do we deploy the site again?").returncode == 0
    remote, _ = _same_both_ways(served.home, "memory", "inject", "--session", key, "--json")
    assert VIA in remote.stderr
    assert "make release" in remote.json()["text"]


def test_local_runs_in_process_while_a_gateway_runs(served: Gateway) -> None:
    remote = _modules(served.home, "memory", "search", "coffee")
    local = _modules(served.home, "memory", "search", "coffee", "--local")
    assert "openclaw_cli.memory.service" in local
    assert "openclaw_cli.memory.service" not in remote


def test_search_through_the_gateway_loads_no_model_in_the_cli(served: Gateway) -> None:
    modules = _modules(served.home, "memory", "search", "which editor theme")
    heavy = {m.split(".")[0] for m in modules} & {"numpy", "onnxruntime", "jieba", "litellm"}
    assert heavy == set()
    assert "websockets" not in {m.split(".")[0] for m in modules}  # plain HTTP: ~25 ms less to import


def test_a_person_sees_only_their_own_memories_through_the_gateway(served: Gateway) -> None:
    args = ("memory", "search", "coffee editor theme", "--user", "mia", "--all", "--json")
    remote, _ = _same_both_ways(served.home, *args)
    assert VIA in remote.stderr
    owners = {hit["userId"] for hit in remote.json()["results"]}
    assert owners == {"mia"}


def test_inject_for_a_person_holds_none_of_another_persons_memories(served: Gateway) -> None:
    remote, _ = _same_both_ways(served.home, "memory", "inject", "-q", "coffee", "-u", "mia", "--json")
    assert VIA in remote.stderr
    text = remote.json()["text"]
    assert "black" in text and "oat milk" not in text and "Tuesdays" not in text


def _write_pid(home: Path, pid: int, port: int) -> Path:
    path = home / "gateway" / "gateway.pid"
    path.parent.mkdir(mode=0o700, exist_ok=True)
    path.write_text(json.dumps({"pid": pid, "host": "127.0.0.1", "port": port}), encoding="utf-8")
    return path


def test_a_stale_pid_file_falls_back_to_this_process(quiet: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    path = _write_pid(quiet, gone.pid, 9)
    try:
        stale, local = _same_both_ways(quiet, "memory", "search", "which editor theme")
    finally:
        path.unlink()
    assert f"names process {gone.pid}, which is gone" in stale.stderr
    assert stale.stderr.count("\n") == 1 and "Lin likes dark themes" in stale.stdout


def test_a_gateway_that_does_not_answer_falls_back(quiet: Path) -> None:
    # A port that accepts connections but never answers, named by the pid file of a live process whose
    # command line reads like a gateway's (a pid whose process is no gateway is not this home's gateway).
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", "gateway", "run"])
    with socket.socket() as mute:
        mute.bind(("127.0.0.1", 0))
        mute.listen()
        path = _write_pid(quiet, sleeper.pid, mute.getsockname()[1])
        try:
            silent, _ = _same_both_ways(quiet, "memory", "search", "coffee", "--json")
        finally:
            path.unlink()
            sleeper.kill()
            sleeper.wait()
    assert "does not answer (TimeoutError)" in silent.stderr
    assert silent.json()["results"]


def test_a_gateway_of_another_version_falls_back(tmp_path_factory: pytest.TempPathFactory) -> None:
    older = f"import openclaw_cli; openclaw_cli.__version__ = {OTHER_VERSION!r}; import openclaw_cli.__main__"
    gateway = start_gateway(_home(tmp_path_factory, "older"), launcher=("-c", older))
    try:
        other, _ = _same_both_ways(gateway.home, "memory", "search", "coffee", "-u", "lin")
    finally:
        gateway.stop()
    assert f"the gateway runs version {OTHER_VERSION}" in other.stderr
    assert VIA not in other.stderr and "oat milk" in other.stdout


@pytest.fixture(scope="module")
def beyond_loopback(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """A gateway listening on every interface, with a token given to it (none is stored in the home)."""
    token = "a-token-only-given-to-the-gateway-" + "x" * 8
    gateway = start_gateway(_home(tmp_path_factory, "lan"), "--bind", "lan", "--token", token)
    try:
        yield gateway
    finally:
        gateway.stop()


def test_the_remote_path_sends_the_token(beyond_loopback: Gateway) -> None:
    env = {"OPENCLAW_GATEWAY_TOKEN": beyond_loopback.token}
    remote, _ = _same_both_ways(beyond_loopback.home, "memory", "search", "coffee", env=env)
    assert VIA in remote.stderr
    assert not (beyond_loopback.home / "gateway" / "token").exists()


def test_without_the_token_a_gateway_beyond_loopback_is_not_used(beyond_loopback: Gateway) -> None:
    refused, _ = _same_both_ways(beyond_loopback.home, "memory", "search", "coffee")
    assert "refused the connection (HTTP 401" in refused.stderr
    assert VIA not in refused.stderr and "coffee" in refused.stdout


def _modules(home: Path, *args: str) -> set[str]:
    status, modules = imported_modules(home, *args)
    assert status == 0
    return modules


# -- the endpoint the CLI's reads use (gateway/http/reads.py) -------------------------------------------


def test_the_reads_endpoint_needs_the_token(served: Gateway) -> None:
    for url, body in (
        (served.http + "/rpc", None),
        (served.http + "/rpc/memory.search", {"query": "coffee"}),
    ):
        status, answer = http_json(url, body)
        assert status == 401 and "token" in answer["error"]["message"]
        status, _ = http_json(url, body, token="wrong-" + served.token)
        assert status == 401


def test_the_reads_endpoint_says_its_version(served: Gateway) -> None:
    import openclaw_cli

    assert http_json(served.http + "/rpc", token=served.token) == (200, {"version": openclaw_cli.__version__})


def test_the_reads_endpoint_answers_what_the_websocket_answers(served: Gateway) -> None:
    params = {"query": "coffee", "userId": "mia"}
    status, answer = http_json(served.http + "/rpc/memory.search", params, token=served.token)
    with served.ws() as conn:
        frame = request(conn, "memory.search", params)
    assert status == 200 and answer["ok"] is True and frame["ok"] is True
    texts = [hit["l0"] for hit in answer["payload"]["results"]]
    assert texts == [hit["l0"] for hit in frame["payload"]["results"]]
    assert texts and not any("Lin" in text for text in texts)  # Mia's search, never Lin's memories


def test_the_reads_endpoint_serves_no_other_method(served: Gateway) -> None:
    before = run_cli(served.home, "memory", "list", "--json").json()
    status, answer = http_json(served.http + "/rpc/memory.add", {"text": "sneaked in"}, token=served.token)
    assert status == 404 and "not served over HTTP" in answer["error"]["message"]
    status, _ = http_json(served.http + "/rpc/chat.send", {"text": "hello"}, token=served.token)
    assert status == 404
    assert run_cli(served.home, "memory", "list", "--json").json() == before


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"{not json", "the body is not JSON"),
        (b'["coffee"]', "the body must be a JSON object"),
        (b'{"query": 7}', "query"),
    ],
    ids=["not-json", "not-an-object", "bad-param"],
)
def test_a_bad_read_request_is_a_400_that_says_why(served: Gateway, raw: bytes, message: str) -> None:
    status, answer = http_json(served.http + "/rpc/memory.search", raw=raw, token=served.token)
    assert status == 400
    error = answer["error"]
    assert message in error["message"]
    if "code" in error:  # refused by the method itself, as its WebSocket response frame would say
        assert answer["ok"] is False and error["code"] == "INVALID_PARAMS"
