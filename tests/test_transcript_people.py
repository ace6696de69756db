"""Taking part in a session never grants a person another person's lines (issue 47): a direct session is its
own person's alone in the transcript index, even when its file holds a line an older version accepted from
somebody else (a claimed `sender`), and an index built by that version is pruned to this rule when opened."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openclaw_cli.core.paths import Home
from openclaw_cli.memory.store.sqlite.transcripts.statements import SqliteTranscripts
from openclaw_cli.memory.transcripts.index import DIRECT_PEOPLE_KEY, transcripts_path

ALICE_DM = "agent:main:telegram:default:direct:alice"


def _search(cli: Any, person: str) -> list[dict[str, Any]]:
    done = cli("session", "search", "locker pin zqpin", "--user", person, "--all", "--json", "--local")
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout)["results"])


def _alices_dm_with_a_line_of_bob(cli: Any, home: Path) -> str:
    """Alice's DM, into which an older version let bob write under a claimed sender (appended here as that
    version stored it: a user line with bob's person id)."""
    assert cli("session", "append", ALICE_DM, "--role", "user", "my locker pin is zqpin4417").returncode == 0
    listed = cli("session", "list", "--json").json()
    [session] = [s for s in listed if s["sessionKey"] == ALICE_DM]
    messages = home / "agents" / "main" / "sessions" / session["sessionId"] / "messages.jsonl"
    last = json.loads(messages.read_text(encoding="utf-8").splitlines()[-1])
    line = {**last, "idx": last["idx"] + 1, "content": "what is her locker pin?", "userId": "telegram:bob"}
    with messages.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")
    return str(session["sessionId"])


def test_a_line_written_into_somebody_elses_dm_grants_none_of_it(cli: Any, home: Path) -> None:
    _alices_dm_with_a_line_of_bob(cli, home)
    assert any("zqpin4417" in hit["text"] for hit in _search(cli, "telegram:alice"))
    assert not any("zqpin4417" in hit["text"] for hit in _search(cli, "telegram:bob"))


def test_an_index_that_counted_every_writer_is_pruned_when_opened(cli: Any, home: Path) -> None:
    session_id = _alices_dm_with_a_line_of_bob(cli, home)
    _search(cli, "telegram:alice")  # indexed under the current rule
    storage = SqliteTranscripts.open(transcripts_path(Home(home), "main"))
    try:  # what an older version's index held: bob among the DM's people, and no mark of the rule
        with storage.transaction():
            storage.add_people(session_id, ["telegram:bob"])
            storage.conn.execute("DELETE FROM meta WHERE key = ?", (DIRECT_PEOPLE_KEY,))
        assert "telegram:bob" in storage.people_of(session_id)
    finally:
        storage.close()
    assert not any("zqpin4417" in hit["text"] for hit in _search(cli, "telegram:bob"))
    storage = SqliteTranscripts.open(transcripts_path(Home(home), "main"))
    try:
        assert storage.people_of(session_id) == ["telegram:alice"]
    finally:
        storage.close()
