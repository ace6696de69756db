"""Issue 25, "everything else works unchanged": doctor's persons, extraction with dedup and merge, reflect and
inject give the same outcomes on the postgres backend as on SQLite. Real CLI processes, the real test server,
the fake model on loopback (the only stand-in)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests import fake_openai as fake_server
from tests.conftest import Result, run_cli
from tests.extract_support import memory, reply
from tests.fake_openai import FAKE_API_KEY, FakeOpenAI
from tests.reflect_helpers import summarising_model

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

fake_openai = fake_server.fake_openai
Cli = Callable[..., Result]
KEY = "agent:main:telegram:direct:lin"


def on_server(dsn: str) -> dict[str, str]:
    return {"OPENCLAW_MEMORY__BACKEND": "postgres", "OPENCLAW_MEMORY__POSTGRES__DSN": dsn}


def model_env(fake: FakeOpenAI) -> dict[str, str]:
    return {
        "OPENCLAW_LLM__MODEL": "openai/fake",
        "OPENCLAW_LLM__APIBASE": fake.url,
        "OPENCLAW_LLM__MAXRETRIES": "0",
        "OPENAI_API_KEY": FAKE_API_KEY,
    }


@pytest.fixture(params=["sqlite", "postgres"])
def backend_cli(request: pytest.FixtureRequest, home: Path) -> Cli:
    """The real CLI for this home, its memory in a SQLite file or on a fresh database of the test server."""
    backend = {} if request.param == "sqlite" else on_server(request.getfixturevalue("pg_dsn"))

    def _run(*args: str, env: dict[str, str] | None = None, **kwargs: Any) -> Result:
        return run_cli(home, *args, env={**backend, **(env or {})}, **kwargs)

    return _run


def server_rows(dsn: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn) as conn:
        conn.execute("SET search_path = openclaw_main, public")
        return conn.execute(sql).fetchall()  # type: ignore[arg-type]


# -- doctor ---------------------------------------------------------------------------------------------


def test_doctor_lists_the_persons_of_every_store_on_the_server(home: Path, pg_dsn: str) -> None:
    env = on_server(pg_dsn)
    for text, user in (("likes green tea", "alice"), ("collects stamps", "bob")):
        assert run_cli(home, "memory", "add", text, "-u", user, env=env).returncode == 0
    work = {**env, "OPENCLAW_AGENT": "work"}
    assert run_cli(home, "memory", "add", "standup at nine", "-u", "telegram:123", env=work).returncode == 0
    result = run_cli(home, "doctor", "--json", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    report = result.json()
    persons = {entry["agent"]: entry["persons"] for entry in report["persons"]}
    assert persons == {
        "main": [{"userId": "alice", "memories": 1}, {"userId": "bob", "memories": 1}],
        "work": [{"userId": "telegram:123", "memories": 1}],
    }
    listed = [f for f in report["findings"] if f["check"] == "memory.persons"]
    assert [f["message"] for f in listed] == ["agent main: alice 1, bob 1", "agent work: telegram:123 1"]
    assert all("openclaw_" in f["path"] and "postgresql://" in f["path"] for f in listed)
    assert not (home / "agents" / "main" / "memory" / "memory.sqlite").exists()


def test_doctor_with_the_server_down_lists_no_persons_in_one_warning(home: Path, tmp_path: Path) -> None:
    nowhere = f"postgresql://amy:hidden@/memory?host={tmp_path}"  # a socket directory no server listens in
    result = run_cli(home, "doctor", "--json", env=on_server(nowhere))
    assert "Traceback" not in result.stderr and "hidden" not in result.stdout + result.stderr
    [listed] = [f for f in result.json()["findings"] if f["check"] == "memory.persons"]
    assert listed["severity"] == "warning" and "cannot reach PostgreSQL" in listed["message"]


# -- extraction with dedup and merge, reflect, inject: the same outcomes on both backends ----------------


def say(cli: Cli, text: str) -> None:
    assert cli("session", "append", KEY, text).returncode == 0


def extract(cli: Cli, fake: FakeOpenAI, *facts: dict[str, Any]) -> list[tuple[str, str]]:
    fake.script_chat(reply(*facts))
    result = cli("memory", "extract", "--session", KEY, "--json", env=model_env(fake))
    assert result.returncode == 0, result.stderr
    return [(o["action"], o["l0"]) for o in result.json()["outcomes"]]


def test_extraction_dedups_and_merges_with_history(backend_cli: Cli, fake_openai: FakeOpenAI) -> None:
    say(backend_cli, "I live in Lisbon and drink green tea every morning.")
    first = extract(
        backend_cli,
        fake_openai,
        memory("profile", "User lives in Lisbon", [0], attribute="city"),
        memory("preference", "User drinks green tea every morning", [0]),
    )
    assert first == [("added", "User lives in Lisbon"), ("added", "User drinks green tea every morning")]
    say(backend_cli, "I moved to Porto last month. Green tea every morning, still.")
    second = extract(
        backend_cli,
        fake_openai,
        memory("profile", "User moved to Porto last month", [1], attribute="city"),
        memory("preference", "User drinks green tea every morning", [1]),
    )
    assert second == [
        ("merged", "User moved to Porto last month"),
        ("duplicate", "User drinks green tea every morning"),
    ]
    listed = {r["l0"]: r["id"] for r in backend_cli("memory", "list", "--json").json()}
    assert set(listed) == {"User moved to Porto last month", "User drinks green tea every morning"}
    history = backend_cli("memory", "history", listed["User moved to Porto last month"], "--json").json()
    assert [h["action"] for h in history] == ["add", "update"]
    assert history[1]["old"]["l0"] == "User lives in Lisbon"


def test_extraction_on_the_server_keeps_the_overwritten_value_in_its_history_table(
    home: Path, pg_dsn: str, fake_openai: FakeOpenAI
) -> None:
    def cli(*args: str, env: dict[str, str] | None = None, **kwargs: Any) -> Result:
        return run_cli(home, *args, env={**on_server(pg_dsn), **(env or {})}, **kwargs)

    say(cli, "I live in Lisbon.")
    extract(cli, fake_openai, memory("profile", "User lives in Lisbon", [0], attribute="city"))
    say(cli, "I moved to Porto.")
    extract(cli, fake_openai, memory("profile", "User lives in Porto", [1], attribute="city"))
    assert server_rows(pg_dsn, "SELECT l0 FROM records") == [("User lives in Porto",)]
    actions = server_rows(pg_dsn, "SELECT action, old_value LIKE '%Lisbon%' FROM history ORDER BY seq")
    assert actions == [("add", None), ("update", True)]


def add_dated(cli: Cli) -> None:
    lines = "\n".join(
        f'{{"text": "{text}", "category": "preference", "createdAt": "2026-01-0{n + 1}T10:00:00Z"}}'
        for n, text in enumerate(["prefers dark mode", "picked a dark Slack theme", "likes minimal UIs"])
    )
    assert cli("memory", "add", "--batch", "-", input=lines + "\n").returncode == 0


def test_reflect_writes_an_insight_and_marks_its_evidence(backend_cli: Cli, fake_openai: FakeOpenAI) -> None:
    add_dated(backend_cli)
    fake_openai.respond_with(summarising_model)
    result = backend_cli("reflect", env=model_env(fake_openai))
    assert result.returncode == 0, result.stderr
    assert "wrote 1 insight from 1 model call, 3 memories marked reflected" in result.stdout
    insights = backend_cli("memory", "list", "--category", "insight", "--json").json()
    assert [r["attribute"] for r in insights] == ["preference pattern"]
    evidence = backend_cli("memory", "list", "--category", "preference", "--json").json()
    assert len(evidence) == 3 and all(r["reflectedAt"] for r in evidence)
    again = backend_cli("reflect", "--if-due", env=model_env(fake_openai))
    assert again.returncode == 0 and len(fake_openai.requests_to("/chat/completions")) == 1


def test_inject_prints_the_block_and_leaves_fsrs_alone(backend_cli: Cli) -> None:
    added = backend_cli("memory", "add", "User prefers TypeScript over Java", "-c", "preference", "--json")
    backend_cli("memory", "add", "The server room is on floor 3", "-c", "note")
    result = backend_cli("memory", "inject", "--query", "TypeScript or Java?", "--json")
    assert result.returncode == 0, result.stderr
    block = result.json()
    assert block["recordIds"] == [added.json()["id"]]
    assert "User prefers TypeScript over Java" in block["text"]
    after = backend_cli("memory", "get", added.json()["id"], "--json").json()
    assert after["fsrs"]["reps"] == added.json()["fsrs"]["reps"]


def test_extraction_merges_a_similar_memory_when_the_model_judges_it_an_update(
    backend_cli: Cli, fake_openai: FakeOpenAI
) -> None:
    """The grey zone, widened so that these two are in it: the model, as judge, says update."""
    grey = {"OPENCLAW_MEMORY__DEDUP__NEWBELOW": "0.5", "OPENCLAW_MEMORY__DEDUP__DUPLICATEABOVE": "0.97"}
    env = {**model_env(fake_openai), **grey}
    old, new = "User drinks coffee every morning", "User gave up coffee and drinks tea in the morning now"
    for n, (said, fact) in enumerate([("Coffee every morning!", old), ("No more coffee, tea now.", new)]):
        say(backend_cli, said)
        judged = ['{"verdict": "update"}'] if n else []  # the first has no neighbour to judge against
        fake_openai.script_chat(reply(memory("preference", fact, [n])), *judged)
        result = backend_cli("memory", "extract", "--session", KEY, "--json", env=env)
        assert result.returncode == 0, result.stderr
        [outcome] = result.json()["outcomes"]
    assert (outcome["action"], outcome["l0"]) == ("merged", new)
    assert len(fake_openai.requests_to("/chat/completions")) == 3  # two extractions, one judgement
    [record] = backend_cli("memory", "list", "--json").json()
    history = backend_cli("memory", "history", record["id"], "--json").json()
    assert [h["action"] for h in history] == ["add", "update"] and history[1]["old"]["l0"] == old
