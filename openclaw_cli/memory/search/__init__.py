"""Hybrid search (seed 000 §4): an ordered list of named steps (pipeline.PIPELINE). The legs (legs/): the
keyword leg (BM25 from the keyword index, lexical.py) and the vector leg (semantic.py, with the hubness
correction of store/vectors/centroid.py), word neighbours for a question put in other words
(neighbours.py, vocabulary.py, word_warmup.py), the query vectors of recent searches (query_memo.py) and
model query expansion (expansion.py: when a weak query is worth a model's phrasings and how their results
join the query's; the model is called from above). They are fused into one relevance in [0, 1]; the
hand-set stages of stages.py then read, in context_stages/, who a memory is about and where it was said
(about.py, dialogue.py) and what a question asks for (answer_type.py); floors, FSRS recall and an
optional reranker (rerank.py) finish it. Per-embedder parameters live in profiles.py, the request and
answer in result.py, one candidate in candidate.py, timings in timing.py, memories and transcripts in
one search in sources.py, a searcher for one store built in build.py, and explain/ says as data why each result ranks where it does (data.py) and as
the text every reader shows (lines.py: `memory search --explain`, the Control UI). Search reads the
store; it never writes except the hits it records through the store.

May import (in memory/): text, embedding, store.
Exports: pipeline (HybridSearcher, PIPELINE, STAGES, MAX_K, validate_request), result (SearchRequest,
SearchHit, SearchResult), profiles (SearchProfile, profile_for), rerank.create_reranker, explain.data,
legs.expansion (wanted, messages, parse_reply, fuse).
"""
