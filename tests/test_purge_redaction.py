"""Purging a person from shared sessions: their messages (and the replies to them) redacted in place,
everyone else's intact, summaries built from them dropped; exports under the home cleaned; a person
nobody knows refused with the known ones listed, with or without a running gateway."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.security.files import read_document, read_lines
from tests.conftest import Result, run_cli
from tests.encrypted_homes import KINDS, files_holding, prepare
from tests.fake_openai import FAKE_API_KEY, FakeOpenAI
from tests.gateway_helpers import Gateway, echo_last_user, request, running_gateway, write_config

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

P = "plumquokka"
Q = "tealwombat"
LINKS = {"pat": ["telegram:pat_tg"], "quinn": ["telegram:quinn_tg"]}
EARLY = "agent:main:telegram:default:group:early"  # P speaks before the summary's checkpoint
LATE = "agent:main:telegram:default:group:late"  # P speaks only after it
ENV = {"OPENAI_API_KEY": FAKE_API_KEY}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    server.respond_with(echo_last_user)  # a summary then quotes the transcript it was given
    yield server
    server.stop()


@pytest.fixture
def home(tmp_path: Path, fake: FakeOpenAI) -> Path:
    home = tmp_path / "home"
    write_config(home, fake, session={"identityLinks": LINKS})
    return home


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """One gateway for the tests of purges it refuses (they change nothing, so they can share it), on a
    home holding Quinn's memory: no model, as nothing there reaches one (a configured model is preloaded
    at the gateway's start: litellm's import, seconds of CPU)."""
    home = tmp_path_factory.mktemp("served") / "home"
    write_config(home, None, llm={"model": None}, session={"identityLinks": LINKS})
    ok(home, "memory", "add", "quinn likes tea", "--user", "quinn")
    with running_gateway(home) as gw:
        yield gw


@pytest.fixture(scope="module", params=KINDS)
def built(tmp_path_factory: pytest.TempPathFactory, fake: FakeOpenAI, request: pytest.FixtureRequest) -> Path:
    """A home holding the two group conversations, plain and encrypted (built once each; each test gets
    its own copy)."""
    home = prepare(tmp_path_factory.mktemp("built") / "home", request.param)
    write_config(home, fake, session={"identityLinks": LINKS})
    _conversations(home)
    return home


@pytest.fixture
def talked(tmp_path: Path, built: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(built, home, symlinks=True)
    return home


def cli(home: Path, *args: str) -> Result:
    return run_cli(home, *args, env=ENV)


def ok(home: Path, *args: str) -> Result:
    done = cli(home, *args)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def say(home: Path, key: str, who: str | None, text: str) -> None:
    """A group message from `who` (a telegram sender), or the assistant's reply when `who` is None."""
    if who is None:
        ok(home, "session", "append", key, "--role", "assistant", text)
    else:
        ok(home, "session", "append", key, "--role", "user", "--sender", who, text)


def messages(home: Path, key: str) -> list[dict[str, Any]]:
    shown = ok(home, "session", "show", key, "--json").json()
    assert shown["problems"] == []
    return [{k: v for k, v in m.items() if k != "tokens"} for m in shown["messages"]]  # counted on show


def context(home: Path, key: str) -> dict[str, Any]:
    session_id = ok(home, "session", "show", key, "--json").json()["meta"]["sessionId"]
    path = home / "agents" / "main" / "sessions" / session_id / "context.json"
    return dict(json.loads(read_document(path)))  # sealed in an encrypted home


def purge(home: Path, user: str = "pat") -> Result:
    return cli(home, "memory", "purge", "--user", user, "--sessions", "--yes", "--json")


def _conversations(home: Path) -> None:
    say(home, EARLY, "pat_tg", f"pat asks about {P} one")
    say(home, EARLY, None, f"echo: pat asks about {P} one")
    say(home, EARLY, "quinn_tg", f"quinn says {Q} one")
    say(home, EARLY, None, f"echo: quinn says {Q} one")
    say(home, EARLY, "pat_tg", f"pat again {P} two")
    say(home, EARLY, None, f"echo: pat again {P} two")
    say(home, EARLY, "quinn_tg", f"quinn last {Q} two")
    say(home, EARLY, None, "noted")
    ok(home, "session", "compact", EARLY)  # covers both of P's exchanges
    say(home, EARLY, "quinn_tg", f"quinn later {Q} three")
    say(home, EARLY, None, "sure")
    ok(home, "session", "compact", EARLY)  # the first summary moves to summaries.jsonl
    for n in range(2):
        say(home, LATE, "quinn_tg", f"quinn alone {Q} {n}")
        say(home, LATE, None, f"echo: quinn alone {Q} {n}")
    ok(home, "session", "compact", LATE)
    say(home, LATE, "pat_tg", f"pat arrives late {P} three")
    say(home, LATE, None, f"echo: pat arrives late {P} three")


def test_the_persons_lines_are_redacted_in_place_and_everyone_elses_are_kept(talked: Path) -> None:
    home = talked
    before = {key: messages(home, key) for key in (EARLY, LATE)}
    done = purge(home)
    assert done.returncode == 0, done.stderr
    report = done.json()
    assert (report["sessions"], report["redactedSessions"], report["redactedMessages"]) == (0, 2, 6)
    for key in (EARLY, LATE):
        after = messages(home, key)
        assert [(m["idx"], m["role"], m["ts"]) for m in after] == [
            (m["idx"], m["role"], m["ts"]) for m in before[key]
        ]
        for old, new in zip(before[key], after, strict=True):
            if P in old["content"]:
                assert new == {
                    "idx": old["idx"],
                    "role": old["role"],
                    "content": "[purged]",
                    "ts": old["ts"],
                    "purged": True,
                }
            else:
                assert new == old  # Q's words, their replies and who said them are intact
    assert files_holding(home, P.encode()) == []  # on disk, and decrypted in an encrypted home
    assert "quinn" in ok(home, "session", "show", EARLY).stdout  # the text view reads it too


def test_a_summary_is_dropped_only_when_it_was_built_from_the_persons_messages(talked: Path) -> None:
    home = talked
    early, late = context(home, EARLY), context(home, LATE)
    assert P in early["summary"] and P not in late["summary"]
    early_dir = (
        home
        / "agents"
        / "main"
        / "sessions"
        / ok(home, "session", "show", EARLY, "--json").json()["meta"]["sessionId"]
    )
    assert P.encode() in read_lines(early_dir / "summaries.jsonl")
    report = purge(home).json()
    assert report["summariesDropped"] == 2  # context.json's and the older one in summaries.jsonl
    assert context(home, EARLY) == {"summary": None, "summaryCheckpoint": None}
    assert not (early_dir / "summaries.jsonl").exists()
    assert context(home, LATE) == late  # built from Q's messages only: kept
    meta = ok(home, "session", "show", EARLY, "--json").json()["meta"]
    assert meta["summaryCheckpoint"] is None
    assert ok(home, "session", "compact", EARLY).returncode == 0  # rebuilt from what is left
    assert P not in context(home, EARLY)["summary"] and Q in context(home, EARLY)["summary"]


def test_doctor_finds_the_redacted_sessions_consistent(talked: Path) -> None:
    home = talked
    assert purge(home).returncode == 0
    doctor = cli(home, "doctor", "--json")
    findings = [f for f in json.loads(doctor.stdout)["findings"] if f["check"].startswith("sessions")]
    assert findings and all(f["severity"] == "ok" for f in findings), findings


def test_exports_written_inside_the_home_lose_the_persons_words(home: Path) -> None:
    ok(home, "memory", "add", f"pat's badge is {P}", "--user", "pat")
    ok(home, "memory", "add", f"quinn's badge is {Q}", "--user", "quinn")
    say(home, EARLY, "pat_tg", f"pat asks about {P} one")
    say(home, EARLY, "quinn_tg", f"quinn says {Q} one")
    exports = home / "exports"
    exports.mkdir(mode=0o700)
    for name, fmt in (("memories.json", "json"), ("memories.jsonl", "jsonl")):
        ok(home, "memory", "export", "--format", fmt, "-o", str(exports / name))
    ok(home, "session", "export", EARLY, "-o", str(exports / "group.jsonl"))
    report = purge(home).json()
    assert sorted(Path(f).name for f in report["files"]) == ["group.jsonl", "memories.json", "memories.jsonl"]
    for name in ("memories.json", "memories.jsonl", "group.jsonl"):
        text = (exports / name).read_text(encoding="utf-8")
        assert P not in text and Q in text, name
    other = run_cli(home.parent / "other", "memory", "import", str(exports / "memories.jsonl"), "--json")
    assert other.returncode == 0, other.stderr  # still a whole export: its end line counts one record
    moved = run_cli(home.parent / "other", "session", "import", str(exports / "group.jsonl"))
    assert moved.returncode == 0, moved.stderr  # the session export is still whole


def test_an_address_linked_to_a_name_purges_the_name(home: Path) -> None:
    say(home, EARLY, "pat_tg", f"pat asks about {P} one")
    say(home, EARLY, "quinn_tg", f"quinn says {Q} one")
    done = purge(home, "telegram:pat_tg")
    assert done.returncode == 0, done.stderr
    assert done.json()["user"] == "pat" and done.json()["redactedMessages"] == 1


def test_a_person_nobody_knows_is_refused_and_the_known_ones_are_listed(home: Path) -> None:
    say(home, EARLY, "pat_tg", f"pat asks about {P} one")
    ok(home, "memory", "add", "quinn likes tea", "--user", "quinn")
    done = purge(home, "zed")
    assert done.returncode == 1 and done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert "nothing is known of 'zed'" in line and "known persons: pat, quinn" in line
    assert P in messages(home, EARLY)[0]["content"]  # nothing was touched


def test_a_person_nobody_knows_is_refused_by_a_running_gateway_too(served: Gateway) -> None:
    done = purge(served.home, "zed")
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("openclaw: error: nothing is known of 'zed'") and "known persons: quinn" in line


def test_the_gateway_method_refuses_a_flag_that_is_not_a_boolean(served: Gateway) -> None:
    with served.ws() as conn:
        reply = request(conn, "memory.purge", {"userId": "quinn", "allAgents": "yes"})
    assert reply["ok"] is False and reply["error"]["code"] == "INVALID_PARAMS"
    assert "allAgents" in reply["error"]["message"]


def test_the_gateway_method_refuses_a_request_without_a_person(served: Gateway) -> None:
    with served.ws() as conn:
        reply = request(conn, "memory.purge", {"sessions": True})
    assert reply["ok"] is False and reply["error"]["code"] == "INVALID_PARAMS"
    assert "userId" in reply["error"]["message"]


def test_a_writer_that_kept_the_old_file_open_appends_to_the_redacted_one(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from openclaw_cli.config.loading import Settings
    from openclaw_cli.core.paths import Home
    from openclaw_cli.sessions.keys import parse_key
    from openclaw_cli.sessions.store import SessionStore
    from openclaw_cli.sessions.upkeep.redact import redact_session

    settings = Settings.model_validate({"session": {"identityLinks": LINKS}})
    now = datetime(2026, 3, 1, 12, tzinfo=UTC)
    writing = SessionStore(Home(tmp_path / "home"), "main")  # like the gateway's, open all along
    session_id = writing.create_session(parse_key(EARLY), now)["sessionId"]
    writing.append(session_id, "user", f"pat says {P}", now, sender="pat_tg", user_id="pat")
    writing.append(session_id, "assistant", f"echo: pat says {P}", now)
    writing.append(session_id, "user", f"quinn says {Q}", now, sender="quinn_tg", user_id="quinn")
    purging = SessionStore(Home(tmp_path / "home"), "main")
    assert redact_session(purging, session_id, "pat", settings).messages == 2
    stored = writing.append(session_id, "assistant", f"echo: quinn says {Q}", now)
    assert stored["idx"] == 3
    writing.close()
    view = purging.read_session(session_id)
    assert [m["content"] for m in view.messages] == [
        "[purged]",
        "[purged]",
        f"quinn says {Q}",
        f"echo: quinn says {Q}",
    ]
    assert view.problems == [] and view.meta["messageCount"] == 4 and view.meta["nextIdx"] == 4
    purging.close()


def test_a_tool_call_answering_the_person_is_redacted_with_its_result_and_stays_paired(
    tmp_path: Path,
) -> None:
    from datetime import UTC, datetime

    from openclaw_cli.config.loading import Settings
    from openclaw_cli.core.paths import Home
    from openclaw_cli.sessions.budget.context import group_units
    from openclaw_cli.sessions.keys import parse_key
    from openclaw_cli.sessions.store import SessionStore
    from openclaw_cli.sessions.upkeep.redact import redact_session

    settings = Settings.model_validate({"session": {"identityLinks": LINKS}})
    now = datetime(2026, 3, 1, 12, tzinfo=UTC)
    store = SessionStore(Home(tmp_path / "home"), "main")
    session_id = store.create_session(parse_key(EARLY), now)["sessionId"]
    store.append(session_id, "user", f"please store {P}", now, sender="pat_tg", user_id="pat")
    call = {
        "id": "call-1",
        "type": "function",
        "function": {"name": "memory_add", "arguments": f'{{"text": "{P}"}}'},
    }
    store.append(session_id, "assistant", "", now, tool_calls=[call])
    store.append(session_id, "tool", json.dumps({"stored": P}), now, tool_call_id="call-1")
    store.append(session_id, "assistant", f"stored {P}", now)
    store.append(session_id, "user", f"quinn says {Q}", now, sender="quinn_tg", user_id="quinn")
    assert redact_session(store, session_id, "pat", settings).messages == 4
    messages = store.read_messages(session_id).messages
    assert P not in json.dumps(messages)
    assert messages[1]["toolCalls"] == [
        {"id": "call-1", "type": "function", "function": {"name": "memory_add", "arguments": "{}"}}
    ]
    assert messages[2]["toolCallId"] == "call-1"
    assert [len(unit) for unit in group_units(messages)] == [1, 2, 1, 1]  # the call keeps its result
    store.close()
