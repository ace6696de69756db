"""Hybrid search (seed 000 §4): an ordered list of named steps (pipeline.PIPELINE). The keyword leg (BM25
from the keyword index, lexical.py) and the vector leg (semantic.py, with the hubness correction of
centroid.py) are fused into one relevance in [0, 1]; the hand-set stages of stages.py then read who a
memory is about (subject.py), where it was said (dialogue.py), what a question asks for (answer_type.py);
floors, FSRS recall and an optional reranker finish it. Per-embedder parameters live in profiles.py, and
explain.py says as data why each result ranks where it does (explain_lines.py as the text every
reader shows: `memory search --explain`, the Control UI); expansion.py decides when a weak query is
worth a model's phrasings and how their results join the query's (the model is called from above). Search
reads the store; it never writes except the hits it records through the store.

May import (in memory/): text, embedding, store.
Exports: pipeline (HybridSearcher, PIPELINE, STAGES, MAX_K, validate_request), result (SearchRequest,
SearchHit, SearchResult), profiles (SearchProfile, profile_for), rerank.create_reranker, explain,
expansion (wanted, messages, parse_reply, fuse).
"""
