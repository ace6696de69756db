"""Dedup on the write path: exact by normalised L0, semantic in three zones, and what each zone does.

In-process over real database files and the real default (composite) embedder. Tests about a zone's
behaviour pin the zones in settings (memory.dedup.*), so they do not depend on the profile's calibration
(tests/test_dedup_zones.py measures that); the similarities of the pairs used are far from those bounds.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from openclaw_cli.config.loading import DedupSettings
from openclaw_cli.memory.search import profiles
from openclaw_cli.memory.service import MemoryService
from openclaw_cli.memory.store.records import MemoryRecord
from openclaw_cli.memory.store.sqlite import vec
from openclaw_cli.memory.text.analysis import l0_hash
from openclaw_cli.memory.writing.candidate import Candidate, Verdict
from openclaw_cli.memory.writing.dedup import zones_for
from openclaw_cli.memory.writing.write_path import write_memories
from tests.memory_helpers import WIDE_GREY, service_for, settings_with
from tests.memory_helpers import FixedJudge as Judge
from tests.memory_helpers import dedup_service as _service

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _live(service: MemoryService) -> list[MemoryRecord]:
    return service.list_records()


def test_normalised_l0_folds_trailing_punctuation_in_both_scripts() -> None:
    assert (
        l0_hash("我喜欢咖啡") == l0_hash("我喜欢咖啡。") == l0_hash("我喜欢咖啡！") == l0_hash("我喜欢咖啡……")
    )
    assert l0_hash("我喜欢咖啡") == l0_hash("我喜欢咖啡？") == l0_hash(" 我喜欢 咖啡 ")
    assert l0_hash("I like coffee") == l0_hash("i like coffee.") == l0_hash("I like coffee!!")
    assert l0_hash("I like coffee") == l0_hash("Ｉ　ｌｉｋｅ　ｃｏｆｆｅｅ") == l0_hash("I  like\tcoffee…")
    assert l0_hash("我喜欢咖啡") != l0_hash("我喜欢茶")
    assert l0_hash("I like coffee") != l0_hash("I like tea")


def test_exact_duplicate_is_a_noop_that_counts_as_a_review(tmp_path: Path) -> None:
    service = _service(tmp_path)
    [first] = write_memories(service, [Candidate("我喜欢咖啡", "preference")], now=NOW)
    before = service.get(first.record_id or "")
    [again] = write_memories(service, [Candidate("我喜欢咖啡。", "preference")], now=NOW + timedelta(days=3))
    assert (again.action, again.record_id) == ("duplicate", first.record_id)
    assert [r.id for r in _live(service)] == [first.record_id]
    after = service.get(first.record_id or "")
    assert after.fsrs.reps == before.fsrs.reps + 1
    assert after.fsrs.last_review == NOW + timedelta(days=3)
    assert [h["action"] for h in service.history(first.record_id or "")] == ["add"]


def test_exact_duplicate_key_is_user_and_scope_not_category(tmp_path: Path) -> None:
    service = _service(tmp_path)
    [first] = write_memories(service, [Candidate("prefers dark mode", "preference", user_id="lin")])
    other_user, other_category, other_scope = write_memories(
        service,
        [
            Candidate("prefers dark mode", "preference", user_id="sam"),
            Candidate("Prefers dark mode.", "note", user_id="lin"),
            Candidate("prefers dark mode", "preference", scope="agent"),
        ],
    )
    assert other_user.action == "added"
    assert (other_category.action, other_category.record_id) == ("duplicate", first.record_id)
    assert other_scope.action == "added"
    assert len(_live(service)) == 3


def test_candidates_in_one_call_see_each_other(tmp_path: Path) -> None:
    service = _service(tmp_path)
    first, second = write_memories(
        service, [Candidate("likes hiking", "preference"), Candidate("Likes hiking!", "preference")]
    )
    assert first.action == "added"
    assert (second.action, second.record_id) == ("duplicate", first.record_id)
    assert len(_live(service)) == 1


def test_semantic_duplicate_zone_is_a_noop_without_asking_the_judge(tmp_path: Path) -> None:
    service = _service(tmp_path, **WIDE_GREY | {"duplicateAbove": 0.9})
    judge = Judge("update")
    [first] = write_memories(service, [Candidate("I like coffee", "preference")], judge=judge)
    [again] = write_memories(service, [Candidate("I really like coffee", "preference")], judge=judge)
    assert (again.action, again.record_id) == ("duplicate", first.record_id)
    assert "same meaning" in again.reason
    assert judge.asked == []
    assert [r.l0 for r in _live(service)] == ["I like coffee"]


def test_near_duplicate_with_another_number_is_a_new_value_kept_beside(tmp_path: Path) -> None:
    # 0.92 apart by meaning, but "4 spaces" is a new value of "2 spaces", not a repetition: a preference
    # keeps it beside the old one (a profile fact would replace it), decided without asking any judge.
    service = _service(tmp_path)
    [first] = write_memories(service, [Candidate("Prefers 2 spaces of indentation in YAML", "preference")])
    judge = Judge("same")
    [kept] = write_memories(
        service, [Candidate("Prefers 4 spaces of indentation in YAML", "preference")], judge=judge
    )
    assert kept.action == "added" and kept.existing_id == first.record_id
    assert "a new value beside" in kept.reason and "2 -> 4" in kept.reason
    assert judge.asked == []
    assert len(_live(service)) == 2


def test_a_judge_cannot_call_texts_with_other_values_the_same(tmp_path: Path) -> None:
    # Not the same fact word for word ("now"), so the judge is asked; its "same" becomes an update,
    # because other values are never the same meaning.
    service = _service(tmp_path, **WIDE_GREY)
    [first] = write_memories(service, [Candidate("Runs 10 km a week", "profile")])
    judge = Judge("same")
    [second] = write_memories(service, [Candidate("Runs 25 km a week now", "profile")], judge=judge)
    assert len(judge.asked) == 1
    assert second.action == "merged" and second.record_id == first.record_id
    assert [r.l0 for r in _live(service)] == ["Runs 25 km a week now"]


def test_near_duplicate_events_go_to_the_judge(tmp_path: Path) -> None:
    # Two meetings on two days are 0.95 apart by meaning; events never merge, so only a judge may drop one.
    service = _service(tmp_path)
    write_memories(service, [Candidate("Meeting with Bob on Monday", "event")])
    [other] = write_memories(service, [Candidate("Meeting with Bob on Friday", "event")])
    assert other.action == "added"
    judge = Judge("same")
    [same] = write_memories(service, [Candidate("Meeting with Bob on Friday!!", "event")], judge=judge)
    assert same.action == "duplicate" and judge.asked == []  # the same words: exact dedup
    assert len(_live(service)) == 2


def test_new_zone_is_added_without_asking_the_judge(tmp_path: Path) -> None:
    service = _service(tmp_path, newBelow=0.7, duplicateAbove=0.97)
    judge = Judge("same")
    write_memories(service, [Candidate("Hates broccoli", "preference")], judge=judge)
    [other] = write_memories(service, [Candidate("Likes vegetables", "preference")], judge=judge)
    assert other.action == "added"
    assert judge.asked == []
    assert sorted(r.l0 for r in _live(service)) == ["Hates broccoli", "Likes vegetables"]


def test_grey_zone_without_a_judge_is_kept_as_new(tmp_path: Path) -> None:
    service = _service(tmp_path, **WIDE_GREY)
    write_memories(service, [Candidate("I like coffee", "preference")])
    [other] = write_memories(service, [Candidate("My wife likes coffee", "preference")])
    assert other.action == "added"
    assert "needs a model" in other.reason
    assert len(_live(service)) == 2


def test_grey_zone_judged_same_is_a_duplicate(tmp_path: Path) -> None:
    service = _service(tmp_path, **WIDE_GREY)
    judge = Judge("same")
    [first] = write_memories(service, [Candidate("Drinks tea every morning", "preference")], judge=judge)
    [other] = write_memories(service, [Candidate("Has tea each morning", "preference")], judge=judge)
    assert (other.action, other.record_id) == ("duplicate", first.record_id)
    assert judge.asked == [("Has tea each morning", "Drinks tea every morning")]
    assert len(_live(service)) == 1


def test_grey_zone_judged_different_is_added(tmp_path: Path) -> None:
    service = _service(tmp_path, **WIDE_GREY)
    judge = Judge("different")
    write_memories(service, [Candidate("I like coffee", "preference")], judge=judge)
    [other] = write_memories(service, [Candidate("My wife likes coffee", "preference")], judge=judge)
    assert other.action == "added"
    assert len(judge.asked) == 1
    assert len(_live(service)) == 2


def test_grey_zone_judge_failure_keeps_the_memory_as_new(tmp_path: Path) -> None:
    from openclaw_cli.core.errors import OpenclawError

    def failing(candidate: Candidate, existing: MemoryRecord) -> Verdict:
        raise OpenclawError("model unreachable")

    service = _service(tmp_path, **WIDE_GREY)
    write_memories(service, [Candidate("I like coffee", "preference")], judge=failing)
    [other] = write_memories(service, [Candidate("My wife likes coffee", "preference")], judge=failing)
    assert other.action == "added"
    assert "model unreachable" in other.reason


def test_judge_is_asked_about_each_grey_neighbour_until_one_is_not_different(tmp_path: Path) -> None:
    service = _service(tmp_path, newBelow=0.2, duplicateAbove=0.97, neighbours=2)
    write_memories(
        service,
        [Candidate("I like coffee", "preference"), Candidate("Drinks coffee every morning", "preference")],
    )
    answers = iter(["different", "update"])
    asked: list[str] = []

    def judge(candidate: Candidate, existing: MemoryRecord) -> Verdict:
        asked.append(existing.l0)
        return next(answers)  # type: ignore[return-value]

    [outcome] = write_memories(service, [Candidate("I really like black coffee", "preference")], judge=judge)
    assert len(asked) == 2 and asked[0] != asked[1]
    assert outcome.action == "merged"
    assert service.get(outcome.record_id or "").l0 == "I really like black coffee"


def test_semantic_dedup_compares_only_the_same_user_and_category(tmp_path: Path) -> None:
    service = _service(tmp_path, **WIDE_GREY | {"duplicateAbove": 0.9})
    write_memories(service, [Candidate("I like coffee", "preference", user_id="lin")])
    other_user, other_category = write_memories(
        service,
        [
            Candidate("I really like coffee", "preference", user_id="sam"),
            Candidate("I really like coffee", "insight", user_id="lin"),
        ],
    )
    assert other_user.action == "added"
    assert other_category.action == "added"
    assert len(_live(service)) == 3


def test_dedup_settings_override_the_profile(tmp_path: Path) -> None:
    composite = profiles.profile_for({"provider": "local", "model": profiles.COMPOSITE})
    defaults = zones_for(composite, DedupSettings())
    assert (defaults.new_below, defaults.duplicate_above, defaults.neighbours) == (0.61, 0.88, 5)
    set_both = zones_for(composite, DedupSettings(new_below=0.5, duplicate_above=0.95, neighbours=9))
    assert (set_both.new_below, set_both.duplicate_above, set_both.neighbours) == (0.5, 0.95, 9)
    generic = zones_for(profiles.generic_profile(64), DedupSettings())
    assert (generic.new_below, generic.duplicate_above) == (0.70, 0.92)  # the seed's, untuned


def test_english_only_embedder_never_compares_chinese_by_meaning(tmp_path: Path) -> None:
    # MiniLM alone reads Chinese as unknown tokens: two unrelated Chinese memories look identical to it.
    service = service_for(
        tmp_path / "minilm",
        settings_with(embedding={"model": profiles.MINILM}, dedup={"newBelow": 0.1, "duplicateAbove": 0.2}),
    )
    first, second = write_memories(
        service, [Candidate("用户住在上海", "profile"), Candidate("用户对花生过敏", "profile")]
    )
    assert (first.action, second.action) == ("added", "added")
    assert "nothing similar" in second.reason


def test_dry_run_decides_without_writing(tmp_path: Path) -> None:
    service = _service(tmp_path)
    [first] = write_memories(service, [Candidate("likes hiking", "preference")], now=NOW)
    reps = service.get(first.record_id or "").fsrs.reps
    outcomes = write_memories(
        service,
        [Candidate("Likes hiking.", "preference"), Candidate("owns a red bike", "profile")],
        dry_run=True,
    )
    assert [o.action for o in outcomes] == ["duplicate", "added"]
    assert all("dry run" in o.reason for o in outcomes)
    assert [r.l0 for r in _live(service)] == ["likes hiking"]
    assert service.get(first.record_id or "").fsrs.reps == reps


def test_invalid_candidate_is_skipped_and_the_others_written(tmp_path: Path) -> None:
    service = _service(tmp_path)
    outcomes = write_memories(
        service,
        [
            Candidate("   ", "preference"),
            Candidate("x", "bogus"),
            Candidate("likes hiking", "preference", user_id=""),
            Candidate("owns a red bike", "profile"),
        ],
    )
    assert [o.action for o in outcomes] == ["skipped", "skipped", "skipped", "added"]
    assert "empty" in outcomes[0].reason
    assert "unknown category" in outcomes[1].reason
    assert "invalid user id" in outcomes[2].reason
    assert [r.l0 for r in _live(service)] == ["owns a red bike"]


def test_existing_id_is_skipped_not_overwritten(tmp_path: Path) -> None:
    service = _service(tmp_path)
    write_memories(service, [Candidate("likes hiking", "preference", record_id="mem-1")])
    [again] = write_memories(service, [Candidate("owns a red bike", "profile", record_id="mem-1")])
    assert again.action == "skipped"
    assert "already exists" in again.reason
    assert service.get("mem-1").l0 == "likes hiking"


def test_batch_rerun_without_ids_stores_nothing_new(tmp_path: Path) -> None:
    from openclaw_cli.memory.agent_memory import NewMemory

    service = _service(tmp_path)
    lines = ["likes hiking", "Likes hiking!", "owns a red bike", "我喜欢咖啡", "我喜欢咖啡。"]
    first = service.add_many([service.build_record(NewMemory(t)) for t in lines])
    assert (len(first.ids), len(first.duplicates)) == (3, 2)
    again = service.add_many([service.build_record(NewMemory(t)) for t in lines])
    assert (len(again.ids), len(again.duplicates), len(again.skipped)) == (0, 5, 0)
    assert len(_live(service)) == 3
    reps = {r.l0: r.fsrs.reps for r in _live(service)}
    assert reps == {"likes hiking": 3, "owns a red bike": 1, "我喜欢咖啡": 3}


def test_neighbour_index_sees_another_process_write(tmp_path: Path) -> None:
    settings = settings_with(dedup=WIDE_GREY | {"duplicateAbove": 0.9})
    ours = service_for(tmp_path / "home", settings, warm=True)
    theirs = service_for(tmp_path / "home", settings)
    write_memories(ours, [Candidate("Drinks tea every morning", "preference")])  # loads the group
    [coffee] = write_memories(theirs, [Candidate("I like coffee", "preference")])
    [again] = write_memories(ours, [Candidate("I really like coffee", "preference")])
    assert (again.action, again.record_id) == ("duplicate", coffee.record_id)
    # It follows its own writes without reloading: the next call finds what the last one added.
    [dark] = write_memories(ours, [Candidate("The user prefers dark mode in every editor", "preference")])
    store = ours.store(ours.db_path("user"))
    assert store.dedup_index.generation == vec.generation(store.conn)
    [same] = write_memories(ours, [Candidate("User prefers dark mode in all editors", "preference")])
    assert (same.action, same.record_id) == ("duplicate", dark.record_id)


def test_group_similarities_equal_the_pairwise_ones() -> None:
    import numpy as np

    from openclaw_cli.memory.writing.dedup import group_similarities, pair_similarity

    rng = np.random.default_rng(3)
    legs = rng.uniform(-1, 1, size=(6, 2))
    languages = ["en", "zh", "mixed", "other", "en", "zh"]
    for name in (profiles.COMPOSITE, profiles.MINILM, profiles.USE_M3):
        profile = profiles.profile_for({"provider": "local", "model": name})
        table = legs[:, : len(profile.legs)]
        for language in ("en", "zh", "mixed"):
            many = group_similarities(profile, table, language, languages)
            for n, other in enumerate(languages):
                one = pair_similarity(profile, tuple(table[n]), language, other)
                assert (one is None and many[n] == -np.inf) or abs(float(many[n]) - (one or 0.0)) < 1e-9


def test_service_add_returns_the_memory_an_exact_duplicate_repeats(tmp_path: Path) -> None:
    from openclaw_cli.memory.agent_memory import NewMemory

    service = _service(tmp_path)
    first, _ = service.add(NewMemory("我喜欢咖啡", "preference"))
    again, report = service.add(NewMemory("我喜欢咖啡。", "preference"))
    assert again.id == first.id and report.ids == []
    assert [existing for _, existing in report.duplicates] == [first.id]
    assert service.get(first.id).fsrs.reps == 1


def test_a_group_replaces_a_rows_vector_and_drops_a_row_without_one() -> None:
    # _Group.put keeps its rowids in a set too (issue 55: membership in a list made a 10k-row group's
    # load quadratic); a replaced rowid must still leave one row, a None vector none.
    import numpy as np

    from openclaw_cli.memory.writing import dedup

    group = dedup._Group()
    group.put(1, "en", np.ones(4, dtype=np.float32))
    group.put(2, "zh", np.zeros(4, dtype=np.float32))
    group.put(1, "zh", np.full(4, 2.0, dtype=np.float32))
    assert group.rowids == [2, 1] and group.languages == ["zh", "zh"]
    assert group.rows[1].tolist() == [2.0] * 4
    group.put(2, "zh", None)
    assert group.rowids == [1] and len(group.rows) == 1
    group.put(2, "en", np.ones(4, dtype=np.float32))
    assert group.rowids == [1, 2]
