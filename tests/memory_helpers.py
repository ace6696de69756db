"""Helpers for memory tests: services over real database files with chosen embedders."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from openclaw_cli.config.loading import Settings
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.service import MemoryService
from openclaw_cli.memory.store.records import MemoryRecord
from openclaw_cli.memory.writing.candidate import Candidate, Verdict


def settings_with(**memory: Any) -> Settings:
    return Settings(memory=memory)


def api_settings(url: str, **embedding: Any) -> Settings:
    """Embeddings through litellm against the fake server on loopback."""
    config = {
        "provider": "litellm",
        "model": "openai/text-embedding-3-small",
        "apiBase": url,
        "dimensions": 64,
        "maxRetries": 0,
        **embedding,
    }
    return Settings(memory={"embedding": config})


def shared_model_cache() -> Path:
    """One directory of converted models for the whole test run (per user; conversions are keyed by
    their source files and format, so reusing it across runs is safe)."""
    return Path(tempfile.gettempdir()) / f"openclaw-test-models-{os.getuid()}"


def copy_shared_models(destination: Path) -> None:
    """Copy the packaged models' current conversions (converted first if need be) from the shared cache
    into `destination`, without jieba's table. Only the current ones: on a developer's machine the shared
    cache also holds the conversions of every other checkout, gigabytes that copying took seconds over."""
    from openclaw_cli.memory.embedding.onnx_embedder import local_model_files
    from openclaw_cli.memory.embedding.quantize import int8_compute_model, weights_path
    from openclaw_cli.memory.embedding.use_m3 import model as use_m3

    shared = shared_model_cache()
    minilm = int8_compute_model(local_model_files()[0], shared)
    model = use_m3.convert(shared)
    files = [minilm, weights_path(minilm), model, use_m3.table_path(model)]
    pieces = use_m3.pieces_path(model)
    destination.mkdir(parents=True, exist_ok=True, mode=0o700)
    for path in [*files, *([pieces] if pieces.exists() else [])]:
        shutil.copy2(path, destination / path.name)


def with_shared_models(settings: Settings) -> Settings:
    embedding = settings.memory.embedding
    if embedding.model_cache_dir is not None:
        return settings
    memory = settings.memory.model_copy(
        update={"embedding": embedding.model_copy(update={"model_cache_dir": str(shared_model_cache())})}
    )
    return settings.model_copy(update={"memory": memory})


def service_for(home: Path, settings: Settings | None = None, **kwargs: Any) -> MemoryService:
    return MemoryService(Home(home), "main", with_shared_models(settings or Settings()).memory, **kwargs)


def add(service: MemoryService, text: str, **fields: Any) -> str:
    record, _ = service.add(NewMemory(l0=text, **fields))
    return record.id


# Dedup tests: a grey zone wide enough that every related pair they use lands in it (measured 0.52-0.95
# apart), and the caller's own judge (a plain function is what a caller without a model may pass).
WIDE_GREY = {"newBelow": 0.5, "duplicateAbove": 0.97}


class FixedJudge:
    """Answers with a fixed verdict and records what it was asked."""

    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict
        self.asked: list[tuple[str, str]] = []

    def __call__(self, candidate: Candidate, existing: MemoryRecord) -> Verdict:
        self.asked.append((candidate.l0, existing.l0))
        return self.verdict


def dedup_service(tmp_path: Path, **dedup: Any) -> MemoryService:
    return service_for(tmp_path / "home", settings_with(dedup=dedup) if dedup else None)


def table_words(directory: Path) -> set[str]:
    """Every word in the word tables under `directory` (embedding/word_table.py), read-only."""
    import apsw

    found: set[str] = set()
    for path in sorted(directory.glob("words-*.sqlite")):
        conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
        conn.setbusytimeout(10_000)  # a running gateway may be writing the table at this moment
        try:
            found |= {str(row[0]) for row in conn.execute("SELECT word FROM words")}
        except apsw.SQLError as exc:
            # A file a process has just created and not yet made a table in (word_table.py `_check`
            # makes it in its own transaction): it holds no words yet.
            if "no such table" not in str(exc):
                raise
        finally:
            conn.close()
    return found


# Memories and questions for the tests that run a faked area's core path once with the real packaged
# models: each question shares no content word with the memory it must find (only the meaning leads
# there), and the other memories are about other things.
REAL_MEMORIES = {
    "tea": "User drinks green tea every morning",
    "boat": "User is saving money for a sailing boat",
    "badminton": "User plays badminton on Tuesday nights",
    "cat": "User's cat is called Miso and hates the vacuum cleaner",
}
BY_MEANING = {
    "which hot drink does the user like": REAL_MEMORIES["tea"],
    "what sport on weekday evenings": REAL_MEMORIES["badminton"],
}


def found_by_meaning(home: Path, query: str, *args: str) -> list[str]:
    """The memories a vector-only search of `query` (and `args`) returns: the real CLI with the home's
    configured model, best first; the keyword leg left out, so what is found is found by the vectors."""
    from tests.conftest import run_cli

    done = run_cli(home, "memory", "search", query, "--mode", "vector", "--json", *args)
    assert done.returncode == 0, done.stderr
    return [hit["l0"] for hit in done.json()["results"]]
