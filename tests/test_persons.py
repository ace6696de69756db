"""Who the memories belong to: `memory status` and `doctor` list the persons with memories per store, and
`doctor` warns (and moves nothing) when conversations wrote memories under the user `default`."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Result, run_cli

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

SHARED = {"OPENCLAW_MEMORY__SHAREUSERMEMORY": "true"}


def add_all(home: Path, *rows: tuple[str, ...], env: dict[str, str] | None = None) -> None:
    """`memory add --batch` of (text, userId[, scope]) rows: one process for all of them."""
    lines = [
        json.dumps({"text": text, "userId": user, **({"scope": scope[0]} if scope else {})})
        for text, user, *scope in rows
    ]
    added = run_cli(home, "memory", "add", "--batch", "-", input="\n".join(lines) + "\n", env=env)
    assert added.returncode == 0, added.stderr


def doctor(home: Path, env: dict[str, str] | None = None) -> tuple[Result, dict]:  # type: ignore[type-arg]
    result = run_cli(home, "doctor", "--json", env=env)
    return result, json.loads(result.stdout)


def test_status_lists_each_person_with_their_live_user_memories(home: Path) -> None:
    add_all(
        home,
        ("likes green tea", "alice"),
        ("runs on sundays", "alice"),
        ("plays the cello", "alice"),
        ("collects stamps", "bob"),
        ("the deploy script lives in tools/", "alice", "agent"),  # agent scope: nobody's own memory
    )
    listed = run_cli(home, "memory", "list", "--user", "alice", "--json").json()
    cello = next(r["id"] for r in listed if r["l0"] == "plays the cello")
    assert run_cli(home, "memory", "delete", cello).returncode == 0  # deleted: not counted
    status = run_cli(home, "memory", "status", "--json")
    assert status.returncode == 0, status.stderr
    expected = [{"userId": "alice", "memories": 2}, {"userId": "bob", "memories": 1}]
    assert status.json()["persons"] == expected
    assert status.json()["databases"][0]["persons"] == expected
    human = run_cli(home, "memory", "status")
    assert "persons: alice 2, bob 1" in human.stdout.splitlines()


def test_status_of_an_empty_home_lists_no_persons(home: Path) -> None:
    status = run_cli(home, "memory", "status", "--json")
    assert status.returncode == 0
    assert (status.json()["persons"], status.json()["databases"]) == ([], [])


def test_status_with_shared_user_memory_lists_the_shared_store_and_each_database(home: Path) -> None:
    add_all(home, ("likes green tea", "alice"))  # before sharing: in the agent's own store
    add_all(home, ("collects stamps", "bob"), ("likes oolong", "alice"), env=SHARED)
    status = run_cli(home, "memory", "status", "--json", env=SHARED).json()
    assert status["persons"] == [{"userId": "alice", "memories": 2}, {"userId": "bob", "memories": 1}]
    by_path = {Path(db["path"]).parent.parent.name: db["persons"] for db in status["databases"]}
    assert by_path == {
        "_shared": [{"userId": "alice", "memories": 1}, {"userId": "bob", "memories": 1}],
        "main": [{"userId": "alice", "memories": 1}],
    }
    human = run_cli(home, "memory", "status", env=SHARED).stdout.splitlines()
    assert "persons: alice 2, bob 1" in human and "  persons: alice 1, bob 1" in human


def test_doctor_lists_the_persons_of_every_agent_and_the_shared_store(home: Path) -> None:
    add_all(home, ("likes green tea", "alice"), ("collects stamps", "bob"))
    add_all(home, ("standup at nine", "telegram:123"), env={"OPENCLAW_AGENT": "work"})
    add_all(home, ("likes oolong", "alice"), env=SHARED)
    result, report = doctor(home)
    assert result.returncode == 0, result.stdout
    persons = {entry["agent"]: entry["persons"] for entry in report["persons"]}
    assert persons == {
        "_shared": [{"userId": "alice", "memories": 1}],
        "main": [{"userId": "alice", "memories": 1}, {"userId": "bob", "memories": 1}],
        "work": [{"userId": "telegram:123", "memories": 1}],
    }
    listed = [f["message"] for f in report["findings"] if f["check"] == "memory.persons"]
    assert listed == ["the shared store: alice 1", "agent main: alice 1, bob 1", "agent work: telegram:123 1"]
    human = run_cli(home, "doctor").stdout
    assert "memory.persons agent work: telegram:123 1" in human


def legacy_gateway_memory(home: Path, text: str, env: dict[str, str] | None = None) -> None:
    """A memory as the gateway wrote it before persons existed: under `default`, from a DM's session."""
    appended = run_cli(home, "session", "append", "agent:main:telegram:direct:9", "hi", "--json", env=env)
    assert appended.returncode == 0, appended.stderr
    session = json.loads(appended.stdout)["sessionId"]
    line = json.dumps(
        {"text": text, "userId": "default", "source": {"kind": "extraction", "sessionId": session}}
    )
    added = run_cli(home, "memory", "add", "--batch", "-", input=line + "\n", env=env)
    assert added.returncode == 0, added.stderr


def test_doctor_warns_about_conversation_memories_under_default_and_moves_nothing(home: Path) -> None:
    legacy_gateway_memory(home, "my favourite tea is sencha")
    # The owner's own: `default` is the owner's id while no owner is configured.
    chat = run_cli(home, "chat", "--local", input="remember that I ride a red bike\n")
    assert chat.returncode == 0 and "Saved to memory: " in chat.stdout, chat.stderr
    assert run_cli(home, "memory", "add", "prefers dark mode").returncode == 0  # the CLI's own: not counted
    result, report = doctor(home)
    assert result.returncode == 0  # a warning, not an error
    [warning] = [f for f in report["findings"] if f["severity"] == "warning"]
    assert warning["check"] == "memory.persons"
    assert warning["message"] == (
        "agent main: 1 memories of user 'default' were written from conversations (sessions, agent tools, "
        "/remember): they belong to whoever was speaking"
    )
    assert warning["hint"].startswith("openclaw --agent main memory reassign --from default --to PERSON")
    [store] = report["persons"]
    assert (store["conversationDefaults"], store["persons"]) == (1, [{"userId": "default", "memories": 3}])
    after = run_cli(home, "memory", "list", "--json").json()
    assert {r["userId"] for r in after} == {"default"}  # nothing was moved
    human = run_cli(home, "doctor")
    assert "fix: openclaw --agent main memory reassign --from default --to PERSON" in human.stdout


def test_once_an_owner_is_configured_every_conversation_memory_under_default_is_reported(home: Path) -> None:
    chat = run_cli(home, "chat", "--local", input="remember that I ride a red bike\n")
    assert chat.returncode == 0, chat.stderr
    _, before = doctor(home)
    assert before["persons"][0]["conversationDefaults"] == 0  # the owner's, while the owner is `default`
    _, after = doctor(home, {"OPENCLAW_OWNER": "alice"})
    assert after["persons"][0]["conversationDefaults"] == 1  # `default` is nobody's now: give it to alice


def test_doctor_hint_for_the_shared_store_depends_on_sharing(home: Path) -> None:
    legacy_gateway_memory(home, "I keep bees", env=SHARED)
    _, shared_on = doctor(home, SHARED)
    [on] = [f["hint"] for f in shared_on["findings"] if f["severity"] == "warning"]
    assert on.startswith("openclaw memory reassign --from default --to PERSON (")
    _, shared_off = doctor(home)
    [off] = [f["hint"] for f in shared_off["findings"] if f["severity"] == "warning"]
    assert off.startswith("openclaw memory reassign --from default --to PERSON --all-agents")
