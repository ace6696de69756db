"""Embedders: the packaged MiniLM model, an ONNX export directory, and an API model behind the fake server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from openclaw_cli.config.loading import EmbeddingSettings
from openclaw_cli.core.errors import ConfigError, StoreError
from openclaw_cli.llm import calls as llm
from openclaw_cli.memory.embedding.api import LiteLLMEmbedder
from openclaw_cli.memory.embedding.loader import create_embedder, expected_identity
from openclaw_cli.memory.embedding.onnx_embedder import (
    LOCAL_DIMENSIONS,
    LOCAL_MODEL_NAME,
    EmbedderIdentity,
    EmbeddingUnavailable,
    OnnxEmbedder,
    load_session,
    load_tokenizer,
    local_model_files,
)
from tests import fake_openai as fake_server
from tests.fake_openai import FakeOpenAI, hashed_vector

fake_openai = fake_server.fake_openai  # the fixture, visible to this module's tests

SENTENCES = [
    "ok",
    "The cat sleeps on the warm windowsill every afternoon.",
    "Remember that the user prefers dark roast coffee without sugar.",
    "Deploy the API with docker compose, then tail the logs for stack traces.",
    "Meeting moved to Thursday at 3pm because the client is travelling.",
    " ".join(["a very long passage that goes well beyond the model's limit"] * 40),
    "用户喜欢在早上喝黑咖啡",
    "Lesson: run the migration on a copy of the database before production.",
]


MINILM = EmbeddingSettings(model=LOCAL_MODEL_NAME)


def unit_rows(matrix: np.ndarray) -> bool:
    return bool(np.allclose(np.linalg.norm(matrix, axis=-1), 1.0, atol=1e-5))


@pytest.fixture(scope="module")
def local() -> OnnxEmbedder:
    embedder = create_embedder(MINILM)
    assert isinstance(embedder, OnnxEmbedder)
    return embedder


@pytest.fixture(scope="module")
def float_reference() -> OnnxEmbedder:
    """The packaged model computed as shipped (float32 arithmetic, batched): the reference vectors."""
    model, tokenizer = local_model_files()
    return OnnxEmbedder("local", LOCAL_MODEL_NAME, model, tokenizer, threads=2)


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    """An ONNX export directory built from the packaged model files."""
    model, tokenizer = local_model_files()
    target = tmp_path / "minilm-export"
    target.mkdir()
    (target / "model.onnx").symlink_to(model)
    (target / "tokenizer.json").symlink_to(tokenizer)
    return target


# -- local (packaged) model ---------------------------------------------------------------------------------


def test_local_embedder_loads_from_packages_with_384_dim_unit_vectors(local: OnnxEmbedder) -> None:
    vectors = local.embed_passages(SENTENCES)
    assert vectors.shape == (len(SENTENCES), LOCAL_DIMENSIONS)
    assert vectors.dtype == np.float32
    assert unit_rows(vectors)
    query = local.embed_query("what coffee does the user like?")
    assert query.vector.shape == (LOCAL_DIMENSIONS,) and query.vector.dtype == np.float32
    assert unit_rows(query.vector[None, :])


def test_local_identity_matches_expected_identity(local: OnnxEmbedder) -> None:
    assert local.identity == EmbedderIdentity("local", LOCAL_MODEL_NAME, 384)
    assert expected_identity(MINILM) == local.identity
    assert local.identity.to_dict() == {"provider": "local", "model": LOCAL_MODEL_NAME, "dimensions": 384}


def test_similar_sentences_score_higher_than_unrelated(local: OnnxEmbedder) -> None:
    cat, kitten, taxes = local.embed_passages(
        ["A cat is sleeping on the sofa.", "A kitten naps on the couch.", "File the quarterly VAT return."]
    )
    assert float(cat @ kitten) > float(cat @ taxes) + 0.3
    query = local.embed_query("which drink does the user prefer in the morning")
    coffee, deploy = local.embed_passages([SENTENCES[2], SENTENCES[3]])
    assert float(query.vector @ coffee) > float(query.vector @ deploy)


def test_dynamic_padding_gives_the_same_vectors_as_one_by_one_and_as_padding_to_128(
    float_reference: OnnxEmbedder,
) -> None:
    texts = SENTENCES * 5  # > one run batch, mixed lengths, one passage truncated at 128 tokens
    batched = float_reference.embed_passages(texts)
    one_by_one = np.vstack([float_reference.embed_passages([t]) for t in texts])
    # The shipped tokenizer.json, untouched, pads every input to 128 tokens.
    shipped = Tokenizer.from_file(str(local_model_files()[1]))
    padded_128 = np.vstack(
        [float_reference.run(shipped.encode_batch(texts[i : i + 8])) for i in range(0, len(texts), 8)]
    )
    assert len(shipped.encode(texts[0]).ids) == 128
    assert np.abs(batched - one_by_one).max() < 1e-5
    assert np.abs(batched - padded_128).max() < 1e-5


def test_int8_compute_vectors_do_not_depend_on_the_batch(
    local: OnnxEmbedder, float_reference: OnnxEmbedder
) -> None:
    texts = SENTENCES * 3
    batched = local.embed_passages(texts)
    one_by_one = np.vstack([local.embed_passages([t]) for t in texts])
    assert np.abs(batched - one_by_one).max() < 1e-6
    assert np.abs(local.embed_query(texts[1]).vector - batched[1]).max() < 1e-6
    cosines = (batched * float_reference.embed_passages(texts)).sum(axis=1)
    # The int8 model uses 7-bit weights (quantize.py), so its integer products cannot saturate and are
    # exact on every x86-64 CPU, VNNI or not: these cosines are the same on any machine up to float
    # rounding in the non-integer ops (far below 1e-3). Measured: min 0.970, mean 0.989. The margin
    # below covers that rounding and onnxruntime's choice of kernels across versions.
    assert cosines.min() > 0.95 and cosines.mean() > 0.98


def test_passage_order_is_kept_although_batches_are_sorted_by_length(local: OnnxEmbedder) -> None:
    texts = [SENTENCES[5], SENTENCES[0], SENTENCES[3]]
    together = local.embed_passages(texts)
    for row, text in enumerate(texts):
        assert np.abs(together[row] - local.embed_passages([text])[0]).max() < 1e-5


def test_unknown_share_is_high_for_chinese_and_low_for_english(local: OnnxEmbedder) -> None:
    assert local.embed_query("用户喜欢在早上喝黑咖啡，不加糖").unknown_share > 0.5
    assert local.embed_query("the user likes black coffee in the morning").unknown_share == 0.0
    mixed = local.embed_query("deploy 服务 with docker").unknown_share
    assert 0.0 < mixed < 0.6


def test_empty_query_has_nothing_known(local: OnnxEmbedder) -> None:
    assert local.embed_query("").unknown_share == 1.0


def test_no_passages_give_an_empty_matrix(local: OnnxEmbedder) -> None:
    assert local.embed_passages([]).shape == (0, LOCAL_DIMENSIONS)


def test_create_embedder_loads_once_per_settings(local: OnnxEmbedder) -> None:
    assert create_embedder(MINILM) is local
    assert create_embedder(EmbeddingSettings(model=LOCAL_MODEL_NAME, threads=1)) is not local


def test_local_provider_rejects_another_model_name() -> None:
    with pytest.raises(ConfigError, match="it offers all-MiniLM-L6-v2-int8"):
        create_embedder(EmbeddingSettings(model="bge-small"))
    with pytest.raises(ConfigError, match="it offers"):
        expected_identity(EmbeddingSettings(model="bge-small"))


def test_local_provider_rejects_other_dimensions() -> None:
    with pytest.raises(ConfigError, match="has 896"):
        create_embedder(EmbeddingSettings(dimensions=512))
    with pytest.raises(ConfigError, match="has 384"):
        create_embedder(EmbeddingSettings(model=LOCAL_MODEL_NAME, dimensions=512))


def test_the_default_local_embedder_holds_both_models(local: OnnxEmbedder) -> None:
    """Each half of a composite vector is one model's unit vector; the English half is MiniLM's own."""
    composite = create_embedder(EmbeddingSettings())
    assert composite.identity == EmbedderIdentity("local", "all-MiniLM-L6-v2-int8+use-m3-int8", 896)
    assert expected_identity(EmbeddingSettings()) == composite.identity
    rows = composite.embed_passages(SENTENCES[:3])
    assert unit_rows(rows[:, :384]) and unit_rows(rows[:, 384:])
    assert np.abs(rows[:, :384] - local.embed_passages(SENTENCES[:3])).max() < 1e-6
    query = composite.embed_query("用户喜欢在早上喝黑咖啡")
    assert query.unknown_share > 0.5 and unit_rows(query.vector[None, 384:])


# -- ONNX export directory ----------------------------------------------------------------------------------


def test_onnx_dir_with_mean_pooling_matches_the_packaged_model(
    model_dir: Path, float_reference: OnnxEmbedder
) -> None:
    embedder = create_embedder(EmbeddingSettings(provider="onnx", path=str(model_dir)))
    assert embedder.identity == EmbedderIdentity("onnx", str(model_dir.resolve()), 384)
    assert np.abs(embedder.embed_passages(SENTENCES) - float_reference.embed_passages(SENTENCES)).max() < 1e-5


def test_onnx_dir_cls_pooling_uses_the_first_token(model_dir: Path, local: OnnxEmbedder) -> None:
    embedder = create_embedder(EmbeddingSettings(provider="onnx", path=str(model_dir), pooling="cls"))
    vectors = embedder.embed_passages(SENTENCES[:3])
    assert unit_rows(vectors)
    session = load_session(model_dir / "model.onnx", threads=1)
    tokenizer = load_tokenizer(model_dir / "tokenizer.json", 128)
    for row, text in enumerate(SENTENCES[:3]):
        enc = tokenizer.encode(text)
        feed = {
            "input_ids": np.array([enc.ids], dtype=np.int64),
            "attention_mask": np.array([enc.attention_mask], dtype=np.int64),
            "token_type_ids": np.array([enc.type_ids], dtype=np.int64),
        }
        cls = session.run(None, feed)[0][0, 0]
        assert np.abs(vectors[row] - cls / np.linalg.norm(cls)).max() < 1e-5
    assert np.abs(vectors - local.embed_passages(SENTENCES[:3])).max() > 0.01


def test_onnx_dir_prefixes_are_prepended(model_dir: Path, float_reference: OnnxEmbedder) -> None:
    settings = EmbeddingSettings(
        provider="onnx", path=str(model_dir), query_prefix="query: ", passage_prefix="passage: "
    )
    embedder = create_embedder(settings)
    query = embedder.embed_query("black coffee")
    passages = embedder.embed_passages(["black coffee"])
    assert np.abs(query.vector - float_reference.embed_passages(["query: black coffee"])[0]).max() < 1e-5
    assert np.abs(passages[0] - float_reference.embed_passages(["passage: black coffee"])[0]).max() < 1e-5
    assert np.abs(query.vector - passages[0]).max() > 1e-3


def test_onnx_dir_that_does_not_exist_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a directory"):
        create_embedder(EmbeddingSettings(provider="onnx", path=str(tmp_path / "nowhere")))


def test_onnx_without_path_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="no path given"):
        create_embedder(EmbeddingSettings(provider="onnx"))


def test_onnx_dir_missing_tokenizer_is_a_config_error(model_dir: Path) -> None:
    (model_dir / "tokenizer.json").unlink()
    with pytest.raises(ConfigError, match=r"missing tokenizer\.json"):
        create_embedder(EmbeddingSettings(provider="onnx", path=str(model_dir)))


def test_onnx_dir_missing_model_is_a_config_error(model_dir: Path) -> None:
    (model_dir / "model.onnx").unlink()
    with pytest.raises(ConfigError, match=r"missing model\.onnx"):
        create_embedder(EmbeddingSettings(provider="onnx", path=str(model_dir)))


def test_onnx_dir_with_a_damaged_model_is_a_store_error(model_dir: Path) -> None:
    (model_dir / "model.onnx").unlink()
    (model_dir / "model.onnx").write_bytes(b"this is not a protobuf")
    with pytest.raises(StoreError, match="cannot load ONNX model"):
        create_embedder(EmbeddingSettings(provider="onnx", path=str(model_dir)))


def test_onnx_dir_with_a_damaged_tokenizer_is_a_store_error(model_dir: Path) -> None:
    (model_dir / "tokenizer.json").unlink()
    (model_dir / "tokenizer.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(StoreError, match="cannot load tokenizer"):
        create_embedder(EmbeddingSettings(provider="onnx", path=str(model_dir)))


def test_onnx_expected_identity_is_known_only_with_dimensions(model_dir: Path) -> None:
    assert expected_identity(EmbeddingSettings(provider="onnx", path=str(model_dir))) is None
    settings = EmbeddingSettings(provider="onnx", path=str(model_dir), dimensions=384)
    assert expected_identity(settings) == create_embedder(settings).identity


def test_onnx_dimensions_that_disagree_with_the_model_are_a_config_error(model_dir: Path) -> None:
    with pytest.raises(ConfigError, match="produces 384-dimensional"):
        create_embedder(EmbeddingSettings(provider="onnx", path=str(model_dir), dimensions=768))


# -- litellm (API) provider against the fake server -------------------------------------------------------

API_MODEL = "openai/text-embedding-3-small"


def api_settings(fake: FakeOpenAI, **overrides: object) -> EmbeddingSettings:
    return EmbeddingSettings.model_validate(
        {"provider": "litellm", "model": API_MODEL, "api_base": fake.url, **overrides}
    )


def test_litellm_embeddings_are_batched_by_batch_size(fake_openai: FakeOpenAI) -> None:
    texts = [f"note number {i} about coffee" for i in range(7)]
    embedder = create_embedder(api_settings(fake_openai, batch_size=3))
    vectors = embedder.embed_passages(texts)
    sizes = [len(r.body["input"]) for r in fake_openai.requests_to("/embeddings")]
    assert sizes == [3, 3, 1]
    assert vectors.shape == (7, fake_openai.dimensions) and unit_rows(vectors)
    expected = np.array([hashed_vector(t, fake_openai.dimensions) for t in texts], dtype=np.float32)
    assert np.abs(vectors - expected).max() < 1e-5  # same order as the input
    assert fake_openai.requests[0].headers["authorization"] == f"Bearer {os.environ['OPENAI_API_KEY']}"


def test_litellm_dimensions_are_requested_and_known_without_a_call(fake_openai: FakeOpenAI) -> None:
    settings = api_settings(fake_openai, dimensions=32)
    identity = expected_identity(settings)
    assert identity == EmbedderIdentity("litellm", API_MODEL, 32)
    embedder = create_embedder(settings)
    assert embedder.identity == identity and fake_openai.requests == []
    query = embedder.embed_query("coffee")
    assert query.vector.shape == (32,) and query.unknown_share == 0.0
    assert fake_openai.requests[0].body["dimensions"] == 32


def test_litellm_identity_without_dimensions_asks_the_model_once(fake_openai: FakeOpenAI) -> None:
    settings = api_settings(fake_openai)
    assert expected_identity(settings) is None
    embedder = create_embedder(settings)
    assert embedder.identity.dimensions == fake_openai.dimensions
    assert embedder.identity.dimensions == fake_openai.dimensions
    assert len(fake_openai.requests) == 1


def test_litellm_retries_after_rate_limits_and_succeeds(fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_next(2, status=429)
    embedder = LiteLLMEmbedder(api_settings(fake_openai, max_retries=3), retry_base_delay=0.001)
    vectors = embedder.embed_passages(["hello world"])
    assert vectors.shape == (1, fake_openai.dimensions)
    assert len(fake_openai.requests) == 3


def test_litellm_too_many_failures_raise_embedding_unavailable(fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_next(10, status=500)
    embedder = LiteLLMEmbedder(api_settings(fake_openai, max_retries=2), retry_base_delay=0.001)
    with pytest.raises(
        EmbeddingUnavailable, match=r"litellm/openai/text-embedding-3-small.*3 attempts"
    ) as err:
        embedder.embed_passages(["hello world"])
    assert "\n" not in err.value.message
    assert len(fake_openai.requests) == 3


def test_litellm_bad_request_is_not_retried(fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_next(1, status=400)
    embedder = LiteLLMEmbedder(api_settings(fake_openai, max_retries=5), retry_base_delay=0.001)
    with pytest.raises(EmbeddingUnavailable, match="HTTP 400"):
        embedder.embed_query("hello")
    assert len(fake_openai.requests) == 1


def test_litellm_unreachable_server_raises_embedding_unavailable() -> None:
    settings = EmbeddingSettings(
        provider="litellm", model=API_MODEL, api_base="http://127.0.0.1:9/v1", max_retries=1
    )
    with pytest.raises(EmbeddingUnavailable, match="unavailable"):
        LiteLLMEmbedder(settings, retry_base_delay=0.001).embed_passages(["hello"])


def test_litellm_without_model_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="model is required"):
        create_embedder(EmbeddingSettings(provider="litellm"))


# -- the gateway's chat completion --------------------------------------------------------------------------


def test_complete_returns_scripted_replies_in_order_then_the_default(fake_openai: FakeOpenAI) -> None:
    fake_openai.script_chat("first", "second")
    messages = [{"role": "user", "content": "hi"}]
    replies = [llm.complete("openai/gpt-4o-mini", messages, fake_openai.url) for _ in range(3)]
    assert replies == ["first", "second", fake_openai.default_reply]
    assert fake_openai.requests_to("/chat/completions")[0].body["messages"] == messages


def test_complete_retries_a_rate_limit(fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_next(1, status=429)
    fake_openai.script_chat("after retry")
    messages = [{"role": "user", "content": "hi"}]
    reply = llm.complete("openai/gpt-4o-mini", messages, fake_openai.url, base_delay=0.001)
    assert reply == "after retry" and len(fake_openai.requests) == 2


def test_litellm_prints_nothing_on_stdout_even_when_a_call_fails(fake_openai: FakeOpenAI) -> None:
    # stdout belongs to --json output: litellm must stay silent there, in success and in failure.
    fake_openai.fail_next(1, status=401)
    script = (
        "import sys\n"
        "from openclaw_cli.llm import calls as llm\n"
        "try:\n"
        "    llm.embed('openai/text-embedding-3-small', ['a'], sys.argv[1], max_retries=0)\n"
        "except llm.ModelUnavailable as exc:\n"
        "    print(exc.message, file=sys.stderr)\n"
        "llm.embed('openai/text-embedding-3-small', ['a'], sys.argv[1])\n"
        "llm.complete('openai/gpt-4o-mini', [{'role': 'user', 'content': 'hi'}], sys.argv[1])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, fake_openai.url], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert "HTTP 401" in proc.stderr
    assert len(fake_openai.requests) == 3
