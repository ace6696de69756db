"""Embedders: text to vectors, on this machine by default. The packaged MiniLM ONNX model and Google's USE-m3
converted to ONNX at first use (side by side in the default composite embedder), any local ONNX export, or
an API model through litellm; int8 quantisation; the models' names and how far each is trusted per
language. onnxruntime, tokenizers, numpy and litellm load inside the functions that need them.

May import (in memory/): text.
Exports: onnx_embedder (Embedder, EmbedderIdentity, QueryEmbedding, EmbeddingUnavailable), loader
(create_embedder, configured_identity, expected_identity), models (COMPOSITE, MINILM, USE_M3,
LANGUAGE_TRUST), use_m3 (needs_conversion, convert).
"""
