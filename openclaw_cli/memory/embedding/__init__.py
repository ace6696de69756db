"""Embedders: text to vectors, on this machine by default. The packaged MiniLM ONNX model and Google's USE-m3
converted to ONNX at first use (side by side in the default composite embedder), any local ONNX export, or
an API model through litellm; int8 quantisation. onnxruntime, tokenizers, numpy and litellm load inside
the functions that need them. USE-m3's modules are in use_m3/.

May import (in memory/): text, store (the embedder types and the stored vector's layout live there).
Exports: onnx_embedder (the ONNX embedder; it re-exports store/embedder.py's Embedder, EmbedderIdentity,
QueryEmbedding, EmbeddingUnavailable), loader (create_embedder, preload, model_cache_dir, configured_identity, expected_identity),
deferred (DeferredEmbedder, model_needs_preparing), use_m3.model (needs_conversion, convert).
"""
