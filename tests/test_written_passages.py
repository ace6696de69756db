"""A text written again (the remember path: write_memories) after its record changed is not embedded again;
a delete forgets the kept vectors (memory/store/vectors/written_passages.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from openclaw_cli.memory.service import MemoryService
from openclaw_cli.memory.store.vectors import written_passages
from openclaw_cli.memory.text.analysis import detect_language, l0_hash
from openclaw_cli.memory.writing.candidate import Candidate
from openclaw_cli.memory.writing.write_path import write_memories
from tests.memory_helpers import service_for

TEXT = "Maya waters the plants on the balcony every Sunday"


def _vector(service: MemoryService, record_id: str) -> np.ndarray:
    store = next(iter(service.existing_stores()))
    rowid = store.rowid(record_id)
    return store.storage.read_vectors([rowid])[rowid]


def _replace_text(service: MemoryService, record_id: str, text: str) -> None:
    store = next(iter(service.existing_stores()))
    old = store.get(record_id)
    new = old.model_copy(update={"l0": text, "l0_hash": l0_hash(text), "language": detect_language(text)})
    vector = store.embed_cached(service.embedder(), [text])[0]
    with store.storage.transaction():
        store.replace(new, vector, "merged")


def _write(service: MemoryService) -> str:
    [outcome] = write_memories(service, [Candidate(TEXT, "event", user_id="u-maya")])
    assert outcome.action == "added", outcome
    return outcome.record_id or ""


def test_a_text_written_again_after_its_record_changed_is_not_embedded_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written_passages.forget()
    service = service_for(tmp_path)
    try:
        first = _write(service)
        before = _vector(service, first)
        # The record's text changes as a merge changes it (the row replaced, nothing forgotten: the old
        # value stays in its history): no live record holds TEXT any more.
        _replace_text(service, first, "Maya sold her old car in March")
        embedded: list[list[str]] = []
        embedder = service.embedder()
        real = embedder.embed_passages

        def counting(texts: Sequence[str]) -> np.ndarray:
            embedded.append(list(texts))
            return real(texts)

        monkeypatch.setattr(embedder, "embed_passages", counting)
        again = _write(service)
        assert embedded == []  # the kept vector, not the model
        assert np.array_equal(_vector(service, again), before)
        service.delete(again)  # a delete forgets what the process keeps of the words
        service.delete(first)
        _write(service)
        assert embedded == [[TEXT]]
    finally:
        service.close()
