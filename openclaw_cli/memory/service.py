"""MemoryService: one agent's memory, the one composition point the CLI, the agent, the gateway and MCP call.

It knows where each scope lives (the agent's database, or the shared one for user memory when
`memory.shareUserMemory` is on), opens databases lazily (backends.py picks SQLite or PostgreSQL), builds
the embedder only when needed, and calls the subpackages: writes, search (a searcher per store,
search/build.py), the workspace notes, index upkeep, status and the transcript index. A search first
syncs the workspace notes when their files changed (sync_workspace(only_if_dirty=True)).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, suppress
from datetime import datetime
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import NotFound
from openclaw_cli.core.paths import SHARED_AGENT, Home
from openclaw_cli.memory import backends
from openclaw_cli.memory.agent_memory import NewMemory, record_of
from openclaw_cli.memory.embedder_preload import EmbedderPreload
from openclaw_cli.memory.store.bulk.load import BulkWriter
from openclaw_cli.memory.store.memory_store import MemoryStore, WriteReport
from openclaw_cli.memory.store.records import DEFAULT_USER, MemoryRecord, utc_now
from openclaw_cli.memory.text import jieba_dictionary

# The search pipeline is imported where used: a one-search process starts loading the model before it
# imports the searcher (preload_embedder), so that the model's load overlaps that import.
if TYPE_CHECKING:
    from openclaw_cli.config.loading import MemorySettings
    from openclaw_cli.memory.embedding.onnx_embedder import Embedder
    from openclaw_cli.memory.search.context_stages.about import ContextSteps
    from openclaw_cli.memory.search.pipeline import HybridSearcher, SearchRequest, SearchResult
    from openclaw_cli.memory.transcripts.index import TranscriptIndex
    from openclaw_cli.memory.workspace.markdown_index import SyncReport
    from openclaw_cli.memory.writing.purge import PurgeReport


class MemoryService:
    def __init__(
        self,
        home: Home,
        agent_id: str,
        settings: MemorySettings,
        *,
        warm: bool = False,
        one_shot: bool = False,
        fast_start: bool = False,
        owner: str = DEFAULT_USER,
    ) -> None:
        """`warm`: keep vectors in memory for repeated searches. `one_shot`: this process runs one search
        and exits, so the model is loaded for a fast start rather than fast repeated runs. `fast_start`:
        this process embeds a few texts and exits (one `memory add`); vectors stay exactly as otherwise.
        `owner`: the person whose memories the workspace Markdown's notes are (identity.owner_id)."""
        self.home = home
        self.agent_id = agent_id
        self.settings = settings
        self.warm = warm
        self.one_shot = one_shot
        self.fast_start = fast_start
        self.owner = owner
        self._stores: dict[Path, MemoryStore] = {}
        self._contexts: dict[Path, ContextSteps] = {}  # a warm process's search caches, by store
        self._preload = EmbedderPreload(lambda: self.embedder())

    # ------------------------------------------------------------------ plumbing

    def db_path(self, scope: str) -> Path:
        if scope == "user" and self.settings.share_user_memory:
            return self.home.memory_db(SHARED_AGENT)
        return self.home.memory_db(self.agent_id)

    def db_paths(self) -> list[Path]:
        """Every database this agent reads, shared first (shared memories win ties)."""
        paths = [self.db_path("user"), self.db_path("agent")]
        return list(dict.fromkeys(paths))

    def embedder(self) -> Embedder:
        from openclaw_cli.memory.embedding.loader import create_embedder

        return create_embedder(
            self.settings.embedding,
            one_shot=self.one_shot,
            cache_dir=self.model_cache_dir(),
            fast_start=self.fast_start,
        )

    def preload_embedder(self) -> None:
        """Start loading the embedder in the background, for a process about to run one search: model
        sessions initialise without holding the GIL while the store opens, the query is analysed and the
        keyword leg runs, and the search waits for them only when it embeds the query. A failure here is
        not reported: the search meets it again, where it is used."""
        if not self._preload.started:
            from openclaw_cli.memory.embedding.loader import settle_imports

            settle_imports(self.settings.embedding)
            self._preload.start()

    def expect_passages(self, count: int) -> None:
        """`count` texts are about to be embedded: what embedding that many needs (USE-m3's full
        segmentation, for a bulk load) starts loading as soon as the preloaded models are in, now if they
        are. Without a preload the embedder meets the count itself, when the texts come."""
        self._preload.expect(count)

    def model_cache_dir(self) -> Path:
        from openclaw_cli.memory.embedding.loader import model_cache_dir

        return model_cache_dir(self.settings.embedding, self.home.model_cache_dir)

    def model_needs_preparing(self) -> bool:
        """True when the next embedding will first convert a packaged model (seconds, once per home)."""
        from openclaw_cli.memory.embedding.deferred import model_needs_preparing

        return model_needs_preparing(self.settings.embedding, self.model_cache_dir())

    def store(self, path: Path, *, create: bool = True) -> MemoryStore:
        if path not in self._stores:
            self.home.ensure_root()
            # The first Han text loads jieba's dictionary from here (entry by entry in a short process).
            # It sits beside the converted models: both are derived from packaged files only, so homes
            # that share a model cache share it too (building it costs ~1 s of CPU per directory).
            jieba_dictionary.set_cache_dir(self.model_cache_dir(), one_shot=self.fast_start or self.one_shot)
            self._stores[path] = backends.open_store(
                self.home, self.settings, path, self.embedder, create=create
            )
        return self._stores[path]

    def stored_agents(self) -> list[str]:
        """Every agent with a memory database, the shared store included (backends.stored_agents)."""
        return backends.stored_agents(self.home, self.settings)

    def existing_stores(self) -> Iterator[MemoryStore]:
        for path in self.db_paths():
            if self.settings.backend == "postgres" or path.exists():
                yield self.store(path)

    def damage_guard(self) -> AbstractContextManager[None]:
        """An SQLite error met mid-operation turned into what to do about it (backends.damage_guard)."""
        return backends.damage_guard(self._stores)

    def close(self) -> None:
        self._preload.join()  # never leave a model half-loaded at interpreter exit
        for store in self._stores.values():
            with suppress(Exception):
                store.close()
        self._stores.clear()
        self._contexts.clear()

    # ------------------------------------------------------------------ writes

    def build_record(self, item: NewMemory) -> MemoryRecord:
        return record_of(item, self.agent_id, self.settings.max_text_chars)

    def add(self, item: NewMemory) -> tuple[MemoryRecord, WriteReport]:
        """Store one memory as given (no semantic dedup: that is `writing.write_memories`). An exact
        duplicate of a live memory is not stored: that memory is returned, and `report.duplicates` says so."""
        record = self.build_record(item)
        with self.damage_guard():
            store = self.store(self.db_path(record.scope))
            report = store.add_one(record)
            if report.duplicates:
                record = store.get(report.duplicates[0][1])
            return record, report

    def add_many(
        self, records: Iterable[MemoryRecord], progress: Callable[[int], None] | None = None
    ) -> WriteReport:
        """Store already-validated records, grouped by database; existing ids are skipped, exact
        duplicates of live memories are reviewed instead of stored (MemoryStore.add).

        `records` may be a generator that validates as it goes: each record's embedding starts while the
        next ones are validated (store/bulk/load.py), and nothing is written until the last one is; if the
        generator raises, nothing is stored (and no database is created) and the error goes on up."""
        writers: dict[Path, BulkWriter] = {}
        paths: dict[str, Path] = {}  # per scope: building the path again for each record cost ~0.1 ms
        try:
            with self.damage_guard():  # feeding opens existing stores and reads their stored vectors
                for record in records:
                    if record.scope not in paths:
                        paths[record.scope] = self.db_path(record.scope)
                    path = paths[record.scope]
                    if path not in writers:
                        writers[path] = self._bulk_writer(path)
                    writers[path].feed(record)
        except BaseException:
            for writer in writers.values():
                writer.cancel()
            raise
        total = WriteReport()
        for writer in writers.values():
            with self.damage_guard():
                writer.write(total, progress)
        return total

    def _bulk_writer(self, path: Path) -> BulkWriter:
        """A bulk writer into `path`: it reads stored vectors of equal texts from the database when it
        exists, and creates it only once there is something to write."""
        if path.exists():
            return self.store(path).bulk_writer()
        return BulkWriter(self.embedder, None, lambda: self.store(path))

    def delete(self, record_id: str) -> MemoryRecord:
        with self.damage_guard():
            record = self._locate(record_id).delete(record_id)
        self._forget_words_or_fail(f"deleted {record_id}")
        return record

    def purge_user(self, user_id: str, *, all_agents: bool = False, sessions: bool = False) -> PurgeReport:
        """Forget `user_id` on this backend only (writing/purge.py); `memory purge` (forget/) covers all stores."""
        from openclaw_cli.memory.writing.purge import purge_user

        with self.damage_guard():
            report = purge_user(
                self.home,
                self.agent_id,
                user_id,
                all_agents=all_agents,
                sessions=sessions,
                agents=self.stored_agents(),
                open_store=lambda path: self.store(path, create=False),
            )
        self._forget_words_or_fail(f"purged {user_id}")
        return report

    def forget_words(self) -> list[Path]:
        """Forget the words the caches keep (memory/cached_words.py); the table files left, if any."""
        from openclaw_cli.memory.cached_words import forget_cached_words

        return forget_cached_words(self.home.word_cache_dir, self.model_cache_dir())

    def _forget_words_or_fail(self, done: str) -> None:
        from openclaw_cli.memory.cached_words import require_forgotten

        require_forgotten(self.forget_words(), done)

    def record_hits(self, record_ids: Sequence[str], now: datetime | None = None) -> list[str]:
        """Review each hit, best first: its rank rates the review (MemoryStore.record_hits). One deleted
        since the search is skipped."""
        moment = now or utc_now()
        reviewed: list[str] = []
        # Consecutive hits in one database are reviewed in one transaction (one commit per hit cost a turn
        # ~20 commits, issue 54); each keeps its own rank, as when reviewed one by one.
        # The databases are listed once for the turn, not once per hit (each listing stats their files).
        stores = list(self.existing_stores())
        located = [
            (rank, record_id, next((s for s in stores if s.exists(record_id)), None))
            for rank, record_id in enumerate(record_ids)
        ]
        for store, run in groupby(located, key=lambda hit: hit[2]):
            hits = list(run)
            if store is not None:  # None: gone from every database, tombstone included
                reviewed += store.record_hits([hit[1] for hit in hits], moment, first_rank=hits[0][0])
        return reviewed

    # ------------------------------------------------------------------ reads

    def _find(self, record_id: str) -> MemoryStore | None:
        return next((store for store in self.existing_stores() if store.exists(record_id)), None)

    def _locate(self, record_id: str) -> MemoryStore:
        found = self._find(record_id)
        if found is not None:
            return found
        raise NotFound(f"no memory with id {record_id!r}", hint="list ids with `openclaw memory list`")

    def get(self, record_id: str) -> MemoryRecord:
        return self._locate(record_id).get(record_id)

    def history(self, record_id: str) -> list[dict[str, Any]]:
        """Works for gone records too: their history rows outlive the record (and its tombstone)."""
        for store in self.existing_stores():
            if store.has_history(record_id):
                return store.history(record_id)
        return self._locate(record_id).history(record_id)

    def unknown_person(self, user_id: str, stores: list[MemoryStore] | None = None) -> str | None:
        """Why `user_id` has no memories here (or in `stores`), naming close matches; None for a known person."""
        from openclaw_cli.memory.store.persons import unknown_person

        found = list(self.existing_stores()) if stores is None else stores
        return unknown_person(user_id, [store.storage for store in found])

    def list_records(self, **filters: Any) -> list[MemoryRecord]:
        out: list[MemoryRecord] = []
        for store in self.existing_stores():
            out.extend(store.list_records(**filters))
        return out

    def searcher(self, store: MemoryStore) -> HybridSearcher:
        """A searcher for `store` as it is now: the model is only loaded once the store has vectors."""
        from openclaw_cli.memory.search.build import build_searcher

        return build_searcher(
            store, self.settings.search, self.embedder, preloading=self._preload.started, warm=self.warm,
            contexts=self._contexts, word_cache_dir=self.home.word_cache_dir,
            model_cache_dir=self.model_cache_dir(),
        )

    def search(self, request: SearchRequest, now: datetime | None = None) -> SearchResult:
        # Not the pipeline yet (~20 ms of imports): a one-search process first starts reading the vectors.
        from openclaw_cli.memory.search.result import SearchResult, merge_results, validate_request

        validate_request(request)
        moment = now or utc_now()
        self.sync_workspace(only_if_dirty=True)
        from openclaw_cli.memory.search.legs.word_warmup import searching

        with self.damage_guard(), searching():  # a background word warm-up waits for it
            stores = list(self.existing_stores())  # walked once: each walk checks every database path
            if self._preload.started and request.mode != "bm25":
                # One search in this process (preload_embedder): its vectors are read while the model loads.
                for store in stores:
                    store.load_vectors_ahead()
            results = [self.searcher(store).search(request, moment) for store in stores]
        if not results:
            return SearchResult(hits=[], warnings=["no memories stored yet"])
        unknown = None if request.user_id is None else self.unknown_person(request.user_id, stores)
        if unknown is not None:
            results[0].warnings.append(unknown)
        return results[0] if len(results) == 1 else merge_results(results, request.k)

    # ------------------------------------------------------------------ maintenance

    def sync_workspace(
        self, progress: Callable[[int], None] | None = None, *, only_if_dirty: bool = False
    ) -> SyncReport | None:
        """Index the workspace's MEMORY.md and memory/*.md as the owner's note records in this agent's
        database.

        None when there is nothing to do: no workspace and nothing indexed from one, or (`only_if_dirty`,
        as before a search) no file added, removed or touched since the last sync and no note that is not
        the owner's (an older version's agent-scope notes, or the owner changed): those move at once.
        """
        from openclaw_cli.memory.workspace.files import workspace_dir
        from openclaw_cli.memory.workspace.sync import sync_notes

        root = workspace_dir(self.home, self.agent_id, self.settings)
        return sync_notes(
            root, self.db_path("agent"), self.store, self.damage_guard, self.agent_id, self.owner,
            self.forget_words, progress, only_if_dirty=only_if_dirty,
        )

    def workspace_file_count(self) -> int:
        from openclaw_cli.memory.workspace.files import workspace_dir
        from openclaw_cli.memory.workspace.markdown_index import workspace_files

        return len(workspace_files(workspace_dir(self.home, self.agent_id, self.settings), []))

    def configured_identity(self) -> tuple[dict[str, Any], str | None]:
        """The configured embedder as far as known without an API call, and what is wrong with it."""
        from openclaw_cli.memory.embedding.loader import configured_identity

        return configured_identity(self.settings.embedding)

    def check_indexes(self) -> list[Any]:
        from openclaw_cli.memory.upkeep.index_check import check

        configured, problem = self.configured_identity()
        return [check(store, configured, problem, self.embedder) for store in self.existing_stores()]

    def repair_indexes(self, progress: Callable[[int], None] | None = None) -> list[Any]:
        from openclaw_cli.memory.upkeep.index import repair

        return [repair(store, self.embedder, progress) for store in self.existing_stores()]

    def rebuild_indexes(self, progress: Callable[[int], None] | None = None) -> list[Any]:
        from openclaw_cli.memory.upkeep.index import rebuild

        embedder = self.embedder()
        return [rebuild(store, embedder, progress) for store in self.existing_stores()]

    def index(
        self, *, rebuild: bool, progress: Callable[[int], None] | None = None
    ) -> tuple[SyncReport | None, list[Any]]:
        """`memory index`: sync the workspace Markdown, then repair (or rebuild) every database's indexes."""
        synced = self.sync_workspace(progress)
        return synced, self.rebuild_indexes(progress) if rebuild else self.repair_indexes(progress)

    def transcripts(self) -> TranscriptIndex:
        """This agent's session transcript index (memory/transcripts/index.py), embedding with this service's model."""
        from openclaw_cli.memory.transcripts.index import TranscriptIndex

        return TranscriptIndex(self.home, self.agent_id, self.settings, self.embedder)

    def live_count(self) -> int:
        from openclaw_cli.memory.upkeep.index import total_live

        return sum(total_live(store) for store in self.existing_stores())

    def pending_count(self) -> int:
        from openclaw_cli.memory.upkeep.index import pending_count

        return sum(pending_count(store) for store in self.existing_stores())

    def status(self) -> dict[str, Any]:
        from openclaw_cli.memory.upkeep.status import agent_status

        configured, problem = self.configured_identity()
        stores = list(self.existing_stores())
        return agent_status(self.agent_id, self.settings.share_user_memory, stores, configured, problem)
