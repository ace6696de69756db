"""Memory export and import in-process, over real SQLite files, with deterministic local embedders."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.portability.transfer import InvalidExport
from openclaw_cli.memory.store.sqlite import vec
from tests.fake_embedder import CompositeFake
from tests.portability_helpers import (
    HEADER,
    FakeService,
    SmallFake,
    export_text,
    import_file,
    record,
    write_export,
)


def _filled(home: Path, fake: object = None) -> FakeService:
    service = FakeService(home, fake)
    service.add(NewMemory("我喜欢喝咖啡，不喜欢茶", category="preference", user_id="lin", l1="每天早上一杯"))
    service.add(NewMemory("prefers dark mode in every editor", category="preference", l2="said on 3 May"))
    service.add(NewMemory("deploys go through the staging cluster first", category="lesson", scope="agent"))
    return service


def _count(service: FakeService) -> int:
    return len(service.list_records())


def test_json_export_has_the_header_and_every_record_field_but_no_embedding(tmp_path: Path) -> None:
    service = _filled(tmp_path / "a")
    document = json.loads(export_text(service))
    assert (
        document["version"] == "1.0" and document["agent"] == "main" and document["exportedAt"].endswith("Z")
    )
    assert document["embedder"] == CompositeFake().identity.to_dict()
    assert len(document["records"]) == 3
    coffee = next(r for r in document["records"] if r["userId"] == "lin")
    assert coffee["content"] == {"l0": "我喜欢喝咖啡，不喜欢茶", "l1": "每天早上一杯", "l2": None}
    assert coffee["category"] == "preference" and coffee["scope"] == "user"
    assert set(coffee["fsrs"]) == {"stability", "difficulty", "lastReview", "nextReview", "reps", "lapses"}
    assert coffee["createdAt"] and coffee["updatedAt"]
    assert not any(key in coffee for key in ("embedding", "vector", "l0Hash", "vectorStatus"))


def test_jsonl_export_is_a_header_one_line_per_record_and_an_end_line(tmp_path: Path) -> None:
    service = _filled(tmp_path / "a")
    lines = [json.loads(line) for line in export_text(service, "jsonl").splitlines()]
    assert lines[0]["version"] == "1.0" and "records" not in lines[0]
    assert [line["id"] for line in lines[1:-1]] == [r.id for r in service.list_records()]
    assert lines[-1] == {"end": True, "records": 3}


def test_export_filters_by_scope_and_user(tmp_path: Path) -> None:
    service = _filled(tmp_path / "a")
    agent_only = json.loads(export_text(service, scope="agent"))["records"]
    assert [r["scope"] for r in agent_only] == ["agent"]
    lin = json.loads(export_text(service, scope="user", user_id="lin"))["records"]
    assert [r["userId"] for r in lin] == ["lin"]


def test_import_into_an_empty_home_keeps_fsrs_fields_and_times(tmp_path: Path) -> None:
    source = _filled(tmp_path / "a")
    source.record_hits([source.list_records()[0].id])  # an FSRS review: not the start state any more
    path = tmp_path / "e.json"
    path.write_text(export_text(source), encoding="utf-8")
    target = FakeService(tmp_path / "b")
    report = import_file(target, path)
    assert len(report.added) == 3 and report.pending_vectors == 0
    before = {r.id: r for r in source.list_records()}
    for after in target.list_records():
        old = before[after.id]
        assert after.fsrs == old.fsrs and after.created_at == old.created_at
        assert after.updated_at == old.updated_at and (after.l0, after.l1, after.l2) == (
            old.l0,
            old.l1,
            old.l2,
        )
        assert after.vector_status == "ready"
    assert target.get(source.list_records()[0].id).fsrs.reps == 1


def test_existing_ids_are_skipped_by_default(tmp_path: Path) -> None:
    service = _filled(tmp_path / "a")
    path = tmp_path / "e.json"
    path.write_text(export_text(service), encoding="utf-8")
    report = import_file(service, path)
    assert report.added == [] and len(report.existing) == 3 and _count(service) == 3


def test_replace_on_conflict_keeps_the_old_value_in_history(tmp_path: Path) -> None:
    service = _filled(tmp_path / "a")
    old = next(r for r in service.list_records() if r.user_id == "lin")
    changed = record(old.id, "我现在更喜欢喝茶", userId="lin", category="preference")
    path = write_export(tmp_path / "e.json", HEADER, [changed])
    report = import_file(service, path, on_conflict="replace")
    assert report.replaced == [old.id]
    assert service.get(old.id).l0 == "我现在更喜欢喝茶"
    history = service.history(old.id)
    assert [h["action"] for h in history] == ["add", "update"]
    assert history[0]["new"]["l0"] == old.l0 and history[1]["old"]["l0"] == old.l0
    assert history[1]["new"]["l0"] == "我现在更喜欢喝茶"
    assert "我喜欢喝咖啡，不喜欢茶" not in [r.l0 for r in service.list_records()]


def test_exact_duplicates_by_normalised_text_are_skipped(tmp_path: Path) -> None:
    service = _filled(tmp_path / "a")
    twin = record("mem-new-1", "Prefers dark-mode, in EVERY editor!", userId="default")
    inner_twin = record("mem-new-3", "  prefers DARK mode in every editor  ", userId="default")
    fresh = record("mem-new-2", "likes long walks", userId="default")
    path = write_export(tmp_path / "e.json", HEADER, [twin, fresh, inner_twin])
    report = import_file(service, path)
    assert report.added == ["mem-new-2"]
    assert [d["id"] for d in report.duplicates] == ["mem-new-1", "mem-new-3"]
    assert _count(service) == 4


def test_the_same_text_of_another_user_is_not_a_duplicate(tmp_path: Path) -> None:
    service = _filled(tmp_path / "a")
    path = write_export(
        tmp_path / "e.json", HEADER, [record("mem-bob", "prefers dark mode in every editor", userId="bob")]
    )
    assert import_file(service, path).added == ["mem-bob"]


def test_duplicate_ids_in_the_file_are_invalid_and_nothing_is_written(tmp_path: Path) -> None:
    service = FakeService(tmp_path / "a")
    path = write_export(tmp_path / "e.json", HEADER, [record("mem-1", "one"), record("mem-1", "two")])
    with pytest.raises(InvalidExport) as caught:
        import_file(service, path)
    assert [(e.index, "duplicate id 'mem-1'" in e.message) for e in caught.value.errors] == [(1, True)]
    assert not service.db_path("user").exists()


def test_an_unknown_category_is_invalid_and_every_error_is_listed_by_index(tmp_path: Path) -> None:
    service = _filled(tmp_path / "a")
    records = [
        record("mem-1", "fine"),
        record("mem-2", "bad", category="gossip"),
        record("mem-3", "also fine"),
        record("mem-4", "", category="note"),
        record("mem-5", "no time", createdAt="yesterday"),
    ]
    path = write_export(tmp_path / "e.json", HEADER, records)
    with pytest.raises(InvalidExport) as caught:
        import_file(service, path)
    errors = caught.value.errors
    assert [e.index for e in errors] == [1, 3, 4]
    assert "unknown category 'gossip'" in errors[0].message
    assert "3 of 5 records" in caught.value.message
    assert _count(service) == 3


def test_skip_invalid_imports_the_valid_records(tmp_path: Path) -> None:
    service = FakeService(tmp_path / "a")
    path = write_export(
        tmp_path / "e.json", HEADER, [record("mem-1", "fine"), record("mem-2", "x", category="gossip")]
    )
    report = import_file(service, path, skip_invalid=True)
    assert report.added == ["mem-1"] and [e.index for e in report.invalid] == [1]


def test_version_2_0_is_refused_with_a_pointer_to_migrate(tmp_path: Path) -> None:
    service = FakeService(tmp_path / "a")
    path = write_export(tmp_path / "e.json", {**HEADER, "version": "2.0"}, [record("mem-1", "x")])
    with pytest.raises(InvalidInput) as caught:
        import_file(service, path)
    assert "2.0" in caught.value.message and "openclaw memory migrate" in (caught.value.hint or "")
    assert not service.db_path("user").exists()


def test_version_banana_is_refused(tmp_path: Path) -> None:
    service = FakeService(tmp_path / "a")
    path = write_export(tmp_path / "e.json", {**HEADER, "version": "banana"}, [record("mem-1", "x")])
    with pytest.raises(InvalidInput, match="'banana' is not a version"):
        import_file(service, path)


def test_an_older_minor_version_is_filled_in_with_defaults(tmp_path: Path) -> None:
    service = FakeService(tmp_path / "a")
    path = write_export(tmp_path / "e.json", HEADER, [record("mem-1", "only the required fields")])
    assert import_file(service, path).added == ["mem-1"]
    stored = service.get("mem-1")
    assert stored.scope == "user" and stored.user_id == "default" and stored.category == "note"
    assert stored.fsrs.stability is not None and stored.updated_at == stored.created_at


def test_a_newer_minor_version_is_imported_and_its_new_fields_ignored(tmp_path: Path) -> None:
    service = FakeService(tmp_path / "a")
    newer = record("mem-1", "from the future", mood="calm", content={"l0": "from the future", "l3": "?"})
    path = write_export(tmp_path / "e.json", {**HEADER, "version": "1.4"}, [newer])
    assert import_file(service, path).added == ["mem-1"]
    same_major = write_export(tmp_path / "f.json", HEADER, [record("mem-2", "typo", catgory="note")])
    with pytest.raises(InvalidExport, match="1 of 1"):
        import_file(service, same_major)


def test_a_file_that_is_not_json_is_refused(tmp_path: Path) -> None:
    service = FakeService(tmp_path / "a")
    path = tmp_path / "e.json"
    path.write_text("version: 1.0\nrecords: []\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match="is not valid JSON"):
        import_file(service, path)


def test_a_truncated_json_export_is_refused(tmp_path: Path) -> None:
    service = _filled(tmp_path / "a")
    text = export_text(service)
    path = tmp_path / "e.json"
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(InvalidInput, match="truncated"):
        import_file(FakeService(tmp_path / "b"), path)


def test_a_jsonl_export_cut_at_a_line_boundary_is_imported_with_a_warning(tmp_path: Path) -> None:
    lines = export_text(_filled(tmp_path / "a"), "jsonl").splitlines(keepends=True)
    path = tmp_path / "e.jsonl"
    path.write_text("".join(lines[:-2]), encoding="utf-8")  # header + 2 records: no end line
    target = FakeService(tmp_path / "b")
    report = import_file(target, path)
    assert report.added == [json.loads(line)["id"] for line in lines[1:3]] and report.total == 2
    assert report.warnings == ["no end line: the stream may have been cut short; 2 records were read"]
    assert report.invalid == []


def test_a_jsonl_export_with_a_torn_last_line_is_refused(tmp_path: Path) -> None:
    text = export_text(_filled(tmp_path / "a"), "jsonl")
    path = tmp_path / "e.jsonl"
    path.write_text(text[: text.rindex('"category"')], encoding="utf-8")
    with pytest.raises(InvalidExport) as caught:
        import_file(FakeService(tmp_path / "b"), path)
    [torn] = caught.value.errors
    assert torn.index == 2 and torn.line == 4 and torn.message.startswith("not valid JSON")
    assert torn.message.endswith("the stream ends inside this line: it was cut short (truncated)")
    assert caught.value.warnings == ["no end line: the stream may have been cut short; 3 records were read"]


def test_an_import_with_another_embedder_re_embeds_and_never_copies(tmp_path: Path) -> None:
    source = _filled(tmp_path / "a", CompositeFake())
    path = tmp_path / "e.json"
    path.write_text(export_text(source), encoding="utf-8")
    small = SmallFake()
    target = FakeService(tmp_path / "b", small)
    report = import_file(target, path)
    assert report.pending_vectors == 0 and small.calls >= 1
    for store in target.existing_stores():
        assert vec.stored_identity(store.conn) == small.identity.to_dict()
        table = vec.current_table(store.conn)
        assert table is not None
        for rid, l0 in store.conn.execute("SELECT rowid, l0 FROM records"):
            stored = vec.read(store.conn, table, [rid])[rid]
            assert stored.shape == (64,)
            assert float(np.dot(stored, small.vector(l0))) > 0.99


class _TextsSeen(SmallFake):
    """SmallFake that notes every text it embeds, and on which thread."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.threads: set[str] = set()

    def embed_passages(self, texts):  # type: ignore[no-untyped-def]
        import threading

        self.texts += texts
        self.threads.add(threading.current_thread().name)
        return super().embed_passages(texts)


def test_each_record_of_a_many_batch_import_gets_its_own_texts_vector(tmp_path: Path) -> None:
    # The next batch is embedded while the previous one is written: each vector must still land on its
    # own record, across the batches, the shared user database and the agent one.
    home = tmp_path / "b"
    FakeService(home, SmallFake()).add(NewMemory("memory number 7 about tea", user_id="someone-else"))
    records = [
        record(f"mem-{n}", f"memory number {n} about tea", **({"scope": "agent"} if n % 5 == 0 else {}))
        for n in range(700)
    ]
    path = write_export(tmp_path / "e.json", HEADER, records)
    seen = _TextsSeen()
    target = FakeService(home, seen)
    report = import_file(target, path)
    assert len(report.added) == 700 and report.pending_vectors == 0
    # The stored text's vector was reused, and every other text embedded once, never on this thread.
    assert sorted(seen.texts) == sorted(r["content"]["l0"] for r in records if r["id"] != "mem-7")
    assert seen.threads and all(name.startswith("import-embed") for name in seen.threads)
    checked = 0
    for store in target.existing_stores():
        table = vec.current_table(store.conn)
        assert table is not None
        for rid, l0 in store.conn.execute("SELECT rowid, l0 FROM records"):
            stored = vec.read(store.conn, table, [rid])[rid]  # int8: near its text's vector, far from others
            assert float(np.dot(stored, seen.vector(l0))) > 0.99
            checked += 1
    assert checked == 701


def test_an_import_into_a_store_indexed_by_another_embedder_leaves_vectors_pending(tmp_path: Path) -> None:
    home = tmp_path / "b"
    FakeService(home, CompositeFake()).add(NewMemory("already here"))
    path = write_export(tmp_path / "e.json", HEADER, [record("mem-1", "imported later")])
    target = FakeService(home, SmallFake())
    report = import_file(target, path)
    assert report.pending_vectors == 1 and any("--rebuild" in w for w in report.warnings)
    store = next(target.existing_stores())
    assert vec.stored_identity(store.conn) == CompositeFake().identity.to_dict()
    assert target.get("mem-1").vector_status == "pending"


class _FailsOnSecondBatch(CompositeFake):
    def embed_passages(self, texts):  # type: ignore[no-untyped-def]
        if self.calls == 1:
            raise KeyboardInterrupt  # as if the user pressed ^C mid-import
        return super().embed_passages(texts)


def test_an_interrupted_import_leaves_the_store_as_it_was(tmp_path: Path) -> None:
    home = tmp_path / "b"
    FakeService(home).add(NewMemory("already here"))
    records = [record(f"mem-{n}", f"memory number {n} about tea") for n in range(300)]
    path = write_export(tmp_path / "e.json", HEADER, records)
    target = FakeService(home, _FailsOnSecondBatch())
    store = next(target.existing_stores())
    history_before = store.conn.execute("SELECT count(*) FROM history").fetchone()[0]
    with pytest.raises(KeyboardInterrupt):
        import_file(target, path)
    assert [r.l0 for r in target.list_records()] == ["already here"]
    assert store.conn.execute("SELECT count(*) FROM history").fetchone()[0] == history_before
    assert store.conn.execute("SELECT count(*) FROM records_fts").fetchone()[0] == 1


def test_a_dry_run_counts_and_writes_nothing(tmp_path: Path) -> None:
    source = _filled(tmp_path / "a")
    path = tmp_path / "e.json"
    path.write_text(export_text(source), encoding="utf-8")
    target = FakeService(tmp_path / "b")
    report = import_file(target, path, dry_run=True)
    assert len(report.added) == 3 and report.dry_run
    assert not target.db_path("user").exists()
    again = import_file(source, path, dry_run=True)
    assert len(again.existing) == 3 and again.added == []


def test_shared_user_memory_goes_to_the_shared_database(tmp_path: Path) -> None:
    from openclaw_cli.config.loading import Settings

    source = _filled(tmp_path / "a")
    path = tmp_path / "e.json"
    path.write_text(export_text(source), encoding="utf-8")
    target = FakeService(tmp_path / "b", settings=Settings(memory={"shareUserMemory": True}))
    assert len(import_file(target, path).added) == 3
    assert target.db_path("user") != target.db_path("agent")
    scopes = {store.path: {r.scope for r in store.list_records()} for store in target.existing_stores()}
    assert scopes == {target.db_path("user"): {"user"}, target.db_path("agent"): {"agent"}}


def test_progress_counts_every_record_once(tmp_path: Path) -> None:
    records = [record(f"mem-{n}", f"memory number {n}") for n in range(600)]
    path = write_export(tmp_path / "e.json", HEADER, records)
    fake = CompositeFake()
    seen: list[int] = []
    report = import_file(FakeService(tmp_path / "b", fake), path, progress=seen.append)
    assert sum(seen) == 600 and len(report.added) == 600
    assert fake.calls == 3  # re-embedded in batches of 256, not one call per record


def test_a_created_time_with_an_offset_is_imported_as_the_same_moment_in_utc(tmp_path: Path) -> None:
    """Without an FSRS state the import starts one at createdAt; FSRS refuses any timezone but UTC (an
    offset like +08:00 was an internal error)."""
    path = write_export(
        tmp_path / "e.json",
        HEADER,
        [record("mem-1", "tea by the lake", createdAt="2025-03-01T16:00:00+08:00")],
    )
    target = FakeService(tmp_path / "b")
    assert len(import_file(target, path).added) == 1
    [stored] = target.list_records()
    moment = datetime(2025, 3, 1, 8, tzinfo=UTC)
    assert stored.created_at == moment and stored.created_at.utcoffset() == timedelta(0)
    assert stored.fsrs.last_review == moment and stored.updated_at == moment
