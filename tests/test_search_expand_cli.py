"""`openclaw memory search --expand` (issue 24): a real CLI process against a real home with the packaged
local embedder; the configured model is the fake OpenAI server on loopback, answering expansion requests
as each test scripts them. The wordings are not the README's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests import agent_helpers
from tests.agent_helpers import WindowedFakeOpenAI
from tests.conftest import run_cli

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

fake = agent_helpers.fake

QUESTION = "which look suits me best when I write code at night?"
DARK = "User prefers dark mode"
TEA = "User's favourite tea is sencha"
PHRASINGS = ["User prefers a dark or light theme in the code editor", "editor colour scheme"]
# Another person's memory holding the phrasing's own words: --user must keep it out.
BOBS = "Bob prefers a light theme in the code editor"


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home holding the owner's two memories and Bob's, written once for the module."""
    home = tmp_path_factory.mktemp("seeded") / "home"
    lines = "".join(
        json.dumps(item) + "\n"
        for item in (
            {"text": DARK, "category": "preference"},
            {"text": TEA, "category": "preference"},
            {"text": BOBS, "category": "preference", "userId": "bob"},
        )
    )
    done = run_cli(home, "memory", "add", "--batch", "-", input=lines)
    assert done.returncode == 0, done.stderr
    return home


@pytest.fixture
def cli(seeded: Path, home: Path) -> Any:
    """The CLI against this test's copy of the seeded home."""
    shutil.copytree(seeded, home)

    def run(*args: str, **kwargs: Any) -> Any:
        return run_cli(home, *args, **kwargs)

    return run


def _search(cli: Any, fake: WindowedFakeOpenAI, *args: str) -> Any:
    return cli("memory", "search", *args, env=agent_helpers.config_env(fake.url))


def _asked(fake: WindowedFakeOpenAI) -> list[str]:
    return [str(r.body["messages"][-1]["content"]) for r in fake.expansion_requests]


def test_a_weak_query_is_expanded_and_finds_its_memory(cli, fake) -> None:
    fake.expand = lambda query: json.dumps({"phrasings": PHRASINGS})
    local = _search(cli, fake, QUESTION, "--user", "default", "--json", "--local")
    assert [r["l0"] for r in json.loads(local.stdout)["results"]] == []  # what the CLI finds alone

    found = _search(cli, fake, QUESTION, "--user", "default", "--expand", "--json")
    assert found.returncode == 0, found.stderr
    result = json.loads(found.stdout)
    assert [r["l0"] for r in result["results"]][:1] == [DARK]
    assert result["expansion"] == {"model": "openai/fake-chat", "asked": True, "phrasings": PHRASINGS}
    assert _asked(fake) == [QUESTION]


def test_explain_shows_what_the_model_gave_and_which_phrasing_found_each_result(cli, fake) -> None:
    fake.expand = lambda query: json.dumps({"phrasings": PHRASINGS})
    shown = _search(cli, fake, QUESTION, "--user", "default", "--expand", "--explain")
    assert shown.returncode == 0, shown.stderr
    assert DARK in shown.stdout
    assert "expansion: openai/fake-chat gave “User prefers a dark or light theme" in shown.stdout
    assert "found through the model's phrasing “" in shown.stdout


def test_a_phrasing_finds_nothing_outside_the_users_filter(cli, fake) -> None:
    fake.expand = lambda query: json.dumps({"phrasings": [BOBS]})
    found = _search(cli, fake, QUESTION, "--user", "default", "--expand", "--json", "--all")
    assert found.returncode == 0, found.stderr
    users = {r["userId"] for r in json.loads(found.stdout)["results"]}
    assert "bob" not in users and users <= {"default"}
    # Without the filter the same phrasing does bring Bob's memory: the filter is what kept it out.
    unfiltered = _search(cli, fake, QUESTION, "--expand", "--json", "--all")
    assert BOBS in [r["l0"] for r in json.loads(unfiltered.stdout)["results"]]


def test_a_query_its_own_words_find_asks_no_model(cli, fake) -> None:
    fake.expand = lambda query: json.dumps({"phrasings": PHRASINGS})
    found = _search(cli, fake, "sencha tea", "--expand", "--json")
    assert found.returncode == 0, found.stderr
    result = json.loads(found.stdout)
    assert [r["l0"] for r in result["results"]][:1] == [TEA]
    assert result["expansion"] == {"model": "openai/fake-chat", "asked": False, "phrasings": []}
    assert fake.expansion_requests == []


def test_a_failing_model_leaves_the_local_result_and_one_warning(cli, fake) -> None:
    fake.fail_next_expansions(1, status=500)
    found = _search(cli, fake, QUESTION, "--user", "default", "--expand")
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "" and "Traceback" not in found.stderr  # nothing found locally
    warnings = [line for line in found.stderr.splitlines() if "could not expand" in line]
    assert len(warnings) == 1 and warnings[0].startswith("openclaw: warning: the model could not expand")


def test_expand_without_a_model_is_a_one_line_error(cli) -> None:
    failed = cli("memory", "search", QUESTION, "--expand")
    assert failed.returncode == 1
    assert failed.stderr.startswith("openclaw: error: --expand needs a model")
    assert len(failed.stderr.strip().splitlines()) == 1


def test_expand_with_a_batch_is_a_usage_error(cli, fake) -> None:
    failed = _search(cli, fake, "--batch", "-", "--expand")
    assert failed.returncode == 2
    assert "--expand takes one QUERY" in failed.stderr
    assert fake.expansion_requests == []


def test_a_running_gateway_expands_and_the_cli_loads_neither_model(cli, home, fake) -> None:
    """Through a gateway (started with the model configured) the CLI imports no litellm and no embedder:
    the gateway asks the model and searches; the output is the in-process one."""
    from tests.gateway_helpers import start_gateway
    from tests.import_trace import traced

    del cli  # the seeded copy in `home`
    fake.expand = lambda query: json.dumps({"phrasings": PHRASINGS})
    gateway = start_gateway(home, env=agent_helpers.config_env(fake.url))
    try:
        proc, modules = traced(
            home, "-v", "memory", "search", QUESTION, "--user", "default", "--expand", "--json"
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert "through the gateway at" in proc.stderr
        result = json.loads(proc.stdout)
        assert [r["l0"] for r in result["results"]][:1] == [DARK]
        assert result["expansion"]["asked"] is True and result["expansion"]["phrasings"] == PHRASINGS
        assert {m.split(".")[0] for m in modules} & {"litellm", "onnxruntime", "numpy"} == set()
        assert _asked(fake) == [QUESTION]
        block = run_cli(home, "-v", "memory", "inject", "--query", QUESTION, "--expand")
        assert block.returncode == 0, block.stderr
        assert "through the gateway at" in block.stderr and DARK in block.stdout
    finally:
        gateway.stop()


def test_a_gateway_without_a_model_leaves_the_cli_to_say_so(home) -> None:
    from tests.gateway_helpers import start_gateway

    gateway = start_gateway(home)
    try:
        failed = run_cli(home, "memory", "search", QUESTION, "--expand")
        assert failed.returncode == 1
        assert failed.stderr.startswith("openclaw: error: --expand needs a model")
        assert len(failed.stderr.strip().splitlines()) == 1
    finally:
        gateway.stop()
