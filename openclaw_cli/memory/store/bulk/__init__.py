"""Bulk writes: the pipeline that embeds the coming chunks while earlier ones are validated, checked for
duplicates and written (load.py), and the one background thread that embeds while the caller writes,
shared with an import's batches (embedding_worker.py).

May import (in memory/store/): embedder, protocol, records, vectors.
"""
