"""The eval set's vectors shared between the modules of a run (tests/eval_vectors.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from openclaw_cli.memory.embedding.composite import CompositeEmbedder
from openclaw_cli.memory.embedding.onnx_embedder import EmbedderIdentity, QueryEmbedding
from tests.eval_vectors import SharedVectors, run_directory, shared_vectors
from tests.fake_embedder import CompositeFake


class Recording(CompositeFake):
    """The fake embedder, recording every text it is asked to embed; `shift` makes it another model."""

    def __init__(self, shift: float = 0.0, model: str = "composite-minilm-512") -> None:
        super().__init__()
        self.shift, self.model = shift, model
        self.passages: list[str] = []
        self.queries: list[str] = []

    @property
    def identity(self) -> EmbedderIdentity:
        return EmbedderIdentity("fake", self.model, 896)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.passages.extend(texts)
        return np.asarray(super().embed_passages(texts)) + np.float32(self.shift)

    def embed_query(self, text: str) -> QueryEmbedding:
        self.queries.append(text)
        found = super().embed_query(text)
        return QueryEmbedding(found.vector + np.float32(self.shift), found.unknown_share)


def test_a_text_is_embedded_once_per_run_and_read_back_to_the_bit(tmp_path: Path) -> None:
    first_model, later_model = Recording(), Recording()
    first = SharedVectors(first_model, tmp_path)
    vectors = first.embed_passages(["a", "b", "c"])
    query = first.embed_query("q")
    first.publish()

    later = SharedVectors(later_model, tmp_path)
    again = later.embed_passages(["c", "a", "d"])
    assert np.array_equal(again, np.stack([vectors[2], vectors[0], Recording().embed_passages(["d"])[0]]))
    assert later_model.passages == ["c", "a", "d"]  # the two published ones checked, the new one embedded
    assert later.embed_passages(["b"]).tobytes() == vectors[1].tobytes()
    assert later_model.passages == ["c", "a", "d"]  # checked once: read, not embedded
    found = later.embed_query("q")
    assert np.array_equal(found.vector, query.vector) and found.unknown_share == query.unknown_share
    assert later.embed_query("q").vector.tobytes() == query.vector.tobytes()
    assert later_model.queries == ["q"]  # the one check


def test_published_passages_the_model_does_not_give_fail_the_check(tmp_path: Path) -> None:
    first = SharedVectors(Recording(), tmp_path)
    first.embed_passages(["a", "b"])
    first.publish()
    with pytest.raises(AssertionError, match="other vectors than the published ones"):
        SharedVectors(Recording(shift=1e-6), tmp_path).embed_passages(["b"])


def test_a_published_query_the_model_does_not_give_fails_the_check(tmp_path: Path) -> None:
    first = SharedVectors(Recording(), tmp_path)
    first.embed_query("where do I live")
    first.publish()
    with pytest.raises(AssertionError, match="another vector than the published one"):
        SharedVectors(Recording(shift=1e-6), tmp_path).embed_query("where do I live")


def test_two_modules_publishing_keep_each_others_vectors(tmp_path: Path) -> None:
    one, other = SharedVectors(Recording(), tmp_path), SharedVectors(Recording(), tmp_path)
    one.embed_passages(["a"])
    other.embed_passages(["b"])
    other.embed_query("q")
    one.publish()
    other.publish()  # after the first: it reads what that one wrote before writing
    model = Recording()
    last = SharedVectors(model, tmp_path)
    assert set(last.passages) == {"a", "b"} and set(last.queries) == {"q"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "fake-composite-minilm-512-896.npz"
    ]  # no temp files


def test_each_model_has_a_file_of_its_own(tmp_path: Path) -> None:
    SharedVectors(Recording(), tmp_path).publish()
    SharedVectors(Recording(model="other"), tmp_path).publish()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "fake-composite-minilm-512-896.npz",
        "fake-other-896.npz",
    ]


def test_an_empty_batch_is_an_empty_matrix(tmp_path: Path) -> None:
    assert SharedVectors(Recording(), tmp_path).embed_passages([]).shape == (0, 896)


def test_the_pair_shares_each_model_and_embeds_as_the_pair_does(tmp_path: Path) -> None:
    english, multilingual = Recording(model="english"), Recording(model="multilingual")
    shared, published = shared_vectors(CompositeEmbedder(english, multilingual), tmp_path)
    assert isinstance(shared, CompositeEmbedder)
    assert [p.model for p in published] == [english, multilingual]
    shared.embed_passages(["I like tea", "我喜欢喝茶"])
    assert english.passages == ["I like tea"] and multilingual.passages == ["I like tea", "我喜欢喝茶"]
    alone, (only,) = shared_vectors(english, tmp_path)
    assert alone is only and only.model is english


def test_the_workers_of_a_run_share_one_directory(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = tmp_path_factory.getbasetemp()
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    assert run_directory(tmp_path_factory) == base.parent / "eval-vectors"
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    assert run_directory(tmp_path_factory) == base / "eval-vectors"
    assert (base / "eval-vectors").is_dir()
