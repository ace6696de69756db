"""`session sweep` extracts a session's facts before it archives it (seed 000 §2.3), as the agent's own
reset does; without a model it archives the session and keeps it owed an extraction, which the first sweep
with a model does."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openclaw_cli.core.paths import Home
from openclaw_cli.memory.extraction.archiving import PENDING_FILENAME
from openclaw_cli.sessions.lifecycle import ResetPolicy, SessionManager
from openclaw_cli.sessions.store import SessionStore
from openclaw_cli.sessions.writer import Durability
from tests import fake_openai as fake_server
from tests.agent_helpers import config_env
from tests.conftest import run_cli
from tests.extract_support import memory, reply

fake_openai = fake_server.fake_openai
KEY = "agent:main:telegram:direct:lin"
LONG_AGO = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)  # a daily reset (4:00) has passed since


def _stale_session(home: Path) -> str:
    store = SessionStore(Home(home), "main", Durability("never"))
    try:
        sessions = SessionManager(store, ResetPolicy())
        sessions.append(KEY, "user", "I moved to Lisbon last spring", LONG_AGO, user_id="lin")
        result = sessions.append(KEY, "assistant", "Lisbon is lovely.", LONG_AGO)
        return result.session_id
    finally:
        store.close()


def _extracting(fake: fake_server.FakeOpenAI) -> None:
    fake.respond_with(lambda body: reply(memory("profile", "Lives in Lisbon", [0], attribute="city")))


def _texts(home: Path, env: dict[str, str]) -> list[str]:
    listed = run_cli(home, "memory", "list", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    body = listed.json()
    return [r["l0"] for r in (body["records"] if isinstance(body, dict) else body)]


def _owed(home: Path) -> dict[str, Any]:
    path = Home(home).sessions_dir("main") / PENDING_FILENAME
    return json.loads(path.read_bytes())["sessions"] if path.exists() else {}


def test_a_sweep_extracts_a_session_before_it_archives_it(home: Path, fake_openai: Any) -> None:
    session_id = _stale_session(home)
    _extracting(fake_openai)
    env = config_env(fake_openai.url, embed_url=fake_openai.url)
    swept = run_cli(home, "session", "sweep", "--json", env=env)
    assert swept.returncode == 0, swept.stderr
    [change] = swept.json()
    assert (change["sessionId"], change["extracted"]) == (session_id, 1)
    assert "Lives in Lisbon" in _texts(home, env)
    assert _owed(home) == {}
    shown = run_cli(home, "session", "show", session_id, "--json", env=env)
    assert shown.json()["meta"]["status"] == "archived"
    again = run_cli(home, "session", "sweep", "-q", env=env)
    assert (again.returncode, again.stdout) == (0, "")


def test_without_a_model_the_session_is_archived_owed_and_extracted_by_a_later_sweep(
    home: Path, fake_openai: Any
) -> None:
    session_id = _stale_session(home)
    _extracting(fake_openai)
    without = config_env(None, embed_url=fake_openai.url)
    swept = run_cli(home, "session", "sweep", "--json", env=without)
    assert swept.returncode == 0, swept.stderr
    [change] = swept.json()
    assert change["sessionId"] == session_id and "no model" in change["extractionPending"]
    assert "owed an extraction" in swept.stderr
    assert list(_owed(home)) == [session_id]
    assert fake_openai.requests_to("/chat/completions") == []

    later = run_cli(home, "session", "sweep", env=config_env(fake_openai.url, embed_url=fake_openai.url))
    assert later.returncode == 0, later.stderr
    assert f"{session_id} extracted now that a model is configured (1 memories)" in later.stdout
    assert _owed(home) == {}
    assert "Lives in Lisbon" in _texts(home, without)
