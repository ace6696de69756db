"""The stored vectors' mean direction (centroid.py) on real stores, and the hubness correction search makes
with it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from openclaw_cli.config.loading import SearchSettings
from openclaw_cli.memory.search.legs import semantic
from openclaw_cli.memory.search.pipeline import HybridSearcher, SearchRequest
from openclaw_cli.memory.service import MemoryService
from openclaw_cli.memory.store.memory_store import MemoryStore
from openclaw_cli.memory.store.sqlite import vec
from openclaw_cli.memory.store.sqlite.meta import get_meta, set_meta, write_txn
from openclaw_cli.memory.store.vectors import centroid
from tests.conftest import run_cli
from tests.memory_helpers import add, service_for

FACTS = [
    "Prefers dark themes in every editor and terminal.",
    "Drives a BYD Seal EV, bought in January 2024.",
    "Is allergic to penicillin; remind doctors.",
    "Runs three times a week along the river.",
    "Uses fish shell with tmux; the prefix key is remapped to Ctrl-a.",
    "Prefers PostgreSQL over MySQL for anything new.",
    "Reads Hacker News every morning with coffee.",
    "Has a ginger cat named Niangao.",
    "Studied computer science at Zhejiang University.",
    "Never deploys on a Friday afternoon.",
    "每周跑步三次，一般早上六点半沿钱塘江跑。",
    "不吃香菜，点外卖要备注。",
    "女儿叫朵朵，今年六岁。",
    "父母住在宁波，逢年过节开车回去看他们。",
    "对海鲜过敏。",
    "Work laptop is a 14-inch MacBook Pro.",
    "Likes science fiction, especially The Three-Body Problem.",
    "Wants code review comments as short bullet points.",
    "Learns new tools by reading their source code.",
    "Keeps mornings free for focused coding.",
    "Assistant: Noted.",
    "Assistant: Quite a change of tone.",
    "User: OK, thanks!",
]


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> MemoryService:
    svc = service_for(Path(tmp_path_factory.mktemp("centroid")))
    for text in FACTS:
        add(svc, text)
    return svc


def _store(service: MemoryService) -> MemoryStore:
    return next(iter(service.existing_stores()))


def _filled(home: Path, texts: list[str] = FACTS) -> tuple[MemoryService, MemoryStore]:
    service = service_for(home)
    for text in texts:
        add(service, text)
    return service, _store(service)


def _all_vectors(store: MemoryStore) -> np.ndarray:
    rowids = [r[0] for r in store.conn.execute("SELECT rowid FROM records WHERE deleted = 0")]
    return np.stack(list(store.vector_matrix().rows(rowids).values()))


def test_writers_keep_the_mean_direction_of_each_model(service: MemoryService) -> None:
    store = _store(service)
    stored = centroid.load(store.storage)
    assert stored is not None and stored.table == vec.current_table(store.conn)
    assert stored.rows >= centroid.MIN_ROWS
    everything = _all_vectors(store)
    for leg, (start, width) in enumerate(((0, 384), (384, 512))):
        mean = everything[: stored.rows, start : start + width].mean(axis=0)
        # The mean of the first `rows` vectors, as stored: same direction, up to float32 rounding.
        assert float(stored.directions[leg] @ mean / np.linalg.norm(mean)) == pytest.approx(1.0, abs=1e-5)
        assert float(np.linalg.norm(stored.directions[leg])) == pytest.approx(1.0, abs=1e-5)


def test_hubness_is_relative_to_the_average_memory(service: MemoryService) -> None:
    store = _store(service)
    found = centroid.compute(store.storage, str(store.storage.vector_table()), (384, 512))
    assert found is not None
    everything = _all_vectors(store)
    for leg, (start, width) in enumerate(((0, 384), (384, 512))):
        hubness = found.hubness(leg, everything[:, start : start + width])
        # Unit legs: the mean alignment is the mean of the alignments, so hubness averages to zero.
        assert float(hubness.mean()) == pytest.approx(0.0, abs=0.01)


def test_a_damaged_or_missing_centroid_is_computed_again(tmp_path: Path) -> None:
    _, store = _filled(tmp_path)
    good = centroid.load(store.storage)
    assert good is not None
    with write_txn(store.conn):
        set_meta(store.conn, centroid.META_KEY, "{not json")
    assert centroid.load(store.storage) is None
    again = centroid.current(store.storage, (384, 512))
    assert again is not None and again.rows == len(FACTS)
    assert get_meta(store.conn, centroid.META_KEY) == "{not json"  # a reader does not write
    with write_txn(store.conn):
        store.conn.execute("DELETE FROM meta WHERE key = ?", (centroid.META_KEY,))
        assert centroid.refresh(store.storage) is not None
    assert centroid.load(store.storage) is not None


def test_too_few_vectors_give_no_centroid_and_no_correction(tmp_path: Path) -> None:
    service, store = _filled(tmp_path, FACTS[:5])
    assert centroid.load(store.storage) is None
    assert centroid.current(store.storage, (384, 512)) is None
    assert service.search(SearchRequest("dark themes editor")).hits  # search works without one


def test_it_goes_stale_after_a_tenth_more_memories(tmp_path: Path) -> None:
    service, store = _filled(tmp_path)
    first = centroid.load(store.storage)
    assert first is not None
    table = str(vec.current_table(store.conn))
    assert centroid.is_fresh(store.storage, first, table)
    for n in range(centroid.next_refresh(first) - first.mark + 1):
        add(service, f"Filler memory number {n} about gardening tools.")
    later = centroid.load(store.storage)
    assert later is not None and later.mark > first.mark  # the writer refreshed it on its own
    assert not centroid.is_fresh(store.storage, first, table)


def test_a_rebuilt_index_gets_its_own_centroid(tmp_path: Path) -> None:
    service, store = _filled(tmp_path)
    old_table = vec.current_table(store.conn)
    service.close()
    result = run_cli(tmp_path, "memory", "index", "--rebuild")
    assert result.returncode == 0, result.stderr
    reopened = service_for(tmp_path)
    store = _store(reopened)
    stored = centroid.load(store.storage)
    assert stored is not None
    assert stored.table == vec.current_table(store.conn) != old_table


def test_search_takes_weight_times_hubness_off_each_legs_cosine(service: MemoryService) -> None:
    store = _store(service)
    found = centroid.current(store.storage, (384, 512))
    assert found is not None
    rows = store.vector_matrix().rows([r[0] for r in store.conn.execute("SELECT rowid FROM records")])
    query = service.embedder().embed_query("what cat does he have").vector
    plain = semantic.leg_cosines(query, rows, (384, 512))
    corrected = semantic.leg_cosines(query, rows, (384, 512), semantic.HubCorrection(found, 0.3))
    for rowid, vector in rows.items():
        for leg, (start, width) in enumerate(((0, 384), (384, 512))):
            hubness = float(found.hubness(leg, vector[None, start : start + width])[0])
            assert corrected[rowid][leg] == pytest.approx(plain[rowid][leg] - 0.3 * hubness, abs=1e-5)
    top = [h.record.l0 for h in service.search(SearchRequest("what cat does he have", k=3)).hits]
    assert top[0] == "Has a ginger cat named Niangao."


def test_hub_weight_is_a_setting_and_0_turns_the_correction_off(service: MemoryService) -> None:
    store = _store(service)
    on = HybridSearcher(store, SearchSettings(), service.embedder(), warm=True)
    off = HybridSearcher(store, SearchSettings(hub_weight=0.0), service.embedder(), warm=True)
    assert on.profile.hub_weight > 0 and on.hub_correction() is not None
    assert off.profile.hub_weight == 0 and off.hub_correction() is None


def test_a_purge_computes_the_mean_again_without_the_users_vectors(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    for text in FACTS:
        add(service, text, user_id="keep")
    for n in range(10):
        add(service, f"Gone memory {n}: the purged user's garden has {n} apple trees.", user_id="gone")
    before = centroid.load(_store(service).storage)
    assert before is not None and before.rows > len(FACTS)
    service.close()
    result = run_cli(tmp_path, "memory", "purge", "--user", "gone", "--yes")
    assert result.returncode == 0, result.stderr
    after = centroid.load(_store(service_for(tmp_path)).storage)
    assert after is not None and after.rows == len(FACTS)


def _refreshes(home: Path, chunk: int, texts: list[str]) -> list[str]:
    """Every centroid a load of `texts` stores, in order: in chunks of `chunk` records per transaction
    (a chunk keeps the vectors' sum as it writes them), or one record per transaction (each refresh
    reads every stored vector)."""
    from benchmarks.synth import CompositeEmbedder
    from openclaw_cli.memory.agent_memory import NewMemory

    service = service_for(home)
    embedder = CompositeEmbedder()
    service.embedder = lambda: embedder  # type: ignore[method-assign]
    records = [service.build_record(NewMemory(l0=t, category="note")) for t in texts]
    store = service.store(service.db_path("user"))
    stored: list[str] = []
    set_meta_of_storage = store.storage.set_meta

    def noting(key: str, value: object) -> None:
        if key == centroid.META_KEY:
            stored.append(str(value))
        set_meta_of_storage(key, value)

    store.storage.set_meta = noting  # type: ignore[method-assign]
    for start in range(0, len(records), chunk):
        store.add(records[start : start + chunk], chunk=chunk)
    service.close()
    return stored


@pytest.mark.parametrize("read_chunk", [10_000, 44], ids=["one read chunk", "past one read chunk"])
def test_a_bulk_load_stores_the_centroids_that_reading_every_vector_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read_chunk: int
) -> None:
    """The sum a chunk keeps is exact only while the vectors fit one read chunk (`read_chunk`): past it the
    refresh reads them again, and the centroids stay the same to the bit either way (with 44, a refresh
    falls at 45 stored vectors: one past it)."""
    monkeypatch.setattr(centroid, "_READ_CHUNK", read_chunk)
    texts = [
        f"The user wrote note {n} about the {('garden', 'boat', 'tax return')[n % 3]}." for n in range(150)
    ]
    summed = _refreshes(tmp_path / "chunked", 150, texts)
    read = _refreshes(tmp_path / "one by one", 1, texts)
    assert len(summed) > 15  # refreshed at 21, 23, 26, ... 148 stored vectors
    assert summed == read
    last = centroid.Centroid.from_json(summed[-1])
    assert last is not None and last.rows > 130
