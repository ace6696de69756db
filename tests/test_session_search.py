"""Session transcript search (issue 24): the index follows the session files, search uses the memory engine,
and a person finds only the sessions they took part in. Real session files, real SQLite, the real embedder
(in-process here; the CLI and the gateway in test_session_search_cli.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.core.errors import InvalidInput, NotFound
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.store.sqlite.transcripts.statements import SqliteTranscripts
from openclaw_cli.memory.transcripts.filters import parse_bound, viewer_filter
from openclaw_cli.memory.transcripts.index import transcripts_path
from openclaw_cli.memory.transcripts.search import TranscriptRequest
from openclaw_cli.sessions.store import SessionStore
from tests.transcript_helpers import ALICE_KEY, BOB_KEY, OWNER_KEY, at, open_index, search, write_dialogues


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, dict[str, list[str]]]]:
    home = tmp_path_factory.mktemp("transcripts") / "home"
    ids = write_dialogues(home)
    index, service = open_index(home)
    try:
        yield index, ids
    finally:
        index.close()
        service.close()


def _texts(hits: list[Any]) -> list[str]:
    return [hit.turn.text for hit in hits]


def test_a_turn_is_found_by_its_words_with_its_place_and_context(seeded: Any) -> None:
    index, ids = seeded
    hits = search(index, "Lisbon trip")
    top = hits[0]
    assert top.turn.text.startswith("Can you help me plan the Lisbon trip")
    assert (top.turn.session_key, top.turn.session_id, top.turn.index) == (ALICE_KEY, ids[ALICE_KEY][0], 0)
    assert (
        top.turn.role == "user" and top.turn.sender == "alice" and top.turn.ts == "2026-03-03T10:00:00.000Z"
    )
    assert top.before is None and top.after is not None and top.after.text.startswith("Of course. Lisbon")
    assert 0 < top.score <= 1


def test_the_json_of_a_hit_has_the_documented_fields(seeded: Any) -> None:
    index, _ = seeded
    request = TranscriptRequest("dentist appointment moved", 3, viewer_filter(None, owner="default"))
    found = index.search(request).to_dict(request)["results"][0]
    for name in ("sessionKey", "sessionId", "index", "role", "sender", "ts", "text", "score"):
        assert name in found
    assert found["context"]["after"]["text"] == "Noted: the dentist on Friday at nine."


def test_a_paraphrase_finds_the_turn_by_meaning(seeded: Any) -> None:
    index, _ = seeded
    assert "My dentist appointment moved to Friday at nine." in _texts(
        search(index, "when do I see the tooth doctor")
    )


def test_an_english_question_finds_a_chinese_turn(seeded: Any) -> None:
    index, _ = seeded
    hits = search(index, "where am I going on a business trip next week?", "alice")
    assert hits and "上海出差" in hits[0].turn.text


def test_a_chinese_query_finds_a_chinese_turn(seeded: Any) -> None:
    index, _ = seeded
    assert "上海" in search(index, "上海出差", "alice")[0].turn.text


def test_a_nonsense_query_finds_nothing(seeded: Any) -> None:
    index, _ = seeded
    assert search(index, "xyzzy plugh frobnicate") == []


def test_an_archived_session_stays_searchable(seeded: Any) -> None:
    index, ids = seeded
    store = SessionStore(index.home, "main")
    try:
        assert store.read_meta(ids[ALICE_KEY][0])["status"] == "archived"
    finally:
        store.close()
    assert search(index, "hotel in Alfama")[0].turn.session_id == ids[ALICE_KEY][0]


def test_a_session_key_covers_its_archived_sessions(seeded: Any) -> None:
    index, ids = seeded
    hits = search(index, "Lisbon Shanghai 上海 trip", sessions=[ALICE_KEY.upper()], all_results=True)
    assert hits and {hit.turn.session_id for hit in hits} <= set(ids[ALICE_KEY])


def test_a_session_id_narrows_to_that_session(seeded: Any) -> None:
    index, ids = seeded
    hits = search(index, "Lisbon 上海", sessions=[ids[ALICE_KEY][1]], all_results=True)
    assert hits and {hit.turn.session_id for hit in hits} == {ids[ALICE_KEY][1]}


def test_role_keeps_one_side_of_the_conversation(seeded: Any) -> None:
    index, _ = seeded
    hits = search(index, "dentist Friday", role="assistant")
    assert [hit.turn.role for hit in hits] == ["assistant"]


def test_since_and_until_keep_the_days_asked_for(seeded: Any) -> None:
    index, _ = seeded
    words = "Lisbon dentist report 上海"
    days = {
        hit.turn.ts[:10]
        for hit in search(
            index,
            words,
            since=parse_bound("2026-03-04", end=False),
            until=parse_bound("2026-03-05", end=True),
            all_results=True,
        )
    }
    assert days and days <= {"2026-03-04", "2026-03-05"}


# -- who may see what -------------------------------------------------------------------------------


def test_two_people_never_see_each_others_transcripts(seeded: Any) -> None:
    index, ids = seeded
    for query in ("dentist appointment Friday", "when do I see the tooth doctor", "quarterly report"):
        found = search(index, query, "alice", all_results=True)
        assert {hit.turn.session_key for hit in found} <= {ALICE_KEY}, _texts(found)
    for query in ("Lisbon trip", "上海出差", "where am I travelling next week"):
        found = search(index, query, "bob", all_results=True)
        assert all(hit.turn.session_key == BOB_KEY for hit in found), _texts(found)
        assert all((hit.before is None or hit.before.session_key == BOB_KEY) for hit in found)


def test_a_person_cannot_widen_their_view_with_a_user_filter(seeded: Any) -> None:
    with pytest.raises(InvalidInput):
        viewer_filter("alice", owner="default", filter_user="bob")


def test_a_person_cannot_search_another_persons_session_by_key(seeded: Any) -> None:
    index, _ = seeded
    assert search(index, "dentist", "alice", sessions=[BOB_KEY], all_results=True) == []


def test_the_owner_finds_everything(seeded: Any) -> None:
    index, _ = seeded
    assert search(index, "dentist appointment", "default")
    assert search(index, "Lisbon trip", "default")
    assert search(index, "quarterly report", "default")


def test_the_operator_filters_by_person(seeded: Any) -> None:
    index, _ = seeded
    assert {
        hit.turn.session_key for hit in search(index, "dentist Lisbon", filter_user="bob", all_results=True)
    } == {BOB_KEY}


# -- bad input, each its own test -------------------------------------------------------------------


def test_an_empty_query_is_refused(seeded: Any) -> None:
    with pytest.raises(InvalidInput, match="empty"):
        search(seeded[0], "   ")


def test_a_query_with_a_lone_surrogate_is_refused(seeded: Any) -> None:
    with pytest.raises(InvalidInput, match="lone surrogate"):
        search(seeded[0], "trip \ud800")


def test_an_unknown_session_is_not_found(seeded: Any) -> None:
    with pytest.raises(NotFound):
        search(seeded[0], "trip", sessions=["agent:main:telegram:default:direct:nobody"])


def test_an_unknown_session_id_is_not_found(seeded: Any) -> None:
    with pytest.raises(NotFound):
        search(seeded[0], "trip", sessions=["s-01900000-0000-7000-8000-000000000000"])


def test_a_malformed_session_key_is_refused() -> None:
    with pytest.raises(InvalidInput):
        viewer_filter(None, owner="default", sessions=["agent:main:bad key"])


def test_an_unknown_role_is_refused() -> None:
    with pytest.raises(InvalidInput, match="unknown role"):
        viewer_filter(None, owner="default", role="tool")


def test_a_bad_date_is_refused() -> None:
    with pytest.raises(InvalidInput, match="bad date"):
        parse_bound("2026-02-30", end=False)


def test_an_empty_date_is_refused() -> None:
    with pytest.raises(InvalidInput, match="bad date"):
        parse_bound(" ", end=True)


def test_since_after_until_is_refused() -> None:
    with pytest.raises(InvalidInput, match="not before"):
        viewer_filter(
            None,
            owner="default",
            since=parse_bound("2026-03-05", end=False),
            until=parse_bound("2026-03-04", end=True),
        )


def test_until_a_date_includes_that_day() -> None:
    assert parse_bound("2026-03-04", end=True) == "2026-03-05T00:00:00.000Z"
    assert parse_bound("2026-03-04T12:30:00+01:00", end=True) == "2026-03-04T11:30:00.000Z"


# -- the index follows the files ------------------------------------------------------------------


def test_an_append_is_indexed_by_the_listener_without_a_search(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ids = write_dialogues(home, [(OWNER_KEY, "default", 6, [("user", "first words")])])
    index, service = open_index(home)
    store = SessionStore(Home(home), "main")
    store.listeners.append(index.session_changed)
    try:
        store.append(ids[OWNER_KEY][0], "user", "the plumber comes on Monday", at(7), user_id="default")
        index.flush()
        turns = SqliteTranscripts.open(transcripts_path(Home(home), "main"))
        try:
            assert turns.message_indexes(ids[OWNER_KEY][0]) == [0, 1]
            assert turns.pending_count() == 2  # embedded when a search or `memory index` needs them
        finally:
            turns.close()
    finally:
        store.close()
        index.close()
        service.close()


def test_a_summary_is_searchable_and_marked(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ids = write_dialogues(home, [(OWNER_KEY, "default", 6, [("user", "hello"), ("assistant", "hi")])])
    store = SessionStore(Home(home), "main")
    store.write_summary(ids[OWNER_KEY][0], "They agreed the garden fence gets painted green.", 1)
    store.close()
    index, service = open_index(home)
    try:
        hit = search(index, "garden fence colour")[0]
        assert (hit.turn.kind, hit.turn.role, hit.turn.index) == ("summary", "summary", 1)
        assert hit.to_dict()["kind"] == "summary"
    finally:
        index.close()
        service.close()


def test_a_rewritten_transcript_is_indexed_again_and_its_old_text_goes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ids = write_dialogues(home, [(OWNER_KEY, "default", 6, [("user", "my locker code is 4711 zebra")])])
    index, service = open_index(home)
    try:
        assert search(index, "locker zebra")
        path = Home(home).session_dir("main", ids[OWNER_KEY][0]) / "messages.jsonl"
        replaced = path.with_suffix(".new")
        replaced.write_text(
            '{"idx":0,"role":"user","content":"[redacted]","ts":"2026-03-06T10:00:00.000Z"}\n'
        )
        os.replace(replaced, path)
        assert [hit.turn.text for hit in search(index, "locker zebra", all_results=True)] in (
            [],
            ["[redacted]"],
        )
        assert _after_compact(index)
    finally:
        index.close()
        service.close()


def _after_compact(index: Any) -> bool:
    index.compact()
    return b"zebra" not in index.path.read_bytes()


def test_a_deleted_session_leaves_the_index(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ids = write_dialogues(home, [(BOB_KEY, "bob", 4, [("user", "the boiler makes a knocking noise")])])
    index, service = open_index(home)
    try:
        assert search(index, "boiler knocking")
        store = SessionStore(Home(home), "main")
        store.delete(ids[BOB_KEY][0])
        store.close()
        assert search(index, "boiler knocking", all_results=True) == []
    finally:
        index.close()
        service.close()


def test_sessions_made_or_deleted_after_a_listing_are_seen(tmp_path: Path) -> None:
    """The sessions directory's listing is reused while its mtime stands still; one made or deleted since
    moves the mtime, whatever the clock's granularity, because the reused listing is over a second old."""
    home = tmp_path / "home"
    ids = write_dialogues(home, [(BOB_KEY, "bob", 4, [("user", "the boiler makes a knocking noise")])])
    index, service = open_index(home)
    try:
        os.utime(index.sessions_dir, ns=(0, index.sessions_dir.stat().st_mtime_ns - 10**10))
        assert search(index, "boiler knocking")  # lists the directory and keeps the listing
        more = write_dialogues(home, [(ALICE_KEY, "alice", 5, [("user", "the boiler is fixed now")])])
        assert len(search(index, "boiler", all_results=True)) == 2
        os.utime(index.sessions_dir, ns=(0, index.sessions_dir.stat().st_mtime_ns - 10**10))
        search(index, "boiler")
        store = SessionStore(Home(home), "main")
        store.delete(more[ALICE_KEY][0])
        store.close()
        assert _texts(search(index, "boiler", all_results=True)) == ["the boiler makes a knocking noise"]
        assert ids[BOB_KEY][0] in index.session_ids_on_disk()
    finally:
        index.close()
        service.close()


def test_check_and_repair(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_dialogues(home)
    index, service = open_index(home)
    try:
        assert index.check().ok and not index.check().built  # nothing indexed yet: built on first use
        done = index.repair()
        assert done["turns"] == 9 and done["embedded"] == 9
        check = index.check()
        assert check.ok and check.messages == 9 and check.pending_vectors == 0
        turns = index.storage()
        with turns.transaction():
            turns.conn.execute("DELETE FROM turns WHERE idx = 1")
        assert not index.check().ok
        index.repair()
        assert index.check().ok
    finally:
        index.close()
        service.close()


def test_the_index_file_is_private(seeded: Any) -> None:
    index, _ = seeded
    search(index, "Lisbon")
    assert (index.path.stat().st_mode & 0o777) == 0o600
