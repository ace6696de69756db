"""Rerankers: an API reranker behind the fake server, and ONNX cross-encoders run by onnxruntime.

The `onnx` package is not available, so the cross-encoder models are real ONNX files written here with a
minimal protobuf encoder: they count how often a chosen word piece occurs in the (query, document) pair.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from openclaw_cli.config.loading import RerankSettings
from openclaw_cli.core.errors import ConfigError, StoreError
from openclaw_cli.memory.embedding.onnx_embedder import load_tokenizer, local_model_files
from openclaw_cli.memory.search.rerank import (
    LiteLLMReranker,
    OnnxReranker,
    RerankUnavailable,
    create_reranker,
    scores_from_logits,
)
from tests import fake_openai as fake_server
from tests.fake_openai import FakeOpenAI, overlap_score

fake_openai = fake_server.fake_openai  # the fixture, visible to this module's tests

DOCUMENTS = [
    "The user drinks green tea in the evening.",
    "Coffee, black, no sugar: the user's morning coffee order.",
    "Deploy with docker compose.",
    "Buy coffee beans on Friday.",
]

# -- a minimal protobuf / ONNX writer ----------------------------------------------------------------------

FLOAT, INT64 = 1, 7  # onnx.TensorProto data types
ATTR_INT = 2  # onnx.AttributeProto.INT


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _bytes(field: int, value: bytes | str) -> bytes:
    data = value.encode() if isinstance(value, str) else value
    return _varint((field << 3) | 2) + _varint(len(data)) + data


def _value_info(name: str, elem_type: int, dims: list[int | str]) -> bytes:
    shape = b"".join(
        _bytes(1, _bytes(2, d) if isinstance(d, str) else _int(1, d)) for d in dims
    )  # TensorShapeProto.dim: dim_param (2) or dim_value (1)
    tensor_type = _int(1, elem_type) + _bytes(2, shape)
    return _bytes(1, name) + _bytes(2, _bytes(1, tensor_type))


def _node(op: str, inputs: list[str], outputs: list[str], **int_attrs: int) -> bytes:
    body = b"".join(_bytes(1, i) for i in inputs) + b"".join(_bytes(2, o) for o in outputs)
    body += _bytes(4, op)
    for name, value in int_attrs.items():
        body += _bytes(5, _bytes(1, name) + _int(3, value) + _int(20, ATTR_INT))
    return body


def _int64_tensor(name: str, values: list[int]) -> bytes:
    raw = struct.pack(f"<{len(values)}q", *values)
    return _int(1, len(values)) + _int(2, INT64) + _bytes(8, name) + _bytes(9, raw)


def counting_cross_encoder(path: Path, token_id: int, *, classes: int, with_type_ids: bool) -> None:
    """model.onnx scoring a pair by how often `token_id` occurs in it (two classes: [-count, count])."""
    nodes = [
        _node("Equal", ["input_ids", "wanted"], ["hits"]),
        _node("Cast", ["hits"], ["hits_f"], to=FLOAT),
        _node("ReduceSum", ["hits_f", "axes"], ["count" if classes == 2 else "logits"], keepdims=1),
    ]
    if classes == 2:
        nodes += [_node("Neg", ["count"], ["minus"]), _node("Concat", ["minus", "count"], ["logits"], axis=1)]
    inputs = [_value_info("input_ids", INT64, ["batch", "sequence"])]
    inputs.append(_value_info("attention_mask", INT64, ["batch", "sequence"]))
    if with_type_ids:
        inputs.append(_value_info("token_type_ids", INT64, ["batch", "sequence"]))
    graph = b"".join(_bytes(1, n) for n in nodes) + _bytes(2, "counting")
    graph += _bytes(5, _int64_tensor("wanted", [token_id])) + _bytes(5, _int64_tensor("axes", [1]))
    graph += b"".join(_bytes(11, i) for i in inputs)
    graph += _bytes(12, _value_info("logits", FLOAT, ["batch", classes]))
    model = _int(1, 8) + _bytes(8, _bytes(1, "") + _int(2, 13)) + _bytes(7, graph)
    path.write_bytes(model)


def cross_encoder_dir(root: Path, *, classes: int, with_type_ids: bool = True) -> Path:
    tokenizer_path = local_model_files()[1]
    coffee = load_tokenizer(tokenizer_path, 16).token_to_id("coffee")
    assert coffee is not None
    root.mkdir()
    counting_cross_encoder(root / "model.onnx", coffee, classes=classes, with_type_ids=with_type_ids)
    (root / "tokenizer.json").symlink_to(tokenizer_path)
    return root


# -- ONNX cross-encoder ------------------------------------------------------------------------------------


@pytest.mark.parametrize("classes", [1, 2])
def test_onnx_reranker_scores_every_document_in_input_order(tmp_path: Path, classes: int) -> None:
    directory = cross_encoder_dir(tmp_path / f"ce{classes}", classes=classes)
    reranker = create_reranker(RerankSettings(provider="onnx", path=str(directory)))
    assert reranker is not None and reranker.name == f"onnx:{directory.resolve()}"
    scores = reranker.rerank("coffee", DOCUMENTS)
    # Each pair holds the query's "coffee" once plus the document's own occurrences.
    expected = [1.0, 3.0, 1.0, 2.0] if classes == 1 else [2.0, 6.0, 2.0, 4.0]
    assert scores == expected


def test_onnx_reranker_feeds_only_the_inputs_the_model_declares(tmp_path: Path) -> None:
    directory = cross_encoder_dir(tmp_path / "no-type-ids", classes=1, with_type_ids=False)
    assert OnnxReranker(str(directory)).rerank("coffee", DOCUMENTS[:2]) == [1.0, 3.0]


def test_onnx_reranker_handles_many_documents_and_none(tmp_path: Path) -> None:
    reranker = OnnxReranker(str(cross_encoder_dir(tmp_path / "ce", classes=1)))
    documents = [" ".join(["coffee"] * (i % 5)) or "tea" for i in range(40)]  # more than one batch
    assert reranker.rerank("tea", documents) == [float(i % 5) for i in range(40)]
    assert reranker.rerank("tea", []) == []


def test_onnx_reranker_rejects_an_embedding_model(tmp_path: Path) -> None:
    model, tokenizer = local_model_files()
    directory = tmp_path / "minilm"
    directory.mkdir()
    (directory / "model.onnx").symlink_to(model)
    (directory / "tokenizer.json").symlink_to(tokenizer)
    with pytest.raises(ConfigError, match=r"'last_hidden_state' has shape \['batch', 'sequence', 384\]"):
        create_reranker(RerankSettings(provider="onnx", path=str(directory)))


def test_onnx_reranker_missing_directory_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"memory\.search\.rerank\.path .*not a directory"):
        create_reranker(RerankSettings(provider="onnx", path=str(tmp_path / "absent")))


def test_onnx_reranker_missing_model_file_is_a_config_error(tmp_path: Path) -> None:
    directory = cross_encoder_dir(tmp_path / "ce", classes=1)
    (directory / "model.onnx").unlink()
    with pytest.raises(ConfigError, match=r"missing model\.onnx"):
        OnnxReranker(str(directory))


def test_onnx_reranker_without_path_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="no path given"):
        create_reranker(RerankSettings(provider="onnx"))


def test_onnx_reranker_damaged_model_is_a_store_error(tmp_path: Path) -> None:
    directory = cross_encoder_dir(tmp_path / "ce", classes=1)
    (directory / "model.onnx").write_bytes(b"\x08garbage")
    with pytest.raises(StoreError, match="cannot load ONNX model"):
        OnnxReranker(str(directory))


def test_scores_from_logits_shapes() -> None:
    import numpy as np

    assert scores_from_logits(np.array([0.5, -1.0]), "m").tolist() == [0.5, -1.0]
    assert scores_from_logits(np.array([[0.5], [2.0]]), "m").tolist() == [0.5, 2.0]
    assert scores_from_logits(np.array([[1.0, 3.0], [2.0, 0.0]]), "m").tolist() == [2.0, -2.0]
    with pytest.raises(ConfigError, match=r"shape \[2, 3\] is not cross-encoder logits"):
        scores_from_logits(np.zeros((2, 3)), "m")
    with pytest.raises(ConfigError, match="not cross-encoder logits"):
        scores_from_logits(np.zeros((2, 4, 384)), "m")


# -- provider none / litellm -------------------------------------------------------------------------------


def test_provider_none_gives_no_reranker() -> None:
    assert create_reranker(RerankSettings()) is None


def test_litellm_reranker_without_model_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="model is required"):
        create_reranker(RerankSettings(provider="litellm"))


@pytest.mark.parametrize("model", ["cohere/rerank-english-v3.0", "hosted_vllm/bge-reranker-v2-m3"])
def test_litellm_reranker_scores_in_input_order(fake_openai: FakeOpenAI, model: str) -> None:
    settings = RerankSettings(provider="litellm", model=model, api_base=fake_openai.url)
    reranker = create_reranker(settings)
    assert reranker is not None and reranker.name == f"litellm:{model}"
    query = "morning coffee order"
    scores = reranker.rerank(query, DOCUMENTS)
    assert scores == pytest.approx([overlap_score(query, d) for d in DOCUMENTS])
    (request,) = fake_openai.requests_to("/rerank")
    assert request.body["query"] == query and request.body["top_n"] == len(DOCUMENTS)


def test_litellm_reranker_retries_a_rate_limit(fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_next(1, status=429)
    settings = RerankSettings(
        provider="litellm", model="cohere/rerank-english-v3.0", api_base=fake_openai.url
    )
    scores = LiteLLMReranker(settings, retry_base_delay=0.001).rerank("coffee", DOCUMENTS[:2])
    assert scores == pytest.approx([0.0, 1.0]) and len(fake_openai.requests) == 2


def test_litellm_reranker_failure_raises_rerank_unavailable(fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_next(5, status=503)
    settings = RerankSettings(
        provider="litellm", model="cohere/rerank-english-v3.0", api_base=fake_openai.url
    )
    with pytest.raises(RerankUnavailable, match="litellm:cohere/rerank-english-v3.0 unavailable"):
        LiteLLMReranker(settings, retry_base_delay=0.001).rerank("coffee", DOCUMENTS)
    assert len(fake_openai.requests) == 3


def test_litellm_reranker_with_no_documents_makes_no_request(fake_openai: FakeOpenAI) -> None:
    settings = RerankSettings(
        provider="litellm", model="cohere/rerank-english-v3.0", api_base=fake_openai.url
    )
    assert LiteLLMReranker(settings).rerank("coffee", []) == []
    assert fake_openai.requests == []


def test_litellm_reranker_ranks_documents_the_api_left_out_below_all_others(fake_openai: FakeOpenAI) -> None:
    fake_openai.rerank_limit = 2
    settings = RerankSettings(
        provider="litellm", model="cohere/rerank-english-v3.0", api_base=fake_openai.url
    )
    scores = LiteLLMReranker(settings).rerank("coffee order", DOCUMENTS)
    assert scores[1] == pytest.approx(1.0) and scores[3] == pytest.approx(0.5)
    assert scores[0] == scores[2] == pytest.approx(-0.5)
