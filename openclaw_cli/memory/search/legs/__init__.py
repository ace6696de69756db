"""The legs of a search, before fusion: the keyword side (lexical.py: terms and a lexical relevance), the
vector side (semantic.py: candidates by similarity and a similarity that knows which model to trust, with
query_memo.py's recent query vectors), word neighbours for a question in other words (neighbours.py,
with vocabulary.py telling real words from nonsense and word_warmup.py embedding a store's vocabulary
ahead), and model query expansion (expansion.py).

May import (in memory/search/): profiles, result.
"""
