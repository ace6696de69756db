"""Seed 000 §6.2 trap 1 extended (issue 48 item 1): a changed value is never dropped as a duplicate, on
every write path. Each case (tests/changed_values.py: passport, phone and card numbers, "likes" / "no
longer likes", 3 pm / 4 pm, ¥300 / ¥3000, Lin / Lan, in English and Chinese) is written old value first,
then new, through the write path in process (with no judge, and with a judge that calls everything "the
same"), the agent's memory_add tool, "remember that" in a chat turn, extraction with a fake model on
loopback, `memory add` (the CLI's entry point, in this process for the 40 writes of the cases; real
processes for the passport case), and (real processes) `memory add --batch` and `memory import`. A profile fact
ends with the new value and a history row holding the old one; anything else keeps both. Whatever is
not stored says what it matched (id and words) and why.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.memory.service import MemoryService
from openclaw_cli.memory.writing.candidate import Candidate, WriteOutcome
from openclaw_cli.memory.writing.write_path import write_memories
from tests import fake_openai as fake_server
from tests.changed_values import CHANGES, IDS, Change, expected_live
from tests.conftest import commands_in_process, run_cli
from tests.extract_support import World, memory, reply, settings_for
from tests.memory_helpers import FixedJudge, service_for

fake_openai = fake_server.fake_openai


def live(service: MemoryService, user: str) -> list[str]:
    return sorted(r.l0 for r in service.list_records() if r.user_id == user)


def check_second_write(outcome: WriteOutcome, change: Change, first_id: str | None) -> None:
    """The new value was stored: it replaced a profile fact, or was kept beside anything else; the
    reason names the memory it relates to, by id and words."""
    assert outcome.action == ("merged" if change.replaces else "added"), (outcome.action, outcome.reason)
    assert first_id is not None and first_id in outcome.reason and change.old in outcome.reason, (
        outcome.reason
    )


def check_history(service: MemoryService, change: Change, record_id: str) -> None:
    if change.replaces:
        rows = service.history(record_id)
        assert [row["action"] for row in rows] == ["add", "update"]
        assert rows[-1]["old"]["l0"] == change.old


# ------------------------------------------------------------------------------ the write path in process


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Any:
    found = service_for(tmp_path_factory.mktemp("changed") / "home")
    yield found
    found.close()


@pytest.mark.parametrize("change", CHANGES, ids=IDS)
def test_write_path_keeps_the_new_value_without_a_judge(service: MemoryService, change: Change) -> None:
    user = f"{change.name}-plain"
    [first] = write_memories(service, [Candidate(change.old, change.category, user_id=user)])
    [second] = write_memories(service, [Candidate(change.new, change.category, user_id=user)])
    check_second_write(second, change, first.record_id)
    assert live(service, user) == expected_live(change)
    assert first.record_id is not None
    check_history(service, change, first.record_id)


@pytest.mark.parametrize("change", CHANGES, ids=IDS)
def test_a_judge_calling_it_the_same_cannot_drop_the_new_value(
    service: MemoryService, change: Change
) -> None:
    user = f"{change.name}-judged"
    judge = FixedJudge("same")
    [first] = write_memories(service, [Candidate(change.old, change.category, user_id=user)], judge=judge)
    [second] = write_memories(service, [Candidate(change.new, change.category, user_id=user)], judge=judge)
    assert second.action != "duplicate", second.reason
    assert change.new in live(service, user)


@pytest.mark.parametrize("change", CHANGES, ids=IDS)
def test_the_same_words_again_are_a_duplicate_that_names_what_it_matched(
    service: MemoryService, change: Change
) -> None:
    """Exact duplicates stay exact: the repeated new value is not stored twice, and says which memory it is."""
    user = f"{change.name}-again"
    write_memories(service, [Candidate(change.old, change.category, user_id=user)])
    [second] = write_memories(service, [Candidate(change.new, change.category, user_id=user)])
    [again] = write_memories(
        service,
        [
            Candidate(
                change.new + "。" if "用户" in change.new else change.new + ".", change.category, user_id=user
            )
        ],
    )
    assert again.action == "duplicate" and again.record_id == second.record_id
    assert f'{second.record_id} "{change.new}"' in again.reason
    assert "Not saved again" in again.describe() and change.new in again.describe()
    assert live(service, user) == expected_live(change)


# ------------------------------------------------------------------------------ the agent's memory_add tool


@pytest.mark.parametrize("change", CHANGES, ids=IDS)
def test_memory_add_tool_keeps_the_new_value(service: MemoryService, change: Change) -> None:
    from openclaw_cli.agent.tools.builtin import run_tool

    user = f"{change.name}-tool"

    def add(text: str) -> dict[str, Any]:
        return run_tool("memory_add", json.dumps({"text": text, "category": change.category}), service, user)

    first = add(change.old)
    second = add(change.new)
    assert second["action"] == ("merged" if change.replaces else "added"), second
    assert second["stored"] == change.new and first["id"] in second["reason"]
    assert live(service, user) == expected_live(change)
    again = add(change.new)
    assert again["action"] == "duplicate" and again["stored"] is None and again["matched"] == change.new
    assert second["id"] in again["reason"]


# ------------------------------------------------------------------------------ "remember that" in a turn


@pytest.fixture(scope="module")
def remembered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each case said as two "remember that" messages, written at once (real session, real SQLite)."""
    world = World(tmp_path_factory.mktemp("remember") / "home", settings_for(None))
    try:
        out: dict[str, Any] = {}
        for change in CHANGES:
            person = f"{change.name}-said"
            outcomes = []
            for said in (change.old_said, change.new_said):
                message = world.say(said, sender=person)
                outcomes.append(world.extraction.remember_now(world.session_id, message, person))
            records = [r for r in world.memory.list_records() if r.user_id == person]
            history = {r.id: world.memory.history(r.id) for r in records}
            out[change.name] = (outcomes, sorted(r.l0 for r in records), history)
        return out
    finally:
        world.close()


@pytest.mark.parametrize("change", CHANGES, ids=IDS)
def test_remember_that_keeps_the_new_value(remembered: dict[str, Any], change: Change) -> None:
    outcomes, stored, history = remembered[change.name]
    [[first], [second]] = outcomes
    check_second_write(second, change, first.record_id)
    assert stored == expected_live(change)
    notice = second.describe()
    assert change.new in notice and ("Updated memory" if change.replaces else "Saved to memory") in notice
    if change.replaces:
        assert [row["action"] for row in history[first.record_id]] == ["add", "update"]


def test_remember_that_in_chat_tells_the_person_what_changed(tmp_path: Path) -> None:
    """The issue's session through `openclaw chat --local`: no "ok" with nothing stored."""
    home = tmp_path / "home"
    lines = "\n".join(
        [
            "Remember that my passport number is ALICEV1PASS4417",
            "Remember that my passport number is ALICEHKPASS4417",
            "Remember that my passport number is ALICEWSPASS4417",
            "Remember that my passport number is ALICEWSPASS4417",
        ]
    )
    chat = run_cli(home, "chat", "--local", input=lines + "\n")
    assert chat.returncode == 0, chat.stderr
    assert chat.stdout.count("Saved to memory") == 1 and chat.stdout.count("Updated memory") == 2
    assert "Not saved again" in chat.stdout and "ALICEWSPASS4417" in chat.stdout
    listed = run_cli(home, "memory", "list", "--json").json()
    assert [r["l0"] for r in listed] == ["User's passport number is ALICEWSPASS4417"]


# ------------------------------------------------------------------------------ extraction, fake model


@pytest.mark.parametrize("change", CHANGES, ids=IDS)
def test_extraction_with_a_model_keeps_the_new_value(
    tmp_path: Path, fake_openai: Any, change: Change
) -> None:
    world = World(tmp_path / "home", settings_for(fake_openai.url))
    try:
        reports = []
        for said, l0 in ((change.old_said, change.old), (change.new_said, change.new)):
            message = world.say(
                said.split("that ", 1)[-1].removeprefix("记住")
            )  # told, not asked to remember
            fake_openai.script_chat(reply(memory(change.category, l0, [message["idx"]])))
            reports.append(world.extraction.run(world.session_id))
        [first] = reports[0].outcomes
        [second] = reports[1].outcomes
        assert reports[1].method == "model"
        check_second_write(second, change, first.record_id)
        assert sorted(r.l0 for r in world.records()) == expected_live(change)
    finally:
        world.close()


# ------------------------------------------------------------------------------ the CLI


@pytest.fixture(scope="module")
def cli_home(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every case through `openclaw memory add TEXT --user U -c CATEGORY`, old value then new: the CLI's
    entry point in this process (tests/inprocess.py), 40 commands; the passport test below, the batch
    and the import paths run real processes."""
    home = tmp_path_factory.mktemp("cli") / "home"
    outputs: dict[str, list[Any]] = {}
    with commands_in_process():
        for change in CHANGES:
            user = f"{change.name}-cli"
            outputs[change.name] = [
                run_cli(home, "memory", "add", text, "--user", user, "-c", change.category)
                for text in (change.old, change.new)
            ]
    listed = run_cli(home, "memory", "list", "--json", "--limit", "1000")
    assert listed.returncode == 0, listed.stderr
    return {"home": home, "outputs": outputs, "records": listed.json()}


@pytest.mark.parametrize("change", CHANGES, ids=IDS)
def test_memory_add_keeps_the_new_value(cli_home: dict[str, Any], change: Change) -> None:
    first, second = cli_home["outputs"][change.name]
    assert first.returncode == 0 and second.returncode == 0, (first.stderr, second.stderr)
    first_id = first.stdout.split()[1]
    verb = "updated" if change.replaces else "added"
    assert second.stdout.startswith(verb), second.stdout
    assert first_id in second.stdout and change.old in second.stdout  # which memory, in words
    assert "nothing new stored" not in second.stdout
    stored = sorted(r["l0"] for r in cli_home["records"] if r["userId"] == f"{change.name}-cli")
    assert stored == expected_live(change)


def test_memory_add_the_issues_three_passports(tmp_path: Path) -> None:
    home = tmp_path / "home"

    def add(text: str) -> str:
        done = run_cli(home, "memory", "add", text, "--user", "alice", "-c", "profile")
        assert done.returncode == 0, done.stderr
        return done.stdout

    first = add("User's passport number is ALICEV1PASS4417")
    add("User's passport number is ALICEHKPASS4417")
    third = add("User's passport number is ALICEWSPASS4417")
    assert third.startswith("updated") and "ALICEHKPASS4417 -> ALICEWSPASS4417" in third
    listed = run_cli(home, "memory", "list", "--json").json()
    assert [r["l0"] for r in listed] == ["User's passport number is ALICEWSPASS4417"]
    history = run_cli(home, "memory", "history", first.split()[1], "--json").json()
    assert [h["old"]["l0"] for h in history if h["action"] == "update"] == [
        "User's passport number is ALICEV1PASS4417",
        "User's passport number is ALICEHKPASS4417",
    ]
    again = add("User's passport number is ALICEWSPASS4417")
    assert again.startswith("duplicate: same words as") and "ALICEWSPASS4417" in again


def _batch(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    path.write_text(
        "".join(
            json.dumps({"text": t, "category": c, "userId": u}, ensure_ascii=False) + "\n" for t, c, u in rows
        ),
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def batch_home(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every case's old value in one batch, its new value in a second: a bulk load never merges, so both
    are kept; the repeated line is reported with what it matched."""
    root = tmp_path_factory.mktemp("batch")
    home = root / "home"
    olds = _batch(root / "old.jsonl", [(c.old, c.category, f"{c.name}-batch") for c in CHANGES])
    news = _batch(
        root / "new.jsonl",
        [(c.new, c.category, f"{c.name}-batch") for c in CHANGES]
        + [(CHANGES[0].new, "profile", f"{CHANGES[0].name}-batch")],
    )
    first = run_cli(home, "memory", "add", "--batch", str(olds))
    second = run_cli(home, "memory", "add", "--batch", str(news))
    assert first.returncode == 0 and second.returncode == 0, (first.stderr, second.stderr)
    listed = run_cli(home, "memory", "list", "--json", "--limit", "1000").json()
    return {"root": root, "home": home, "second": second, "records": listed}


@pytest.mark.parametrize("change", CHANGES, ids=IDS)
def test_memory_add_batch_keeps_the_new_value(batch_home: dict[str, Any], change: Change) -> None:
    stored = sorted(r["l0"] for r in batch_home["records"] if r["userId"] == f"{change.name}-batch")
    assert stored == sorted([change.old, change.new])


def test_memory_add_batch_says_what_a_repeated_line_matched(batch_home: dict[str, Any]) -> None:
    out = batch_home["second"].stdout
    assert out.startswith(f"added {len(CHANGES)}, 1 duplicates of stored memories")
    assert f"line {len(CHANGES) + 1}: same words as mem-" in out and CHANGES[0].new in out


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A home with each case's old value imports an export holding the new ones (import dedups exactly,
    so a changed value is imported beside the old one), then another home's export of the same words."""
    root = tmp_path_factory.mktemp("import")
    source, target = root / "source", root / "target"
    olds = _batch(root / "old.jsonl", [(c.old, c.category, f"{c.name}-import") for c in CHANGES])
    news = _batch(root / "new.jsonl", [(c.new, c.category, f"{c.name}-import") for c in CHANGES])
    assert run_cli(target, "memory", "add", "--batch", str(olds)).returncode == 0
    assert run_cli(source, "memory", "add", "--batch", str(news)).returncode == 0
    exported = root / "export.json"
    assert run_cli(source, "memory", "export", "-o", str(exported)).returncode == 0
    # The same words under other ids, from another home: each is a duplicate of a stored memory.
    twin, exported_twin = root / "twin", root / "twin.json"
    assert run_cli(twin, "memory", "add", "--batch", str(news)).returncode == 0
    assert run_cli(twin, "memory", "export", "-o", str(exported_twin)).returncode == 0
    first = run_cli(target, "memory", "import", str(exported))
    again = run_cli(target, "memory", "import", str(exported_twin))
    assert first.returncode == 0 and again.returncode == 0, (first.stderr, again.stderr)
    listed = run_cli(target, "memory", "list", "--json", "--limit", "1000").json()
    return {"first": first, "again": again, "records": listed}


@pytest.mark.parametrize("change", CHANGES, ids=IDS)
def test_memory_import_keeps_the_new_value(imported: dict[str, Any], change: Change) -> None:
    stored = sorted(r["l0"] for r in imported["records"] if r["userId"] == f"{change.name}-import")
    assert stored == sorted([change.old, change.new])


def test_memory_import_says_what_each_skipped_record_matched(imported: dict[str, Any]) -> None:
    assert f"imported {len(CHANGES)} of {len(CHANGES)}" in imported["first"].stdout
    again = imported["again"].stdout
    assert f"{len(CHANGES)} duplicates" in again
    assert again.count("same words as mem-") == len(CHANGES)


# ------------------------------------------------------------------------------ background extraction


def test_what_background_extraction_did_not_store_is_told_at_the_next_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a turn, extraction runs in the background (fake model on loopback, each "FACT" line a
    memory); a repeated fact is not stored again, and the next turn says so, with what it matched."""
    from openclaw_cli.agent.runtime import AgentRuntime
    from openclaw_cli.core.paths import Home
    from tests.agent_helpers import ScriptedModel, WindowedFakeOpenAI, chat_settings, turn

    monkeypatch.setenv("OPENAI_API_KEY", fake_server.FAKE_API_KEY)
    server = WindowedFakeOpenAI().start()
    model = ScriptedModel()
    server.respond_with(model)
    memory_settings = {"extraction": {"coalesceSeconds": 0}}
    runtime = AgentRuntime(Home(tmp_path / "home"), chat_settings(server.url, memory=memory_settings))
    try:
        extraction = runtime.services("main").extraction
        first, _ = turn(runtime, "FACT passport ALICEHKPASS4417", run_id="r1")
        assert extraction.wait_idle()
        turn(runtime, "FACT passport ALICEHKPASS4417", run_id="r2")
        assert extraction.wait_idle()
        _, events = turn(runtime, "thanks", run_id="r3")
        notices = [n["text"] for n in events.of("notice")]
        [told] = [n for n in notices if n.startswith("Memory extraction:")]
        [stored] = runtime.services("main").memory.list_records()
        assert "Not saved again" in told and f'same words as {stored.id} "{stored.l0}"' in told
        assert first.status == "ok"
    finally:
        runtime.close()
        server.stop()


def test_chat_remember_command_keeps_a_changed_value_and_names_a_repeat(tmp_path: Path) -> None:
    home = tmp_path / "home"
    lines = "\n".join(
        [
            "/remember passport number ALICEHKPASS4417",
            "/remember passport number ALICEWSPASS4417",
            "/remember passport number ALICEWSPASS4417",
        ]
    )
    chat = run_cli(home, "chat", "--local", input=lines + "\n")
    assert chat.returncode == 0, chat.stderr
    assert chat.stdout.count("remembered mem-") == 2
    assert (
        "duplicate: same words as mem-" in chat.stdout and '"passport number ALICEWSPASS4417"' in chat.stdout
    )
    listed = run_cli(home, "memory", "list", "--json").json()
    assert sorted(r["l0"] for r in listed) == [
        "passport number ALICEHKPASS4417",
        "passport number ALICEWSPASS4417",
    ]
