"""Stored vectors in memory, for any engine: the warm copy of one vector table and its searches
(matrix.py), the sign-bit prefilter one leg at a time (leg_scan.py), int8 row scoring and picking the best
rows (row_scan.py), the int8 prefilter of float32 tables (int8_scan.py), the vectors' mean direction per
model (centroid.py), the stored vectors as an embedding cache (cache.py), and which rows a vector query may
return with its legs weighted (query.py), a turn's dot products kept for its second search (dot_memo.py),
and the vectors of texts this process lately wrote (written_passages.py). numpy loads only inside these
modules' functions' callers' paths.

May import (in memory/store/): embedder, layout, protocol, protocol_types, records, vector_codec,
sqlite.vec_chunks (the matrix reads a SQLite table's vec0 chunks directly).
"""
